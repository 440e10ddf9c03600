"""What users must be able to trust of an interrupted command: ending `iree-autotune`
(SIGINT, SIGTERM, SIGKILL) ends the `iree-compile` it started and leaves no output.

One regression test per reproduced failure (docs/runtime.md and docs/lowering.md say what is
guaranteed)."""

from __future__ import annotations

import pytest


def _children(pid: int, name: str) -> list[int]:
    """Pids of the processes named `name` whose parent is `pid` (Linux /proc)."""
    from pathlib import Path

    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            comm = fields[0].split("(", 1)[1]
            ppid = int(fields[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and comm == name:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_ending_iree_autotune_ends_its_iree_compile(how, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from benchmarks.kernels import many_groups_module

    source = tmp_path / "many.mlir"
    source.write_text(many_groups_module(60, 4, per_function=10))
    tool = str(Path(sys.executable).parent / "iree-autotune")
    proc = subprocess.Popen(
        [tool, "compile", str(source), "-o", str(tmp_path / "m.vmfb")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    children: list[int] = []
    while not children and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        children = _children(proc.pid, "iree-compile")
    assert children, "iree-compile did not start"
    os.kill(proc.pid, getattr(signal, how))
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in children), f"iree-compile outlived iree-autotune ({how})"
    assert not (tmp_path / "m.vmfb").exists()
