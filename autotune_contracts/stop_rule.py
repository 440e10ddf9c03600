"""The stop rule's parameters: one declaration each (a field of `StopRule` with its
`Setting`: kind, default, range, whether a group attribute and a load option may set it,
and its docstring), from which the rest is made. The group's properties and their checks
(`autotune_dialect`: the `autotune.group` op and its verifier), the keys of the metadata a
lowered module gives the runtime (`lowering/module_output.py`), the load options
(`RULE_OPTIONS`, `autotune_runtime.load(**options)`) and the rule the runtime builds for a
group from that metadata (`StopRule.with_overrides`) all read `SETTINGS`; the runtime's
`stats.py` applies the rule."""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Setting:
    """What one parameter of the stop rule takes, and who may set it."""

    kind: type
    """`int`, `float` or `bool` (a group attribute of that kind: an i64 integer, an f64
    float, a boolean)."""
    at_least: float | None = None
    above: float | None = None
    below: float | None = None
    finite: bool = False
    note: str = ""
    """Said after the range in messages (`inf: never`)."""
    group: bool = False
    """A group attribute may set it (for that group)."""
    load: bool = True
    """A load option may set it (for every group of the module)."""

    def range_text(self) -> str:
        """The range as messages say it: `>= 0`, `between 0 and 1 (exclusive)`, `>= 0 and
        below 1`, `a finite number >= 0`."""
        if self.above is not None and self.below is not None:
            text = f"between {_number(self.above)} and {_number(self.below)} (exclusive)"
        elif self.at_least is not None and self.below is not None:
            text = f">= {_number(self.at_least)} and below {_number(self.below)}"
        elif self.at_least is not None:
            text = f">= {_number(self.at_least)}"
        else:
            text = f"> {_number(self.above)}"
        if self.finite:
            text = f"a finite number {text}"
        return f"{text} ({self.note})" if self.note else text

    def interval_text(self) -> str:
        """The range as `StopRule` says it: `[0, 1)`, `(0, 1)`, else `range_text`."""
        if self.below is None or self.finite or self.note:
            return self.range_text()
        low = f"[{_number(self.at_least)}" if self.above is None else f"({_number(self.above)}"
        return f"in {low}, {_number(self.below)})"

    def holds(self, value: float) -> bool:
        """Whether `value` is in the range."""
        return (
            (not self.finite or math.isfinite(value))
            and (self.at_least is None or value >= self.at_least)
            and (self.above is None or value > self.above)
            and (self.below is None or value < self.below)
        )


def _number(value: float | None) -> str:
    return f"{value:g}"


def setting(default: object, **declared: Any) -> Any:
    """A field of `StopRule`: its default, and its `Setting` (`declared`; the kind is the
    default's unless given)."""
    declared.setdefault("kind", type(default))
    return dataclasses.field(default=default, metadata={"setting": Setting(**declared)})


@dataclass(frozen=True)
class StopRule:
    """When exploration may stop. Defaults suit kernels of microseconds to milliseconds.
    Each field is one parameter, declared with its default and its `Setting`
    (`SETTINGS`), and described by its docstring."""

    warmup: int = setting(1, at_least=0, group=True)
    """Runs per variant discarded before measuring."""
    min_samples: int = setting(3, at_least=1, group=True)
    """Measured runs per variant before the rule may commit (`init`: runs per variant at
    load)."""
    max_samples: int = setting(30, at_least=1, group=True)
    """Cap on measured runs per variant."""
    confidence: float = setting(0.95, above=0.0, below=1.0, group=True)
    """Confidence the interval test requires."""
    tolerance: float = setting(1e-3, at_least=0.0, finite=True, group=True, load=False)
    """Numeric tolerance when a variant's results are compared with the reference's
    (relative to the reference's largest magnitude): a variant beyond it is rejected
    (`tuner.py`)."""
    noise_floor: float = setting(0.005, at_least=0.0, load=False)
    """Share of the median below which a standard error is not taken (`stats.py`)."""
    early_drop: float = setting(2.0, above=1.0, note="inf: never")
    """How many times slower than the leader a variant is dropped before `min_samples`."""
    early_drop_samples: int = setting(2, at_least=1)
    """Runs a variant must have, none held up by another process that its threads' wait
    showed, warm-up runs counting and at least one timed, every one slower than
    `early_drop` times the leader's median, before it is dropped early. One is not enough
    on a machine whose hold-ups do not all show: on a CI runner the fastest of three
    variants (8x apart) had one timed run held up past 2x the reference's, unseen, was
    dropped, and the reference, 8x slower, won; its warm-up run had been fast."""
    indifference: float = setting(0.03, at_least=0.0, below=1.0)
    """Share of the fastest's median within which remaining variants are alike."""
    tie_band: float | None = setting(None, kind=float, at_least=0.0, below=1.0, group=True)
    """Variants whose medians are within this share of the fastest's tie (None: the
    `indifference`); the tie-break picks among them."""
    incumbent_band: float = setting(0.25, at_least=0.0, below=1.0)
    """How much slower than the leader a group's expected variant (the incumbent) must be
    shown to be before it is eliminated (at least the tie band). Leaving it costs more
    than its own difference: the function's fast path, one execution region instead of one
    per site (20-30 us per site on a 2-core `local-task`, against dispatches of tens of us,
    where a 20% faster variant saves a few: a MobileNetV2 whose one group of nine left its
    expected variant for one 15-30% faster there took 1.30x the stock build's time, the
    loads where none left 0.83-0.91x)."""

    incumbent_samples: int = setting(10, at_least=1)
    """Timed samples that the expected variant and the leader must each have before the
    interval test may eliminate the expected variant. Three samples of a dispatch of tens
    of us, each taken in an exploring call of a whole model on `local-task`, are not enough:
    on the Flax BERT a variant 6% faster offline measured 61-76 us against the reference's
    49-59 in 1 of 20 fresh loads, was eliminated, and the load lost its fast path (1.44x
    the stock build's time, the other loads 0.95-1.01x)."""

    confirm_samples: int = setting(1, at_least=1)
    """Timed samples per contender in a warm start's confirmation (at most
    `min_samples`): the nearest decided key's ranking is the prior, and one sample of each
    contender tells whether it still holds; where it does not, the key is explored in
    full with `min_samples`."""

    tie_samples: int = setting(10, at_least=1)
    """Timed samples each after which variants whose medians are all within the tie band
    tie, and the tie-break picks among them, without sampling them to `max_samples` for a
    difference the interval test cannot show (two variants 2% apart with 3% noise took
    16-30 samples each, every exploring call paying the tuner's own 50 us: B8's key at the
    crossing of its two best variants cost 2-4 ms that way, 1.5-3% of the whole stream)."""

    warm_start: bool = setting(True, group=True, load=False)
    """Whether a workload key learns from the times its variants took at the group's
    other keys (`warm_start.py`); a group's own only (the load option `warm_start=False`
    turns it off for every group)."""

    def __post_init__(self) -> None:
        for name, declared in SETTINGS.items():
            value = getattr(self, name)
            if value is not None and declared.kind is not bool and not declared.holds(value):
                raise ValueError(f"{name} must be {declared.interval_text()}, got {value}")
        if self.max_samples < self.min_samples:
            raise ValueError(
                "need min_samples <= max_samples, got "
                f"min_samples={self.min_samples}, max_samples={self.max_samples}"
            )

    def with_overrides(self, params: dict) -> StopRule:
        """This rule with the parameters that `params` names applied (as the kind each
        is declared: the metadata holds a group's `true` as -1); a `max_samples` below
        the current `min_samples` lowers `min_samples` too (unless it is named)."""
        known = {
            k: v if v is None else SETTINGS[k].kind(v) for k, v in params.items() if k in SETTINGS
        }
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


SETTINGS: dict[str, Setting] = {f.name: f.metadata["setting"] for f in dataclasses.fields(StopRule)}
"""Every parameter of the stop rule, in `StopRule`'s order, with its `Setting`."""

RULE_OPTIONS = tuple(name for name, declared in SETTINGS.items() if declared.load)
"""The parameters a load option may set (`autotune_runtime.load(**options)`)."""

GROUP_SETTINGS = {name: declared for name, declared in SETTINGS.items() if declared.group}
"""The parameters a group attribute may set: the group's properties of these names, their
checks, and the keys of the metadata the runtime builds the group's rule from."""
