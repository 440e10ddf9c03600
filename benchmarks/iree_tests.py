"""Fidelity on IREE's own IR tests: how many come back unchanged through the project.

    python -m benchmarks.iree_tests IREE_SOURCE_DIR [--json OUT] [--xdsl-opt]

IREE_SOURCE_DIR is a checkout of iree-org/iree. Every `.mlir` file under
`compiler/src/iree/compiler/Dialect/{Flow,HAL,Util,Stream}/IR/test/` is split on `// -----`;
each chunk that stock `iree-opt` accepts is parsed by the project (`parse_module`) and
printed back (`print_module`). A chunk is faithful when `iree-opt` of the project's print
equals `iree-opt` of the chunk. With `--xdsl-opt`, each chunk that `lower` takes goes
through `iree-autotune xdsl` and the stock `xdsl-opt` instead, and is faithful when it prints
what `lower --no-locations` prints. The files are not part of this repository; the figures
and the list of chunks that are not faithful go to docs/interop.md.
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
    from autotune_bridge import DiagnosticError, parse_module, print_module

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


def check_xdsl_route(item: tuple[str, int, str]) -> dict:
    """A chunk that `lower` takes through `iree-autotune xdsl` and the stock `xdsl-opt`
    (`-p autotune-to-iree{policy=static} -t iree`, in this process): "faithful" when the
    output equals `lower --no-locations --policy static`."""
    import tempfile

    from xdsl.xdsl_opt_main import xDSLOptMain

    from autotune_bridge import DiagnosticError, parse_module
    from autotune_bridge.ir import xdsl_text
    from lowering import lower_to_iree

    name, index, text = item
    result = {"file": name, "chunk": index}
    try:
        expected = lower_to_iree(text, policy="static", filename=name, locations=False)
    except DiagnosticError:
        return {**result, "status": "rejected by lower"}
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "x.mlir", Path(folder) / "out.mlir"
        source.write_text(xdsl_text(parse_module(text, name), locations=True))
        options = ["--allow-unregistered-dialect", "-t", "iree", "-o", str(out)]
        try:
            xDSLOptMain(args=[str(source), *options, "-p", "autotune-to-iree{policy=static}"]).run()
        except Exception:  # noqa: BLE001 - a failure of the route is what this measures
            return {**result, "status": "refused", "reason": traceback.format_exc(limit=2)}
        got = out.read_text()
    return {**result, "status": "faithful" if got == expected else "differs"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("iree_source", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--xdsl-opt",
        action="store_true",
        help="measure the stock xdsl-opt route against `lower` instead (chunks lower takes)",
    )
    args = parser.parse_args(argv)
    items = chunks(args.iree_source)
    if args.xdsl_opt:  # xDSL's parser state is per process: one chunk after another
        results = [check_xdsl_route(item) for item in items]
    else:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(check, items))
    rejected = ("rejected by iree-opt", "rejected by lower")
    accepted = [r for r in results if r["status"] not in rejected]
    faithful = [r for r in accepted if r["status"] == "faithful"]
    print(
        f"{len(items)} chunks, {len(accepted)} accepted by "
        f"{'lower' if args.xdsl_opt else 'iree-opt'}, {len(faithful)} faithful "
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
