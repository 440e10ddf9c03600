"""How long this process's threads waited for a CPU held by another process: what other
processes add to a timing.

A timed run is wall time. On a machine doing other work a thread that is ready to run
(a worker of IREE's `local-task` device, or the thread waiting on a fence) may wait for a
core while another process holds it; the run then takes longer by up to that wait, and
says nothing about the variant. The kernel counts, per thread, the time it ran and the
time it was ready but waited (`/proc/self/task/<tid>/schedstat`, nanoseconds). Summed over
the process's threads before and after a run (`ThreadClocks`), they tell whether the run
was held up (`held_up`, `disturbed`): its threads waited, and while they did the cores
were not all running this process's threads (a thread of this process may also wait for
one of its own: three threads on two cores, on an idle machine, is no disturbance).
Measured on a 2-core machine with two busy processes: runs of a 600 us matmul whose
threads waited 0-20 us took 590-690 us, those that waited 2-11 ms took 3.2-11.6 ms.

Where the kernel does not count it (not Linux, or without scheduler statistics), nothing
reads as waited and every run counts as undisturbed: the behaviour of a plain clock.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable

TASKS = "/proc/self/task"
RESCAN_EVERY = 256
"""Reads between two listings of the process's threads (IREE starts its workers when a
device is created; a thread that ended is dropped when its file fails to read)."""

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
"""The cores this process may run on."""
OWN_SHARE = 0.75
"""A run whose threads ran for less than this share of its cores' time while they waited
for a CPU left cores to other processes (`held_up`)."""

DISTURBED_SHARE = 0.25
"""A run whose threads waited for a CPU held by others longer than this share of its
time... (a model's call of tens of dispatches waits 10-15% of its time on an idle machine
waking its workers: no disturbance; a run that another process held up waited 50-150%)"""
DISTURBED_FLOOR_NS = 100_000
"""...and longer than this was held up by other processes. Waking sleeping workers waits
tens of microseconds on an idle virtual machine (a short dispatch's timed runs fall in two
modes, its workers awake or woken: 25 or 75-85 us on a 2-core `local-task`); a run that
another process held up waited for its time slice, milliseconds."""


Reading = tuple[int, int]
"""This process's threads' total time (ran, waited for a CPU) so far, in nanoseconds."""


class ThreadClocks:
    """This process's threads' run and wait times, summed (`read`). One per process
    (`thread_clocks`): it keeps a file open per thread; a forked child opens its own."""

    def __init__(self, tasks: str = TASKS):
        self._tasks = tasks
        self._files: dict[str, int] = {}
        self._reads = 0
        self._pid = os.getpid()
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

    def _sum(self) -> Reading | None:
        ran = waited = 0
        for name, fd in list(self._files.items()):
            try:
                fields = os.pread(fd, 96, 0).split()
                ran, waited = ran + int(fields[0]), waited + int(fields[1])
            except (OSError, IndexError, ValueError):
                os.close(fd)
                del self._files[name]
        return (ran, waited) if self._files else None

    def read(self) -> Reading:
        """The threads' times so far ((0, 0) where they are not counted)."""
        if not self.available:
            return (0, 0)
        if os.getpid() != self._pid:  # a forked child: its parent's threads' files
            for fd in self._files.values():
                os.close(fd)
            self._files.clear()
            self._pid = os.getpid()
            self._scan()
        self._reads += 1
        if self._reads % RESCAN_EVERY == 0:
            self._scan()
        return self._sum() or (0, 0)


@functools.cache
def thread_clocks() -> ThreadClocks:
    """This process's `ThreadClocks`."""
    return ThreadClocks()


def held_up(elapsed_ns: float, before: Reading, after: Reading, cores: int = CORES) -> int:
    """The time this process's threads waited for a CPU during a run of `elapsed_ns`
    between readings `before` and `after`, where other processes held the cores meanwhile
    (the threads ran for less than `OWN_SHARE` of the cores' time); 0 where they waited
    for each other only."""
    ran, waited = after[0] - before[0], after[1] - before[1]
    return max(0, waited) if ran < OWN_SHARE * cores * elapsed_ns else 0


def disturbed(elapsed_ns: float, waited_ns: float) -> bool:
    """Whether a run of `elapsed_ns` whose threads waited `waited_ns` for a CPU was held
    up by other processes (`DISTURBED_SHARE`, `DISTURBED_FLOOR_NS`)."""
    return waited_ns > max(DISTURBED_FLOOR_NS, DISTURBED_SHARE * elapsed_ns)


class StampedClock:
    """A clock that also notes the threads' times at each reading, so that a time taken
    as the difference of two readings can be told how long other processes held it up
    (`waited`). `clock` and `threads` (`ThreadClocks.read`) are injectable (a test's
    clock, a burst)."""

    def __init__(
        self,
        clock: Callable[[], int] = time.perf_counter_ns,
        threads: Callable[[], Reading] | None = None,
        keep: int = 8,
    ):
        self._clock = clock
        self._threads = threads if threads is not None else thread_clocks().read
        self._stamps: list[tuple[int, Reading]] = []
        self._keep = keep

    def now(self) -> int:
        stamp = (self._clock(), self._threads())
        self._stamps.append(stamp)
        if len(self._stamps) > self._keep:
            del self._stamps[0]
        return stamp[0]

    def waited(self, elapsed_ns: int) -> int:
        """How long other processes held up the threads between the latest reading and
        the one `elapsed_ns` before it (`held_up`; 0 when no reading was taken then)."""
        if not self._stamps:
            return 0
        end, after = self._stamps[-1]
        for at, before in reversed(self._stamps):
            if at == end - elapsed_ns:
                return held_up(elapsed_ns, before, after)
        return 0
