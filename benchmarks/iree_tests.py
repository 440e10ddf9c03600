"""Fidelity on IREE's own IR tests: how many come back unchanged through the project.

    python -m benchmarks.iree_tests IREE_SOURCE_DIR [--json OUT]

IREE_SOURCE_DIR is a checkout of iree-org/iree. Every `.mlir` file under
`compiler/src/iree/compiler/Dialect/{Flow,HAL,Util,Stream}/IR/test/` is split on `// -----`;
each chunk that stock `iree-opt` accepts is parsed by the project (`parse_module`) and
printed back (`print_module`). A chunk is faithful when `iree-opt` of the project's print
equals `iree-opt` of the chunk. The files are not part of this repository; the figure and
the list of chunks that are not faithful go to docs/interop.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DIALECTS = ("Flow", "HAL", "Util", "Stream")
IREE_OPT = str(Path(sys.executable).parent / "iree-opt")


def chunks(root: Path) -> list[tuple[str, int, str]]:
    """(file, chunk index, text) of every test chunk."""
    out = []
    for dialect in DIALECTS:
        folder = root / "compiler/src/iree/compiler/Dialect" / dialect / "IR/test"
        for path in sorted(folder.glob("*.mlir")):
            parts = path.read_text().split("// -----")
            for index, text in enumerate(parts):
                out.append((str(path.relative_to(root)), index, text))
    return out


def iree_opt(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IREE_OPT, "-"], input=text, capture_output=True, text=True, check=False)


def check(item: tuple[str, int, str]) -> dict:
    from autotune_dialect import DiagnosticError, parse_module, print_module

    name, index, text = item
    expected = iree_opt(text)
    result = {"file": name, "chunk": index}
    if expected.returncode != 0:
        return {**result, "status": "rejected by iree-opt"}
    try:
        printed = print_module(parse_module(text, f"{name}#{index}"))
    except DiagnosticError as err:
        return {**result, "status": "refused", "reason": err.render().split("\n")[0]}
    except Exception:  # noqa: BLE001 - a traceback is what this measures
        return {**result, "status": "traceback", "reason": traceback.format_exc(limit=3)}
    got = iree_opt(printed)
    if got.returncode != 0:
        return {**result, "status": "print rejected", "reason": got.stderr.split("\n")[0]}
    if got.stdout != expected.stdout:
        return {**result, "status": "differs"}
    return {**result, "status": "faithful"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("iree_source", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    items = chunks(args.iree_source)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(check, items))
    accepted = [r for r in results if r["status"] != "rejected by iree-opt"]
    faithful = [r for r in accepted if r["status"] == "faithful"]
    print(
        f"{len(items)} chunks, {len(accepted)} accepted by iree-opt, {len(faithful)} faithful "
        f"({100 * len(faithful) / max(1, len(accepted)):.1f}%)"
    )
    for r in accepted:
        if r["status"] != "faithful":
            print(f"  {r['file']}#{r['chunk']}: {r['status']}: {r.get('reason', '')}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
