"""The stop rule's parameters: what a group's attributes and a module's load options may
set, checked where they are given (the group's verifier) and used where tuning runs (the
runtime's `stats.py` applies the rule)."""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass

RULE_OPTIONS = (
    "warmup",
    "min_samples",
    "max_samples",
    "confidence",
    "early_drop",
    "indifference",
    "tie_band",
    "incumbent_band",
    "incumbent_samples",
    "confirm_samples",
    "tie_samples",
)
"""The stop-rule parameters a load option or a group attribute may set (a group sets those
its attributes name)."""


@dataclass(frozen=True)
class StopRule:
    """When exploration may stop. Defaults suit kernels of microseconds to milliseconds."""

    warmup: int = 1
    min_samples: int = 3
    max_samples: int = 30
    confidence: float = 0.95
    noise_floor: float = 0.005
    early_drop: float = 2.0
    indifference: float = 0.03
    tie_band: float | None = None
    """Variants whose medians are within this share of the fastest's tie (None: the
    `indifference`); the tie-break picks among them."""
    incumbent_band: float = 0.25
    """How much slower than the leader a group's expected variant (the incumbent) must be
    shown to be before it is eliminated (at least the tie band). Leaving it costs more
    than its own difference: the function's fast path, one execution region instead of one
    per site (20-30 us per site on a 2-core `local-task`, against dispatches of tens of us,
    where a 20% faster variant saves a few: a MobileNetV2 whose one group of nine left its
    expected variant for one 15-30% faster there took 1.30x the stock build's time, the
    loads where none left 0.83-0.91x)."""

    incumbent_samples: int = 10
    """Timed samples that the expected variant and the leader must each have before the
    interval test may eliminate the expected variant. Three samples of a dispatch of tens
    of us, each taken in an exploring call of a whole model on `local-task`, are not enough:
    on the Flax BERT a variant 6% faster offline measured 61-76 us against the reference's
    49-59 in 1 of 20 fresh loads, was eliminated, and the load lost its fast path (1.44x
    the stock build's time, the other loads 0.95-1.01x)."""

    confirm_samples: int = 1
    """Timed samples per contender in a warm start's confirmation (at most
    `min_samples`): the nearest decided key's ranking is the prior, and one sample of each
    contender tells whether it still holds; where it does not, the key is explored in
    full with `min_samples`."""

    tie_samples: int = 10
    """Timed samples each after which variants whose medians are all within the tie band
    tie, and the tie-break picks among them, without sampling them to `max_samples` for a
    difference the interval test cannot show (two variants 2% apart with 3% noise took
    16-30 samples each, every exploring call paying the tuner's own 50 us: B8's key at the
    crossing of its two best variants cost 2-4 ms that way, 1.5-3% of the whole stream)."""

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.min_samples < 1 or self.max_samples < self.min_samples:
            raise ValueError(
                "need warmup >= 0 and 1 <= min_samples <= max_samples, got "
                f"warmup={self.warmup}, min_samples={self.min_samples}, "
                f"max_samples={self.max_samples}"
            )
        if self.incumbent_samples < 1:
            raise ValueError(f"incumbent_samples must be >= 1, got {self.incumbent_samples}")
        if self.confirm_samples < 1:
            raise ValueError(f"confirm_samples must be >= 1, got {self.confirm_samples}")
        if self.tie_samples < 1:
            raise ValueError(f"tie_samples must be >= 1, got {self.tie_samples}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
        if not 0.0 <= self.indifference < 1.0:
            raise ValueError(f"indifference must be in [0, 1), got {self.indifference}")
        if self.tie_band is not None and not 0.0 <= self.tie_band < 1.0:
            raise ValueError(f"tie_band must be in [0, 1), got {self.tie_band}")
        if not 0.0 <= self.incumbent_band < 1.0:
            raise ValueError(f"incumbent_band must be in [0, 1), got {self.incumbent_band}")
        if not self.early_drop > 1.0:
            raise ValueError(f"early_drop must be > 1 (inf: never), got {self.early_drop}")

    def with_overrides(self, params: dict) -> StopRule:
        """This rule with the parameters that `params` names applied; a `max_samples`
        below the current `min_samples` lowers `min_samples` too (unless it is named)."""
        known = {k: params[k] for k in RULE_OPTIONS if k in params}
        if not known:
            return self
        merged = {**self.__dict__, **known}
        if "min_samples" not in known:
            merged["min_samples"] = min(merged["min_samples"], merged["max_samples"])
        return StopRule(**merged)

    @property
    def band(self) -> float:
        """The tie band in force: `tie_band`, else the `indifference`."""
        return self.indifference if self.tie_band is None else self.tie_band

    def z(self, comparisons: int) -> float:
        """Normal quantile for a two-sided interval, Bonferroni over `comparisons`."""
        return _z(self.confidence, max(1, comparisons))


@functools.lru_cache(maxsize=256)
def _z(confidence: float, comparisons: int) -> float:
    alpha = (1.0 - confidence) / comparisons
    return statistics.NormalDist().inv_cdf(1.0 - alpha / 2.0)
