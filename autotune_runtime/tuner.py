"""Selection state behind the host imports: which variant runs next, and when to commit.

One `KeyState` per (group, workload key). Exploration is round robin over the variants the
stop rule (`stats.py`) has not eliminated; a commit is written to the tuning cache, and a
key found in the cache starts committed, so its first call explores nothing.

Variants are also checked against the group's reference variant (`check`: results on
synthetic inputs, `compare`: results on the same real inputs); one that disagrees beyond the
group's `tolerance` (default 1e-3, relative to the reference's largest magnitude) is
rejected with a `TuningWarning` and never chosen. A run that fails is reported by
`fail_in_flight` and the variant is excluded.

Parameters come from, in increasing precedence: `StopRule` defaults, the options given at
load, and the group's own attributes (`warmup`, `min_samples`, `max_samples`, `confidence`).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from autotune_runtime.cache import CacheKey, Entry, TuningCache
from autotune_runtime.fingerprint import DeviceFingerprint
from autotune_runtime.stats import StopRule, VariantStats, next_or_winner

Key = tuple[int, ...]
DEFAULT_TOLERANCE = 1e-3


class TuningWarning(UserWarning):
    """A variant was excluded from tuning (its results disagree, or it failed)."""


@dataclass(frozen=True)
class GroupInfo:
    """A group as the lowered module describes it (its metadata function)."""

    gid: int
    name: str
    container: str | None
    variants: tuple[str, ...]
    policy: str
    reference: int = 0
    fingerprint: str = ""
    workload_arity: int = 0
    params: dict = field(default_factory=dict, hash=False, compare=False)
    setter: str | None = None
    """Exported function that sets an `explicit` group's choice (`getter` reads it)."""
    getter: str | None = None

    @property
    def qualified_name(self) -> str:
        return self.name if self.container is None else f"{self.container}::{self.name}"

    @staticmethod
    def from_metadata(entry: dict) -> GroupInfo:
        return GroupInfo(
            gid=int(entry["id"]),
            name=str(entry["name"]),
            container=entry.get("container"),
            variants=tuple(entry["variants"]),
            policy=str(entry["policy"]),
            reference=int(entry.get("reference", 0)),
            fingerprint=str(entry.get("fingerprint", "")),
            workload_arity=int(entry.get("workload_arity", 0)),
            params=dict(entry.get("params", {})),
            setter=entry.get("setter"),
            getter=entry.get("getter"),
        )


@dataclass
class KeyState:
    """Measurements and decision of one group at one workload key."""

    variants: list[VariantStats]
    decision: int | None = None
    from_cache: bool = False
    explored_calls: int = 0
    cached_stats: list[dict] | None = None
    outputs: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    validated: set[int] = field(default_factory=set)

    def summaries(self) -> list[dict]:
        """Per-variant statistics: those the cached decision was made on, if it came
        from the cache, else this process's measurements."""
        if self.from_cache and self.cached_stats is not None:
            return self.cached_stats
        return [v.summary() for v in self.variants]


class Tuner:
    """Round-robin exploration with successive elimination, per (group, workload key)."""

    def __init__(
        self,
        groups: dict[int, GroupInfo],
        rule: StopRule | None = None,
        cache: TuningCache | None = None,
        device: DeviceFingerprint | None = None,
    ):
        self.groups = groups
        self.rule = rule or StopRule()
        self.cache = cache
        self.device = device
        self.states: dict[tuple[int, Key], KeyState] = {}
        self.in_flight: tuple[int, Key, int] | None = None

    def rule_for(self, gid: int) -> StopRule:
        return self.rule.with_overrides(self.groups[gid].params)

    def cache_key(self, gid: int, key: Key) -> CacheKey:
        group = self.groups[gid]
        device = self.device.digest() if self.device else ""
        return CacheKey(device, group.fingerprint, group.qualified_name, key)

    def state(self, gid: int, key: Key) -> KeyState:
        if (gid, key) not in self.states:
            group = self.groups[gid]
            state = KeyState([VariantStats() for _ in group.variants])
            entry = self.cache.get(self.cache_key(gid, key)) if self.cache else None
            if entry is not None and entry.variant in group.variants:
                state.decision = group.variants.index(entry.variant)
                state.from_cache = True
                state.cached_stats = entry.stats.get("variants")
            self.states[(gid, key)] = state
        return self.states[(gid, key)]

    # --- the host imports ----------------------------------------------------------------

    def select(self, gid: int, key: Key) -> tuple[int, bool, bool]:
        """The variant to run next, whether the choice is final, and whether the run
        should be compared with the reference's on the same inputs."""
        state = self.state(gid, key)
        if state.decision is not None:
            return state.decision, True, False
        reference = self.groups[gid].reference
        variant, winner = next_or_winner(self.rule_for(gid), state.variants, reference)
        if winner is not None:
            self._commit(gid, key, state, winner)
            return winner, True, False
        state.explored_calls += 1
        assert variant is not None
        self.in_flight = (gid, key, variant)
        return variant, False, variant != reference and variant not in state.validated

    def record(self, gid: int, variant: int, elapsed_ns: float, key: Key) -> None:
        state = self.state(gid, key)
        self.in_flight = None
        if 0 <= variant < len(state.variants):
            state.variants[variant].add(elapsed_ns, self.rule_for(gid).warmup)

    def fail_in_flight(self, reason: str) -> str | None:
        """The variant whose run was under way failed: exclude it. Returns its name, or
        None when no exploration was under way (the failure is not tuning's)."""
        if self.in_flight is None:
            return None
        gid, key, variant = self.in_flight
        self.in_flight = None
        group = self.groups[gid]
        self.record(gid, variant, math.inf, key)
        warnings.warn(
            f"variant {group.variants[variant]} of {group.qualified_name} failed at workload "
            f"{list(key)} and is excluded: {reason}",
            TuningWarning,
            stacklevel=3,
        )
        return group.variants[variant]

    # --- numeric validation against the reference variant ---------------------------

    def wants_output(self, gid: int, key: Key, variant: int, index: int) -> bool:
        state = self.state(gid, key)
        return (variant, index) not in state.outputs and state.decision is None

    def check(self, gid: int, key: Key, variant: int, index: int, output: np.ndarray) -> None:
        """A result on synthetic inputs: kept, and compared once the reference's is known."""
        state = self.state(gid, key)
        state.outputs[(variant, index)] = np.array(output, copy=True)
        reference = self.groups[gid].reference
        expected = state.outputs.get((reference, index))
        if expected is None:
            return
        for (other, other_index), got in list(state.outputs.items()):
            if other_index == index and other != reference and other not in state.validated:
                self._judge(gid, key, state, other, got, expected)

    def compare(
        self, gid: int, key: Key, variant: int, index: int, got: np.ndarray, expected: np.ndarray
    ) -> None:
        """A result and the reference's on the same real inputs."""
        self._judge(gid, key, self.state(gid, key), variant, got, expected)

    def _judge(self, gid, key, state: KeyState, variant: int, got, expected) -> None:
        group = self.groups[gid]
        stats = state.variants[variant]
        if stats.rejected:
            return
        tolerance = float(group.params.get("tolerance", DEFAULT_TOLERANCE))
        if _agrees(got, expected, tolerance):
            state.validated.add(variant)
            return
        stats.reject()
        error = _max_error(got, expected)
        warnings.warn(
            f"variant {group.variants[variant]} of {group.qualified_name} disagrees with the "
            f"reference {group.variants[group.reference]} at workload {list(key)} (largest "
            f"difference {error:.3g}, tolerance {tolerance:g}) and is rejected",
            TuningWarning,
            stacklevel=3,
        )

    def decide(self, gid: int, key: Key) -> int:
        """Commit now to the fastest variant measured so far (the first if none was)."""
        state = self.state(gid, key)
        if state.decision is None:
            medians = [v.median for v in state.variants]
            self._commit(gid, key, state, min(range(len(medians)), key=medians.__getitem__))
        assert state.decision is not None
        return state.decision

    def decided(self, gid: int, key: Key) -> int:
        """The variant committed for this key (from the cache or earlier calls), -1 when
        none is."""
        decision = self.state(gid, key).decision
        return -1 if decision is None else decision

    def _commit(self, gid: int, key: Key, state: KeyState, winner: int) -> None:
        state.decision = winner
        if self.cache is None:
            return
        group = self.groups[gid]
        stats = {
            "variants": [
                {"variant": name, **v.summary()}
                for name, v in zip(group.variants, state.variants, strict=True)
            ],
            "explored_calls": state.explored_calls,
        }
        info = self.device.__dict__ if self.device else {}
        self.cache.put(
            Entry(self.cache_key(gid, key), group.variants[winner], stats, dict(info), time.time())
        )


def _agrees(got: np.ndarray, expected: np.ndarray, tolerance: float) -> bool:
    if got.shape != expected.shape:
        return False
    if expected.size == 0:
        return True
    scale = max(1.0, float(np.max(np.abs(expected.astype(np.float64)))))
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    return bool(np.all(np.isfinite(diff)) and np.max(diff) <= tolerance * scale)


def _max_error(got: np.ndarray, expected: np.ndarray) -> float:
    if got.shape != expected.shape:
        return math.inf
    return float(np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64))))
