"""How steady the machine is while a model is timed, and what a side-by-side timing can
resolve.

A timing of two builds runs them in rounds (one call of each, the order alternating) and
compares them round by round: the ratio of the two calls of a round, whose median over the
rounds is the estimate and whose order statistics give its confidence interval (no
assumption on the noise's shape: a burst that slows one call of a round moves one ratio,
not the median). A call during which the process's threads waited for a CPU held by
another process (`autotune_runtime.run_queue`) is taken again, up to `RETRIES` times, so
that a round compares calls the machine left alone; the share of calls held up, the
spread of the rounds' ratios and the run queue are kept as the machine's steadiness.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from autotune_runtime.run_queue import CORES, Reading, disturbed, held_up, thread_clocks

T = TypeVar("T")

RETRIES = 8
"""Further calls a round makes of a build whose call was held up. Beside two busy
processes on two cores about 4 calls in 5 are: after 8 more, about 1 call in 7 is still one
held up."""
UNSTEADY_HELD_UP = 0.40
"""A timing whose calls were held up this often (their threads waited for a CPU, while
the cores ran others)..."""
UNSTEADY_SPREAD = 0.25
"""...or whose rounds' ratios spread (the interquartile range over the median) this much
was taken on an unsteady machine. Measured on a 2-core machine, a model's timing: idle,
14-24% of calls held up (waking workers on idle virtual CPUs, a preemption by a kernel
thread) and ratios spread 11-14%; beside 2 busy processes, 75-87% and 67-147%."""
CONFIDENCE = 0.95
EARLY_CONFIDENCE = 0.99
"""The confidence of the interval that a look before a timing's budget is spent reads
(`_timed_enough`, `bench`'s settled dispatches): a timing looked at again and again would
otherwise stop on a chance excursion of its 95% interval more often than one time in
twenty."""
LOOK_EVERY = 8
"""Rounds between two such looks."""


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """A distribution-free confidence interval of the median of `values`: the order
    statistics k and n-1-k, k from the binomial's normal approximation (at least the
    extremes)."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return (math.inf, math.inf)
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2.0)
    k = max(0, math.floor((n - 1 - z * math.sqrt(n)) / 2.0))
    return ordered[k], ordered[n - 1 - k]


def relative_spread(values: Sequence[float]) -> float:
    """The interquartile range over the median (0 with fewer than 4 values)."""
    if len(values) < 4:
        return 0.0
    q1, median, q3 = statistics.quantiles(values, n=4)
    return (q3 - q1) / median if median > 0 else 0.0


def runnable_processes() -> int:
    """Tasks (threads) runnable on the machine now, this process's own left out (from
    `/proc/loadavg` and this process's threads' states; 0 where they cannot be read)."""
    try:
        with open("/proc/loadavg") as f:
            everyone = int(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return 0
    return max(0, everyone - _own_running())


def _own_running() -> int:
    """This process's threads that are running or ready to run now."""
    running = 0
    try:
        names = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for name in names:
        try:
            with open(f"/proc/self/task/{name}/stat") as f:
                running += f.read().rpartition(")")[2].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return running


def cpu_ticks() -> tuple[int, int]:
    """The machine's CPU time so far in clock ticks: (stolen by the hypervisor, all),
    from `/proc/stat` ((0, 0) where it cannot be read)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


@dataclass
class MachineLoad:
    """The machine around a piece of work: the other tasks runnable when it began, and the
    share of CPU time the hypervisor took for other machines while it ran (steal)."""

    cores: int
    runnable_at_start: int
    steal: float = 0.0

    @property
    def busy(self) -> bool:
        """Other tasks were ready to run on at least as many cores as there are."""
        return self.runnable_at_start >= self.cores

    def words(self) -> str:
        state = "busy" if self.busy else "quiet"
        return (
            f"machine at the start: {state}, {self.runnable_at_start} other runnable tasks "
            f"on {self.cores} cores; CPU time stolen by the hypervisor while tuning "
            f"{self.steal:.1%}"
        )


def watch_machine(work: Callable[[], T]) -> tuple[T, MachineLoad]:
    """Run `work`, and say what the machine was like around it."""
    load = MachineLoad(CORES, runnable_processes())
    stolen, total = cpu_ticks()
    result = work()
    stolen_after, total_after = cpu_ticks()
    if total_after > total:
        load.steal = (stolen_after - stolen) / (total_after - total)
    return result, load


@dataclass(frozen=True)
class Comparison:
    """One build's time per call over another's, timed side by side in a few fresh loads:
    each load's median ratio (`loads`), and the confidence interval of the median over the
    rounds of every load (`interval`). A build is shown faster only where both say so:
    every load (what differs between two loads of one build, its memory's layout, does not
    average out within one: a build measured 1.01 and 1.35 of the same stock build a minute
    apart) and the interval (a median below 1 whose interval reaches 1 is the rounds'
    noise: BART's option sets, 1.021, 0.998 and 0.819 of each other in three loads, the
    second then taken on its median)."""

    loads: list[float]
    interval: tuple[float, float]

    @classmethod
    def of_rounds(cls, loads: Sequence[float], rounds: Sequence[float]) -> Comparison:
        """The comparison of loads whose medians are `loads` and whose rounds' ratios,
        every load's together, are `rounds`."""
        return cls(list(loads), median_interval(rounds))

    @property
    def median(self) -> float:
        """The median load's ratio (inf: no load)."""
        return statistics.median(self.loads) if self.loads else math.inf

    def below(self, bound: float) -> bool:
        """Whether every load and the interval's upper end are below `bound`."""
        return bool(self.loads) and max(self.loads) < bound and self.interval[1] < bound

    def may_exceed(self, bound: float) -> bool:
        """Whether the median load or the interval's upper end is above `bound`."""
        return not self.loads or self.median > bound or self.interval[1] > bound

    def words(self) -> str:
        """`0.950x (median of 3 fresh loads: 0.940, 0.950, 0.960; 95% interval
        0.930-0.970)`."""
        each = ", ".join(f"{r:.3f}" for r in self.loads)
        low, high = self.interval
        return (
            f"{self.median:.3f}x (median of {len(self.loads)} fresh loads: {each}; "
            f"95% interval {low:.3f}-{high:.3f})"
        )


def call_left_alone(
    call: Callable[[], object],
    threads: Callable[[], Reading],
    clock: Callable[[], int] = time.perf_counter_ns,
) -> tuple[int, int]:
    """One call's time, and how many calls were held up on the way: a call during which
    other processes held up this one's threads (`threads`: `run_queue.ThreadClocks.read`)
    is made again, up to `RETRIES` times (the last is timed whatever it waited)."""
    calls_held_up = 0
    for _ in range(RETRIES + 1):
        before, begin = threads(), clock()
        call()
        elapsed = clock() - begin
        if not disturbed(elapsed, held_up(elapsed, before, threads())):
            break
        calls_held_up += 1
    return elapsed, calls_held_up


@dataclass
class Rounds:
    """Two builds' calls timed side by side, round by round (see the module docstring)."""

    reference_ns: list[int]
    other_ns: list[int]
    ratios: list[float]
    """Per round, the other build's call over the reference's."""
    calls: int = 0
    held_up: int = 0
    """Calls during which another process held a core this one waited for."""
    runnable: int = 0
    """The most other tasks runnable on the machine seen at a round's start."""

    @property
    def disturbed_share(self) -> float:
        return self.held_up / self.calls if self.calls else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return median_interval(self.ratios)

    @property
    def spread(self) -> float:
        """The rounds' ratios' interquartile range over their median."""
        return relative_spread(self.ratios)


def _timed_enough(rounds: Rounds, spent: float, budget_s: float, resolve: float | None) -> bool:
    """Whether a side-by-side timing that has run `spent` seconds has said what it is for:
    without `resolve`, its budget is spent; with it, its ratio's interval is clear of
    `resolve` once a third of the budget is spent (until the budget is, looked at every
    `LOOK_EVERY` rounds and by the `EARLY_CONFIDENCE` interval; then every round), or
    three times the budget is spent."""
    if resolve is None:
        return spent >= budget_s
    if spent >= 3 * budget_s:
        return True
    if spent < budget_s / 3:
        return False
    if spent < budget_s:
        if len(rounds.ratios) % LOOK_EVERY:
            return False
        low, high = median_interval(rounds.ratios, EARLY_CONFIDENCE)
    else:
        low, high = rounds.interval
    return not low < resolve < high


def time_rounds(
    reference: Callable[[], object],
    other: Callable[[], object],
    budget_s: float,
    min_rounds: int,
    resolve: float | None = None,
    clock: Callable[[], int] = time.perf_counter_ns,
    threads: Callable[[], Reading] | None = None,
) -> Rounds:
    """Call `reference` and `other` in rounds, the order alternating, for at least
    `min_rounds` rounds, until the timing has said what it is for (`_timed_enough`):
    `budget_s` seconds; where `resolve` is given, as soon as the ratio's interval is clear
    of it (a third of the budget at least), else on to three times the budget while the
    interval holds it (the timing cannot tell the builds apart there)."""
    threads = threads or thread_clocks().read
    rounds = Rounds([], [], [])

    def timed(call: Callable[[], object]) -> int:
        elapsed, calls_held_up = call_left_alone(call, threads, clock)
        rounds.calls += min(calls_held_up + 1, RETRIES + 1)
        rounds.held_up += calls_held_up
        return elapsed

    start = clock()
    while True:
        spent = (clock() - start) / 1e9
        if len(rounds.ratios) >= min_rounds and _timed_enough(rounds, spent, budget_s, resolve):
            break
        rounds.runnable = max(rounds.runnable, runnable_processes())
        pair = [reference, other] if len(rounds.ratios) % 2 == 0 else [other, reference]
        first, second = timed(pair[0]), timed(pair[1])
        ref_ns, other_ns = (first, second) if pair[0] is reference else (second, first)
        rounds.reference_ns.append(ref_ns)
        rounds.other_ns.append(other_ns)
        rounds.ratios.append(other_ns / ref_ns if ref_ns > 0 else math.inf)
    return rounds
