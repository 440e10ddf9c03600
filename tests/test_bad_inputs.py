"""Every file of `tests/bad_inputs/` through the installed `iree-autotune`: a located error,
exit status 1, no traceback, no output file (the header convention: tests/bad_inputs/README.md).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

IREE_AUTOTUNE = str(Path(sys.executable).parent / "iree-autotune")
BAD_INPUTS = Path(__file__).parent / "bad_inputs"
CASES = sorted(BAD_INPUTS.glob("*.mlir"))

HEADER = re.compile(r"// expected-error: (?:(\d+):(\d+)|(<compile>)): (.+)")
COMPILE_ARGS = re.compile(r"// compile-args: (.*)")


def header(path: Path) -> tuple[int | None, int | None, str, list[str]]:
    """(line, column, message, compile arguments); line and column are None for <compile>."""
    lines = path.read_bytes().split(b"\n", 2)
    match = HEADER.fullmatch(lines[0].decode())
    assert match, f"{path.name}: first line is not '// expected-error: LINE:COL: MESSAGE'"
    if match[3]:
        args = ["--target", "llvm-cpu"]
        if len(lines) > 1 and (extra := COMPILE_ARGS.fullmatch(lines[1].decode())):
            args = shlex.split(extra[1])
        return None, None, match[4], args
    return int(match[1]), int(match[2]), match[4], []


def test_corpus_is_large_enough():
    assert len(CASES) >= 40


def run_case(path: Path, out_dir: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    line, _, _, compile_args = header(path)
    out = out_dir / (path.stem + (".vmfb" if line is None else ".out.mlir"))
    if line is None:
        command = [IREE_AUTOTUNE, "compile", str(path), *compile_args, "-o", str(out)]
    else:
        command = [IREE_AUTOTUNE, "lower", str(path), "-o", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    return result, out


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[Path, tuple[subprocess.CompletedProcess[str], Path]]:
    """Every case run once, in parallel (each run is a fresh interpreter: ~1 s of imports)."""
    out_dir = tmp_path_factory.mktemp("bad_inputs")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        runs = pool.map(lambda p: run_case(p, out_dir), CASES)
        return dict(zip(CASES, runs, strict=True))


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_bad_input_is_reported_at_its_place(path, results):
    line, column, message, _ = header(path)
    result, out = results[path]
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    first = result.stderr.split("\n", 1)[0]
    prefix = "error: " if line is None else f"{path}:{line}:{column}: error: "
    assert first.startswith(prefix), first
    assert message.replace("{FILE}", str(path)) in first[len(prefix) :], first
    assert not out.exists()
