"""How long this process's threads waited for a CPU: what other processes add to a timing.

A timed run is wall time. On a machine doing other work a thread that is ready to run
(a worker of IREE's `local-task` device, or the thread waiting on a fence) may wait for a
core while another process holds it; the run then takes longer by up to that wait, and
says nothing about the variant. The kernel counts that wait per thread (the second field
of `/proc/self/task/<tid>/schedstat`, nanoseconds runnable but not running); the sum over
the process's threads before and after a run tells whether the run was held up
(`disturbed`). Measured on a 2-core machine with two busy processes: runs of a 600 us
matmul whose threads waited 0-20 us took 590-690 us, those that waited 2-11 ms took
3.2-11.6 ms.

Where the kernel does not count it (not Linux, or without scheduler statistics), the
wait reads as 0 and every run counts as undisturbed: the behaviour of a plain clock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

TASKS = "/proc/self/task"
RESCAN_EVERY = 256
"""Reads between two listings of the process's threads (IREE starts its workers when a
device is created; a thread that ended is dropped when its file fails to read)."""

DISTURBED_SHARE = 0.10
"""A run whose threads waited for a CPU longer than this share of its time..."""
DISTURBED_FLOOR_NS = 20_000
"""...and longer than this (waking a sleeping worker waits a few microseconds on an
idle machine: not a disturbance) was held up by other processes."""


class RunQueueWait:
    """Cumulative nanoseconds this process's threads have waited for a CPU (`read`)."""

    def __init__(self, tasks: str = TASKS):
        self._tasks = tasks
        self._files: dict[str, int] = {}
        self._reads = 0
        self.available = self._scan() and self._sum() is not None

    def _scan(self) -> bool:
        """Open the statistics file of every thread not yet open; whether any is."""
        try:
            names = os.listdir(self._tasks)
        except OSError:
            return False
        for name in names:
            if name not in self._files:
                try:
                    self._files[name] = os.open(f"{self._tasks}/{name}/schedstat", os.O_RDONLY)
                except OSError:
                    continue
        return bool(self._files)

    def _sum(self) -> int | None:
        total = 0
        for name, fd in list(self._files.items()):
            try:
                total += int(os.pread(fd, 96, 0).split()[1])
            except (OSError, IndexError, ValueError):
                os.close(fd)
                del self._files[name]
        return total if self._files else None

    def read(self) -> int:
        """The threads' total wait so far (0 where it is not counted)."""
        if not self.available:
            return 0
        self._reads += 1
        if self._reads % RESCAN_EVERY == 0:
            self._scan()
        return self._sum() or 0

    def close(self) -> None:
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()
        self.available = False


def disturbed(elapsed_ns: float, waited_ns: float) -> bool:
    """Whether a run of `elapsed_ns` whose threads waited `waited_ns` for a CPU was held
    up by other processes (`DISTURBED_SHARE`, `DISTURBED_FLOOR_NS`)."""
    return waited_ns > max(DISTURBED_FLOOR_NS, DISTURBED_SHARE * elapsed_ns)


class StampedClock:
    """A clock that also notes the run-queue wait at each reading, so that a time taken
    as the difference of two readings can be told its wait (`waited`). `clock` and `wait`
    are injectable (a test's clock, a burst)."""

    def __init__(
        self,
        clock: Callable[[], int] = time.perf_counter_ns,
        wait: Callable[[], int] | None = None,
        keep: int = 8,
    ):
        self._clock = clock
        self._wait = wait if wait is not None else RunQueueWait().read
        self._stamps: list[tuple[int, int]] = []
        self._keep = keep

    def now(self) -> int:
        stamp = (self._clock(), self._wait())
        self._stamps.append(stamp)
        if len(self._stamps) > self._keep:
            del self._stamps[0]
        return stamp[0]

    def waited(self, elapsed_ns: int) -> int:
        """The wait between the latest reading and the one `elapsed_ns` before it (0 when
        no reading was taken then)."""
        if not self._stamps:
            return 0
        end, end_wait = self._stamps[-1]
        for at, wait in reversed(self._stamps):
            if at == end - elapsed_ns:
                return max(0, end_wait - wait)
        return 0
