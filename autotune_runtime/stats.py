"""Measurements of a variant and the stop rule that decides when tuning may commit.

Statistic: the median of the kept samples (warm-up runs are discarded), with the minimum
and the spread (median absolute deviation) kept for reports. The standard error of the
median is estimated from the MAD (1.4826 * MAD * 1.2533 / sqrt(n)), with a floor of
`noise_floor` of the median so that a run of identical timings does not claim infinite
precision.

Stop rule: successive elimination. Each variant's median gets a two-sided confidence
interval at the configured confidence, Bonferroni-corrected for the number of comparisons
with the leader. A variant whose lower bound lies above the leader's upper bound is
eliminated and never run again. Tuning commits when only the leader is left (every variant
having reached `min_samples`), or when every remaining variant has `max_samples` (the lowest
median wins). A failed run counts as an infinite time, and a variant whose results disagree with the
reference variant's is rejected: either is eliminated at once and never chosen.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

_MAD_TO_SIGMA = 1.4826
_MEDIAN_EFFICIENCY = 1.2533  # standard error of the median / of the mean, normal data


@dataclass(frozen=True)
class StopRule:
    """When exploration may stop. Defaults suit kernels of microseconds to milliseconds."""

    warmup: int = 1
    min_samples: int = 3
    max_samples: int = 30
    confidence: float = 0.95
    noise_floor: float = 0.005

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.min_samples < 1 or self.max_samples < self.min_samples:
            raise ValueError(
                "need warmup >= 0 and 1 <= min_samples <= max_samples, got "
                f"warmup={self.warmup}, min_samples={self.min_samples}, "
                f"max_samples={self.max_samples}"
            )
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")

    def with_overrides(self, params: dict) -> StopRule:
        """This rule with the parameters that `params` names applied; a `max_samples`
        below the current `min_samples` lowers `min_samples` too (unless it is named)."""
        names = ("warmup", "min_samples", "max_samples", "confidence")
        known = {k: params[k] for k in names if k in params}
        if not known:
            return self
        merged = {**self.__dict__, **known}
        if "min_samples" not in known:
            merged["min_samples"] = min(merged["min_samples"], merged["max_samples"])
        return StopRule(**merged)

    def z(self, comparisons: int) -> float:
        """Normal quantile for a two-sided interval, Bonferroni over `comparisons`."""
        alpha = (1.0 - self.confidence) / max(1, comparisons)
        return statistics.NormalDist().inv_cdf(1.0 - alpha / 2.0)


@dataclass
class VariantStats:
    """Timings of one variant at one workload key, in nanoseconds."""

    runs: int = 0
    samples: list[float] = field(default_factory=list)
    failed: bool = False
    rejected: bool = False
    eliminated: bool = False

    def reject(self) -> None:
        """Its results disagree with the reference variant's: never choose it."""
        self.rejected = True
        self.eliminated = True

    def add(self, elapsed_ns: float, warmup: int) -> None:
        self.runs += 1
        if not math.isfinite(elapsed_ns) or elapsed_ns < 0:
            self.failed = True
            self.eliminated = True
        elif self.runs > warmup:
            self.samples.append(float(elapsed_ns))

    @property
    def median(self) -> float:
        if self.failed or self.rejected or not self.samples:
            return math.inf
        return statistics.median(self.samples)

    @property
    def minimum(self) -> float:
        return min(self.samples) if self.samples and not self.failed else math.inf

    @property
    def spread(self) -> float:
        """Median absolute deviation from the median."""
        if len(self.samples) < 2:
            return 0.0
        m = statistics.median(self.samples)
        return statistics.median(abs(s - m) for s in self.samples)

    def standard_error(self, noise_floor: float) -> float:
        n = len(self.samples)
        if n == 0 or self.failed:
            return math.inf
        se = _MAD_TO_SIGMA * self.spread * _MEDIAN_EFFICIENCY / math.sqrt(n)
        return max(se, noise_floor * self.median)

    def summary(self) -> dict:
        return {
            "runs": self.runs,
            "samples": len(self.samples),
            "median_ns": self.median,
            "min_ns": self.minimum,
            "spread_ns": self.spread,
            "failed": self.failed,
            "rejected": self.rejected,
            "eliminated": self.eliminated,
        }


def next_or_winner(
    rule: StopRule, variants: list[VariantStats], first: int = 0
) -> tuple[int | None, int | None]:
    """Apply the stop rule: (variant to run next, None) or (None, winner). Among variants
    with equally few runs, `first` (the reference) runs first."""
    active = [i for i, v in enumerate(variants) if not v.eliminated]
    if not active:
        return None, 0
    needed = rule.warmup + rule.min_samples
    short = [i for i in active if variants[i].runs < needed]
    if not short:
        _eliminate(rule, variants, active)
        active = [i for i in active if not variants[i].eliminated]
        if len(active) == 1:
            return None, active[0]
        full = rule.warmup + rule.max_samples
        short = [i for i in active if variants[i].runs < full]
        if not short:
            return None, min(active, key=lambda i: variants[i].median)
    return min(short, key=lambda i: (variants[i].runs, i != first, i)), None


def _eliminate(rule: StopRule, variants: list[VariantStats], active: list[int]) -> None:
    z = rule.z(len(variants) - 1)
    leader = min(active, key=lambda i: variants[i].median)
    lead = variants[leader]
    upper = lead.median + z * lead.standard_error(rule.noise_floor)
    for i in active:
        if i == leader:
            continue
        v = variants[i]
        if v.median - z * v.standard_error(rule.noise_floor) > upper:
            v.eliminated = True
