"""The fixed tuning protocol of Triton, as a `Tuner` (the same host-module interface).

`triton.testing.do_bench` spends a fixed budget on every config: about 25 ms of warm-up
runs, then about 100 ms of measured repetitions, and reports the median; the autotuner
takes the config with the lowest. `TritonTuner` answers the same `select` / `record`
imports as the project's `Tuner`, so a module loaded with `tuner_class=TritonTuner` runs
that protocol on its own calls: variant after variant, each run until its measured times
add up to 25 ms (warm-up, discarded) and then to 100 ms more (kept), then the lowest median
is committed. Nothing is eliminated early.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autotune_contracts import interface
from autotune_runtime.tuner import Tuner

WARMUP_NS = 25_000_000
MEASURE_NS = 100_000_000


@dataclass
class _Progress:
    """Where the protocol is for one (group, workload key)."""

    variant: int = 0
    warming: bool = True
    spent_ns: int = 0
    samples: dict[int, list[int]] = field(default_factory=dict)


class TritonTuner(Tuner):
    """25 ms warm-up + 100 ms of repetitions per variant, in order; lowest median wins."""

    warmup_ns = WARMUP_NS
    measure_ns = MEASURE_NS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.progress: dict[tuple[int, tuple[int, ...]], _Progress] = {}
        # `select` answers as many values as the interface declares (variant, committed,
        # then flags that are all "no" here).
        self._select_arity = len(interface.select(0).results)

    def select(self, gid, key):
        state = self.state(gid, key)
        if state.decision is not None:
            return super().select(gid, key)
        progress = self.progress.setdefault((gid, key), _Progress())
        if progress.variant >= len(state.variants):
            medians = {v: _median(s) for v, s in progress.samples.items() if s}
            winner = min(medians, key=medians.__getitem__) if medians else 0
            self._commit(gid, key, state, winner)
            return super().select(gid, key)
        state.explored_calls += 1
        if hasattr(self, "in_flight"):
            self.in_flight = (gid, key, progress.variant)
        return (progress.variant, 0, *([0] * (self._select_arity - 2)))

    def record(self, gid, variant, elapsed_ns, key, waited_ns=0.0):
        if hasattr(self, "in_flight"):
            self.in_flight = None
        progress = self.progress.get((gid, key))
        state = self.state(gid, key)
        if progress is None or variant != progress.variant or state.decision is not None:
            return
        elapsed = int(elapsed_ns)
        progress.spent_ns += max(elapsed, 0)
        if progress.warming:
            if progress.spent_ns >= self.warmup_ns:
                progress.warming, progress.spent_ns = False, 0
            return
        progress.samples.setdefault(variant, []).append(elapsed)
        state.variants[variant].add(elapsed, 0)
        if progress.spent_ns >= self.measure_ns:
            progress.variant += 1
            progress.warming, progress.spent_ns = True, 0


def _median(values: list[int]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
