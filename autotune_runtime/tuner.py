"""Selection state behind the host imports: which variant runs next, and when to commit.

One `KeyState` per (group, workload key). Exploration is round robin over the variants the
stop rule (`stats.py`) has not eliminated; a commit is written to the tuning cache, and a
key found in the cache starts committed, so its first call explores nothing.

Parameters come from, in increasing precedence: `StopRule` defaults, the options given at
load, and the group's own attributes (`warmup`, `min_samples`, `max_samples`, `confidence`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from autotune_runtime.cache import CacheKey, Entry, TuningCache
from autotune_runtime.fingerprint import DeviceFingerprint
from autotune_runtime.stats import StopRule, VariantStats, next_or_winner

Key = tuple[int, ...]


@dataclass(frozen=True)
class GroupInfo:
    """A group as the lowered module describes it (`__autotune_metadata`)."""

    gid: int
    name: str
    container: str | None
    variants: tuple[str, ...]
    policy: str
    fingerprint: str = ""
    workload_arity: int = 0
    params: dict = field(default_factory=dict, hash=False, compare=False)

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
            fingerprint=str(entry.get("fingerprint", "")),
            workload_arity=int(entry.get("workload_arity", 0)),
            params=dict(entry.get("params", {})),
        )


@dataclass
class KeyState:
    """Measurements and decision of one group at one workload key."""

    variants: list[VariantStats]
    decision: int | None = None
    from_cache: bool = False
    explored_calls: int = 0
    cached_stats: list[dict] | None = None

    def summaries(self) -> list[dict]:
        if self.cached_stats is not None and not any(v.runs for v in self.variants):
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

    def select(self, gid: int, key: Key) -> tuple[int, bool]:
        """The variant to run next and whether the choice is final."""
        state = self.state(gid, key)
        if state.decision is not None:
            return state.decision, True
        variant, winner = next_or_winner(self.rule_for(gid), state.variants)
        if winner is not None:
            self._commit(gid, key, state, winner)
            return winner, True
        state.explored_calls += 1
        assert variant is not None
        return variant, False

    def record(self, gid: int, variant: int, elapsed_ns: float, key: Key) -> None:
        state = self.state(gid, key)
        if 0 <= variant < len(state.variants):
            state.variants[variant].add(elapsed_ns, self.rule_for(gid).warmup)

    def decide(self, gid: int, key: Key) -> int:
        """Commit now to the fastest variant measured so far (the first if none was)."""
        state = self.state(gid, key)
        if state.decision is None:
            medians = [v.median for v in state.variants]
            self._commit(gid, key, state, min(range(len(medians)), key=medians.__getitem__))
        assert state.decision is not None
        return state.decision

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
