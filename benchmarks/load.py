"""A reproducible background load: busy processes beside the work being measured.

    with BusyLoad(2):      # two processes that only spin, as `python3 -c 'while True: pass'`
        ...                # tune or time here

What users' machines do while they tune (a CI runner, a shared server, a laptop): other
processes hold cores. Each busy process spins on the CPU without touching memory, so the
load is the same from run to run: what it takes from the work is cores, not bandwidth.
The processes end when the block ends, and by themselves if this process dies (each
checks its parent every few milliseconds), so no spinner outlives a killed benchmark or
test. Used by `make bench` (B13) and by the tests of decisions under load.
"""

from __future__ import annotations

import subprocess
import sys
import time
from types import TracebackType

from autotune_model.steadiness import runnable_processes

__all__ = ["BusyLoad", "runnable_processes"]

_SPIN = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(20000):
        pass
"""


class BusyLoad:
    """`processes` busy processes while the block runs (0: none, the idle machine)."""

    def __init__(self, processes: int = 2):
        if processes < 0:
            raise ValueError(f"processes must be >= 0, got {processes}")
        self.processes = processes
        self._children: list[subprocess.Popen] = []

    def __enter__(self) -> BusyLoad:
        for _ in range(self.processes):
            self._children.append(
                subprocess.Popen(
                    [sys.executable, "-c", _SPIN],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        if self._children:
            time.sleep(0.2)  # running, and the scheduler has seen them
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for child in self._children:
            child.kill()
        for child in self._children:
            child.wait()
        self._children.clear()

    @property
    def running(self) -> int:
        """The busy processes still running."""
        return sum(child.poll() is None for child in self._children)
