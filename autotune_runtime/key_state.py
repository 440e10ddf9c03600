"""What the tuner knows of a group (as the lowered module describes it) and of each of
its workload keys (measurements, checks, warm start and decision)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from autotune_contracts import interface
from autotune_contracts.workloads import Key
from autotune_runtime.stats import VariantStats, cold_penalty, evidence


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
    expected: int | None = None
    """The variant the group is expected to settle on (offline tuning's winner): first in
    the tie-break, before the reference (the lowered module runs a fast path while every
    site of a function has chosen its expected variant)."""
    keys: tuple[Key, ...] = ()
    """The workload keys `__autotune` / `__autotune_init` tune (static keys and the
    group's `workloads` samples); empty for a dynamic group without `workloads`."""

    @property
    def qualified_name(self) -> str:
        return interface.qualified_group_name(self.container, self.name)

    @property
    def preference(self) -> tuple[int, ...]:
        """The tie-break's order: the expected variant, then the reference."""
        expected = () if self.expected is None else (self.expected,)
        return tuple(dict.fromkeys((*expected, self.reference)))

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
            keys=tuple(tuple(int(v) for v in k) for k in entry.get("keys", [])),
            expected=int(entry["expected"]) if entry.get("expected") is not None else None,
        )

    def variant_index(self, variant: object) -> int:
        """The index of a variant given by index or by name; anything else is a
        `ValueError` naming the group and the accepted values."""
        if isinstance(variant, str) and variant in self.variants:
            return self.variants.index(variant)
        if isinstance(variant, int | np.integer) and not isinstance(variant, bool | np.bool_):
            if 0 <= int(variant) < len(self.variants):
                return int(variant)
        accepted = ", ".join(f"{i} ({name})" for i, name in enumerate(self.variants))
        raise ValueError(
            f"group {self.qualified_name} has no variant {variant!r}; accepted: {accepted}"
        )


@dataclass(frozen=True)
class WarmStart:
    """What a key learned from the group's other keys (`warm_start.py`): the likely
    winner, where its bound came from, and the variants still contending."""

    neighbour: Key
    """The key whose time gave the likely winner's high bound."""
    winner: int
    contenders: tuple[int, ...]
    informative: bool
    """Whether the bounds ruled a variant out (then a confirmation takes
    `confirm_samples` per contender, else the key is explored with the group's rule)."""


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
    prior: WarmStart | None = None
    """The warm start of this key (None: it explores every variant)."""
    confirmation_failed: bool = False
    """The likely winner was not the best here: the contenders are explored with the
    group's rule."""
    bounds: dict[int, float] = field(default_factory=dict)
    """Low bounds of the variants that the other keys' times ruled out here."""
    tie: dict | None = None
    """At the commit, the tie band and the variants within it of the fastest, whose
    tie-break chose the winner (None when no other variant was within it)."""
    unknown_cached: str | None = None
    """The variant that the tuning cache's decision for this key names where the group
    has no such variant (that decision is not used, and the key's own replaces it)."""
    adopted: bool = False
    """The decision is another process's, committed to the tuning cache first while this
    one explored (`from_cache` is then set too)."""
    guess: int | None = None
    """The variant run first at this key while it explores without a warm start that
    rules any variant out (`WarmStarts.guess`, taken at the key's first call)."""
    seen_version: int = -1
    """The version of the group's `WarmStarts.changes` at the key's last look (-1: not
    looked yet; the tuning cache's neighbours are read at the first look)."""
    reach: tuple[float, float] = (math.inf, math.inf)
    """How far below and above the key (log size) the keys its bounds came from lie: a
    change farther away leaves them as they are."""

    def summaries(self, names: tuple[str, ...] = ()) -> list[dict]:
        """Per-variant statistics: those the cached decision was made on, if it came
        from the cache, else this process's measurements (with `low_ns`, a low estimate
        of the variant's time: `stats.evidence`). Named by `names` when given."""
        if self.from_cache and self.cached_stats is not None:
            return self.cached_stats
        penalty = cold_penalty(self.variants)
        out = []
        for i, v in enumerate(self.variants):
            low = evidence(v, penalty)
            if low is None:
                low = self.bounds.get(i, math.inf)
            if v.failed or v.rejected:
                low = math.inf
            item = {"variant": names[i]} if names else {}
            out.append({**item, **v.summary(), "low_ns": low})
        return out
