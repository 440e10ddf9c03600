"""Measurements of a variant and the stop rule that decides when tuning may commit.

Statistic: the median of the kept samples (warm-up runs are discarded), with the minimum
and the spread (median absolute deviation) kept for reports. The standard error of the
median is estimated from the MAD (1.4826 * MAD * 1.2533 / sqrt(n)), with a floor of
`noise_floor` of the median so that a run of identical timings does not claim infinite
precision.

Stop rule: successive elimination. Each variant's median gets a two-sided confidence
interval at the configured confidence, Bonferroni-corrected for the number of comparisons
with the leader. A variant whose lower bound lies above the leader's upper bound is
eliminated and never run again, once its fastest sample is slower than the leader's too
(an incumbent's: its fast runs, below): a median above the leader's on runs that other
work held up unseen eliminates nothing, and sampling goes on. Tuning commits when only
the leader is left (every variant having reached `min_samples`), or when every remaining
variant has `max_samples` (the lowest median wins). A failed run counts as an infinite
time, and a variant whose results disagree with the reference variant's is rejected:
either is eliminated at once and never chosen.

Indifference: once every remaining variant has `min_samples`, tuning also commits to the
leader when no other variant can be more than `indifference` (default 3%) faster than it at
the same confidence: close variants are not sampled up to `max_samples` for a difference
that small.

Tie band: whenever the rule commits on medians (indifference, `max_samples`, or every
remaining variant within the band after `tie_samples` samples each, default 10), the
remaining variants within `tie_band` (default: the indifference) of the lowest median tie,
and the tie-break picks the reference among them, else the first in variant order: runs
on one machine then agree unless a variant is faster by more than the band. A group's
`expected` variant (offline tuning's winner) is the incumbent: it is never dropped early,
the interval test eliminates it only when it is slower than the leader by more than
`incumbent_band` (default 25%, at least the tie band), and only once it and the leader have
`incumbent_samples` timed samples each (default 10), and only when its fast runs (the
lower quartile of its samples, `FAST_QUANTILE`) are slower than the leader's by that band
too; while it is not eliminated it is the winner whenever the rule commits (a difference
smaller than what leaving the function's fast path costs does not cost the function its
fast path). On a multi-threaded CPU device a short dispatch's timed runs fall in two
modes, the workers awake (25 us) or woken (75-85 us), in proportions that differ from
variant to variant by chance: medians of ten to thirty samples differed by 2.5x between
variants whose fastest runs were within 6% (the tests' MobileNetV2, `local-task`).

Early drop: a variant far slower than the leader is not run until it has `min_samples`.
Once the leader has a timed sample, a variant is dropped when it has `early_drop_samples`
runs that no other process held up (see below), warm-up runs counting, at least one of
them a timed sample, and the fastest of them exceeds `early_drop` times the leader's
median. A variant is never dropped or eliminated on its warm-up (cold) runs alone (a cold
run on a busy machine took 10x a warm one, and dropped the fastest of three variants), nor
on one run (a hold-up that the threads' wait does not show, on a CI runner, put one timed
run of the fastest of three variants 8x apart above 2x the reference's, and it was
dropped): its warm-up run and its timed run must both be slow, or two timed runs.
Guarantees, with the defaults: a variant within 2x of the best is never dropped early (it
is eliminated, if at all, by the interval test on `min_samples` samples); a variant
dropped early costs `warmup` + 1 runs instead of `warmup + min_samples` where its warm-up
runs were not held up (+ 2 with `warmup = 0`); with `early_drop = inf` the rule is the
plain successive elimination.

Disturbed runs: a run during which the process's threads waited for a CPU held by another
process (`run_queue.disturbed`) says nothing about the variant: it is discounted (counted
in `discounted`, not a sample) while the variant has fewer than `max_samples` discounted
runs; past that the machine is busy all the time and its runs are samples as they come,
which early drop does not read (only the interval test on `min_samples` samples may
eliminate on them). So a burst on one variant's runs decides nothing, and on a machine
that is never quiet tuning still ends (tuning at load, `init`, loops until the commit as
`explicit` does, so its held-up runs are made again too). Measured: the tutorial's matmul
(three variants 1.6-2.7x apart) tuned online in 10 fresh processes beside two busy ones
on 2 cores chose as on the idle machine in 10 of 10 (before: 7 of 10, variants dropped
on a cold run).
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from autotune_contracts.stop_rule import StopRule

_MAD_TO_SIGMA = 1.4826
_MEDIAN_EFFICIENCY = 1.2533  # standard error of the median / of the mean, normal data
EXACT_SPREAD = 64
"""Up to this many samples, a variant's spread and fast runs are recomputed at every
sample."""
SPREAD_REFRESH = 1.0 / 32
"""Beyond that, once the samples have grown by this share since the last recomputation."""
FAST_QUANTILE = 0.25
"""The quantile of a variant's samples that the incumbent's elimination also compares."""


@dataclass
class VariantStats:
    """Timings of one variant at one workload key, in nanoseconds.

    Kept so that each new sample costs a time independent of how many there are: the
    median from two heaps (the lower half, negated, and the upper half), the minimum as it
    goes, and the spread and the fast runs (`fast_runs`) recomputed from every sample only
    while there are at most `EXACT_SPREAD` samples or once their count has grown by
    `SPREAD_REFRESH` since the last recomputation (so the stop rule's statistics lag by at
    most that share of the samples, and all recomputations together visit each sample a
    bounded number of times)."""

    runs: int = 0
    samples: list[float] = field(default_factory=list)
    """The timed runs, in the order they ran."""
    cold: list[float] = field(default_factory=list)
    """Times of the warm-up runs."""
    discounted: int = 0
    """Runs held up by other processes and left out of the samples (`add`)."""
    failed: bool = False
    rejected: bool = False
    eliminated: bool = False
    _lower: list[float] = field(default_factory=list, repr=False)
    _upper: list[float] = field(default_factory=list, repr=False)
    _minimum: float = field(default=math.inf, repr=False)
    _clean_samples: int = field(default=0, repr=False)
    """Timed samples no other process held up (early drop needs one)."""
    _clean_runs: int = field(default=0, repr=False)
    _clean_runs_minimum: float = field(default=math.inf, repr=False)
    """How many runs, warm-up runs too, no other process held up, and the fastest."""
    _median_value: float = field(default=math.inf, repr=False)
    """The median, kept up to date by `add` (inf with no sample, failed or rejected): the
    stop rule reads it many times per call."""
    _cold_minimum: float = field(default=math.inf, repr=False)
    _spread: float = field(default=0.0, repr=False)
    _spread_at: int = field(default=0, repr=False)
    _fast: float = field(default=math.inf, repr=False)
    _fast_at: int = field(default=0, repr=False)

    def reject(self) -> None:
        """Its results disagree with the reference variant's: never choose it."""
        self.rejected = True
        self.eliminated = True
        self._median_value = math.inf

    def add(
        self, elapsed_ns: float, warmup: int, disturbed: bool = False, discount: bool = True
    ) -> None:
        """A run's time: a warm-up run within the first `warmup`, a timed sample after.
        A `disturbed` run (held up by other processes) is discounted where `discount`
        allows, else a sample that early drop does not read."""
        self.runs += 1
        if not disturbed and math.isfinite(elapsed_ns):
            self._clean_runs += 1
            self._clean_runs_minimum = min(self._clean_runs_minimum, float(elapsed_ns))
        if not math.isfinite(elapsed_ns) or elapsed_ns < 0:
            self.failed = True
            self.eliminated = True
            self._median_value = math.inf
        elif self.runs > warmup and disturbed and discount:
            self.discounted += 1
        elif self.runs > warmup:
            value = float(elapsed_ns)
            self.samples.append(value)
            self._minimum = min(self._minimum, value)
            if not disturbed:
                self._clean_samples += 1
            # the lower half (negated: a max-heap) holds as many samples as the upper
            # half, or one more
            if self._lower and value > -self._lower[0]:
                heapq.heappush(self._upper, value)
            else:
                heapq.heappush(self._lower, -value)
            if len(self._lower) > len(self._upper) + 1:
                heapq.heappush(self._upper, -heapq.heappop(self._lower))
            elif len(self._upper) > len(self._lower):
                heapq.heappush(self._lower, -heapq.heappop(self._upper))
            if not (self.failed or self.rejected):
                self._median_value = self._median()
        else:
            self.cold.append(float(elapsed_ns))
            self._cold_minimum = min(self._cold_minimum, float(elapsed_ns))

    @property
    def median(self) -> float:
        return self._median_value

    def far_evidence(self) -> tuple[int, float]:
        """What early drop reads: how many runs no other process held up, warm-up runs
        too, and the fastest of them; (0, inf) until one of them is a timed sample (a
        variant is never judged on its warm-up runs alone)."""
        if self.failed or not self._clean_samples:
            return 0, math.inf
        return self._clean_runs, self._clean_runs_minimum

    @property
    def cold_minimum(self) -> float:
        """The fastest warm-up run (inf with none)."""
        return self._cold_minimum

    def _median(self) -> float:
        if len(self._lower) > len(self._upper):
            return -self._lower[0]
        return (-self._lower[0] + self._upper[0]) / 2

    @property
    def minimum(self) -> float:
        return self._minimum if self.samples and not self.failed else math.inf

    def fast_runs(self) -> float:
        """The `FAST_QUANTILE` of the timed samples (inf with none): the time of its runs
        that found the device ready."""
        if not self.samples or self.failed:
            return math.inf
        if self._due(self._fast_at):
            ordered = sorted(self.samples)
            self._fast = ordered[int(FAST_QUANTILE * (len(ordered) - 1))]
            self._fast_at = len(ordered)
        return self._fast

    @property
    def spread(self) -> float:
        """Median absolute deviation from the median (see the class docstring for when
        it is recomputed)."""
        n = len(self.samples)
        if n < 2:
            return 0.0
        if self._due(self._spread_at):
            m = self._median()
            self._spread = statistics.median(abs(s - m) for s in self.samples)
            self._spread_at = n
        return self._spread

    def _due(self, at: int) -> bool:
        """Whether a statistic last computed on `at` samples is computed again now."""
        n = len(self.samples)
        return n != at and (n <= EXACT_SPREAD or n >= at * (1.0 + SPREAD_REFRESH))

    def standard_error(self, noise_floor: float) -> float:
        n = len(self.samples)
        if n == 0 or self.failed:
            return math.inf
        return max(median_error(self.spread, n), noise_floor * self.median)

    def summary(self) -> dict:
        return {
            "runs": self.runs,
            "samples": len(self.samples),
            "discounted": self.discounted,
            "median_ns": self.median,
            "min_ns": self.minimum,
            "spread_ns": self.spread,
            "failed": self.failed,
            "rejected": self.rejected,
            "eliminated": self.eliminated,
        }


def median_error(spread: float, count: int) -> float:
    """The standard error of a median of `count` samples whose median absolute deviation
    is `spread` (normal data)."""
    return _MAD_TO_SIGMA * spread * _MEDIAN_EFFICIENCY / math.sqrt(count)


def next_or_winner(
    rule: StopRule,
    variants: list[VariantStats],
    first: int | Sequence[int] = 0,
    incumbent: int | None = None,
    lead: int | None = None,
) -> tuple[int | None, int | None]:
    """Apply the stop rule: (variant to run next, None) or (None, winner). Among variants
    with equally few runs, `first` (the reference; or the first of a preference order,
    such as the expected variant and then the reference) runs first; the preference
    order is the tie-break's (`tie_break`). The `incumbent` (a group's expected variant)
    is eliminated only when it is slower than the leader by more than the rule's
    `incumbent_band` (at least its tie band), and wins whenever the rule commits while it
    is not eliminated. `lead`, when given, runs first instead of `first` (the exploration
    order only: the tie-break keeps `first`)."""
    if lead is None:
        lead = first if isinstance(first, int) else first[0]
    _drop_far(rule, variants, incumbent)
    active = [i for i, v in enumerate(variants) if not v.eliminated]
    if not active:
        return None, 0
    short = [i for i in active if len(variants[i].samples) < rule.min_samples]
    if not short:
        pending = _eliminate(rule, variants, active, incumbent)
        active = [i for i in active if not variants[i].eliminated]
        if len(active) == 1:
            return None, active[0]
        full = rule.max_samples
        if (
            all(len(variants[i].samples) >= full for i in active)
            or (not pending and _indifferent(rule, variants, active) is not None)
            or (not pending and _tied_long(rule, variants, active))
        ):
            # the incumbent stands where the interval test has not shown it slower
            return None, incumbent if incumbent in active else tie_break(
                rule, variants, active, first
            )
        short = [i for i in active if len(variants[i].samples) < full]
    return min(short, key=lambda i: (variants[i].runs, i != lead, i)), None


def tied(rule: StopRule, variants: list[VariantStats], candidates: list[int]) -> list[int]:
    """The candidates whose medians are within the rule's tie band of the fastest's."""
    best = min(variants[i].median for i in candidates)
    return [i for i in candidates if variants[i].median <= best * (1.0 + rule.band)]


def tie_break(
    rule: StopRule,
    variants: list[VariantStats],
    candidates: list[int],
    first: int | Sequence[int],
) -> int:
    """The winner among `candidates`: of those within the tie band of the fastest (all of
    them when none has a median), `first` (the reference, or the first of a preference
    order that is), else the first in variant order. So variants within noise of each
    other give the same choice on every run."""
    band = tied(rule, variants, candidates) or candidates
    order = (first,) if isinstance(first, int) else tuple(first)
    return next((i for i in order if i in band), min(band))


def _intervals(
    rule: StopRule, variants: list[VariantStats], active: list[int]
) -> tuple[int, float, dict[int, float]]:
    """The leader among `active`, the upper bound of its median's interval, and every
    other active variant's lower bound (two-sided, Bonferroni over the comparisons)."""
    z = rule.z(len(variants) - 1)
    leader = min(active, key=lambda i: variants[i].median)
    lead = variants[leader]
    upper = lead.median + z * lead.standard_error(rule.noise_floor)
    lower = {
        i: variants[i].median - z * variants[i].standard_error(rule.noise_floor)
        for i in active
        if i != leader
    }
    return leader, upper, lower


def _tied_long(rule: StopRule, variants: list[VariantStats], active: list[int]) -> bool:
    """Whether every active variant has `tie_samples` timed samples and their medians are
    all within the tie band of the fastest's."""
    if any(len(variants[i].samples) < rule.tie_samples for i in active):
        return False
    return len(tied(rule, variants, active)) == len(active)


def _indifferent(rule: StopRule, variants: list[VariantStats], active: list[int]) -> int | None:
    """The leader, when no other variant can be more than `indifference` faster than it
    (at the rule's confidence): sampling close variants further is not worth it."""
    if rule.indifference <= 0.0:
        return None
    leader, upper, lower = _intervals(rule, variants, active)
    floor = upper * (1.0 - rule.indifference)
    return leader if all(bound >= floor for bound in lower.values()) else None


def _eliminate(
    rule: StopRule, variants: list[VariantStats], active: list[int], incumbent: int | None = None
) -> bool:
    """Eliminate the variants the interval test shows slower than the leader whose fastest
    sample is slower than the leader's too (the `incumbent`: whose fast runs,
    `fast_runs`, are slower than the leader's by its band). Returns whether it shows one
    slower by the medians only (a run of it was as fast as the leader's fastest: other
    work held up its other runs unseen, as on a busy machine, where two held-up samples of
    three put the fastest of three tile sizes above a variant 1.6x slower, and four of five
    the fastest above one 1.3x slower, whose lower quartile was its second fastest run),
    or shows the `incumbent` slower on fewer than `incumbent_samples` samples (its or the
    leader's): then it stays, and sampling goes on."""
    leader, upper, lower = _intervals(rule, variants, active)
    pending = False
    for i, bound in lower.items():
        margin = max(rule.band, rule.incumbent_band) if i == incumbent else 0.0
        if bound <= upper * (1.0 + margin):
            continue
        if i == incumbent:
            fast, leader_fast = variants[i].fast_runs(), variants[leader].fast_runs()
        else:
            fast, leader_fast = variants[i].minimum, variants[leader].minimum
        if fast <= leader_fast * (1.0 + margin) or (
            i == incumbent
            and min(len(variants[i].samples), len(variants[leader].samples))
            < rule.incumbent_samples
        ):
            pending = True
        else:
            variants[i].eliminated = True
    return pending


def cold_penalty(variants: list[VariantStats]) -> float | None:
    """The largest extra time of a cold run over the same variant's median, among the
    variants that have both (None when none has)."""
    penalties = [
        v.cold_minimum - v.median for v in variants if v.cold and v.samples and not v.failed
    ]
    return max([0.0, *penalties]) if penalties else None


def evidence(v: VariantStats, penalty: float | None) -> float | None:
    """A low estimate of a variant's warm time: its fastest timed sample, or its fastest
    cold run less twice `penalty`; None when it has neither."""
    if v.samples:
        return v.minimum
    if v.cold and penalty is not None:
        return v.cold_minimum - 2.0 * penalty
    return None


def _drop_far(rule: StopRule, variants: list[VariantStats], incumbent: int | None = None) -> None:
    """Early drop (see the module docstring): of a variant with a timed sample, never of
    the `incumbent`. (The leader's own fastest sample is below `early_drop` times its
    median: it is never dropped.)"""
    if not math.isfinite(rule.early_drop):
        return
    lead = min((v.median for v in variants if not v.eliminated), default=math.inf)
    if lead == math.inf:
        return
    limit = rule.early_drop * lead
    for i, v in enumerate(variants):
        runs, fastest = v.far_evidence()
        if (
            not v.eliminated
            and i != incumbent
            and runs >= rule.early_drop_samples
            and limit < fastest < math.inf
        ):
            v.eliminated = True
