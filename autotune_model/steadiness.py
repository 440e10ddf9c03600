"""How steady the machine is while a model is timed, and what a side-by-side timing can
resolve.

A timing of two builds runs them in rounds (one call of each, the order alternating) and
compares them round by round: the ratio of the two calls of a round, whose median over the
rounds is the estimate and whose order statistics give its confidence interval (no
assumption on the noise's shape: a burst that slows one call of a round moves one ratio,
not the median). A call during which the process's threads waited for a CPU held by
another process (`autotune_runtime.run_queue`) is taken again, up to `RETRIES` times, so
that a round compares calls the machine left alone; the share of calls held up, the
spread of the reference's calls and the run queue are kept as the machine's steadiness.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from autotune_runtime.run_queue import RunQueueWait, disturbed

RETRIES = 3
"""Further calls a round makes of a build whose call was held up by another process."""
UNSTEADY_SHARE = 0.10
"""A timing whose calls were held up this often, or whose reference's calls spread (the
interquartile range over the median) this much, was taken on an unsteady machine (pyperf
warns at a standard deviation of 10% of the mean)."""
CONFIDENCE = 0.95


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
    """Processes runnable on the machine now, this one included (`/proc/loadavg`; 0
    where it cannot be read)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return 0


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


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
    """The most processes runnable on the machine seen at a round's start."""

    @property
    def disturbed_share(self) -> float:
        return self.held_up / self.calls if self.calls else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return median_interval(self.ratios)

    @property
    def spread(self) -> float:
        return relative_spread(self.reference_ns)


def time_rounds(
    reference: Callable[[], object],
    other: Callable[[], object],
    budget_s: float,
    min_rounds: int,
    resolve: float | None = None,
    clock: Callable[[], int] = time.perf_counter_ns,
    wait: Callable[[], int] | None = None,
) -> Rounds:
    """Call `reference` and `other` in rounds, the order alternating, until `min_rounds`
    rounds and `budget_s` seconds have passed; then, where `resolve` is given and the
    ratio's interval still holds it (the timing cannot tell the builds apart there), on to
    three times the budget."""
    wait = wait or RunQueueWait().read
    rounds = Rounds([], [], [])

    def timed(call: Callable[[], object]) -> int:
        for _ in range(RETRIES + 1):
            waited, begin = wait(), clock()
            call()
            elapsed = clock() - begin
            rounds.calls += 1
            if not disturbed(elapsed, wait() - waited):
                return elapsed
            rounds.held_up += 1
        return elapsed

    start = clock()
    while True:
        spent = (clock() - start) / 1e9
        done = len(rounds.ratios) >= min_rounds and spent >= budget_s
        if done and (resolve is None or spent >= 3 * budget_s):
            break
        if done:
            low, high = rounds.interval
            if not low < resolve < high:
                break
        rounds.runnable = max(rounds.runnable, runnable_processes())
        pair = [reference, other] if len(rounds.ratios) % 2 == 0 else [other, reference]
        first, second = timed(pair[0]), timed(pair[1])
        ref_ns, other_ns = (first, second) if pair[0] is reference else (second, first)
        rounds.reference_ns.append(ref_ns)
        rounds.other_ns.append(other_ns)
        rounds.ratios.append(other_ns / ref_ns if ref_ns > 0 else math.inf)
    return rounds
