"""The installed `iree-autotune` console script, run as a user runs it, for the tests of its
commands: `cli` (output captured), `iree_autotune` (the caller may redirect it),
`assert_error` (exit 1, one `error:` line, no traceback) and a cache file's `decisions`.
The modules these tests run and a tuned cache are the `vmfbs` and `tuned_cache` fixtures of
conftest.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import IREE_AUTOTUNE

from autotune_runtime.cache import TuningCache

DEVICE = ("--device", "local-sync")
TOLERANT = "{tolerance = 10.0}"

SCALARS = """
func.func @echo(%a: i32, %b: f32, %c: tensor<2x3xf16>) -> (i32, f32, tensor<2x3xf16>, tensor<3xi8>) {
  %t = arith.constant dense<[-1, 0, 7]> : tensor<3xi8>
  return %a, %b, %c, %t : i32, f32, tensor<2x3xf16>, tensor<3xi8>
}
"""


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IREE_AUTOTUNE, *map(str, args)], capture_output=True, text=True, check=False
    )


def iree_autotune(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    """`iree-autotune ARGS`; stdout and stderr are captured unless `kwargs` say otherwise."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([IREE_AUTOTUNE, *args], text=True, **kwargs)


def assert_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit 1 with one `error: ...` line that says what went wrong, and no traceback."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def decisions(path: Path) -> set[tuple]:
    cache = TuningCache(path)
    try:
        return {
            (e.key.device, e.key.module, e.key.group, e.key.workload, e.variant)
            for e in cache.entries()
        }
    finally:
        cache.close()
