"""Selection state behind the host imports: which variant to run next, and when to commit.

The rule here is the simplest one that makes every policy work: after `warmup` discarded
runs, each variant is measured `min_samples` times round robin, then the variant with the
lowest median wins. Failed or missing measurements count as infinitely slow.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

Key = tuple[int, ...]


@dataclass(frozen=True)
class GroupInfo:
    """A group as the lowered module describes it (`__autotune_metadata`)."""

    gid: int
    name: str
    container: str | None
    variants: tuple[str, ...]
    policy: str
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
            workload_arity=int(entry.get("workload_arity", 0)),
            params=dict(entry.get("params", {})),
        )


@dataclass
class KeyState:
    """Measurements of one group at one workload key."""

    samples: list[list[float]]
    seen: list[int]
    decision: int | None = None
    explored_calls: int = 0

    def medians(self) -> list[float]:
        return [statistics.median(s) if s else math.inf for s in self.samples]


@dataclass
class Tuner:
    """Round-robin exploration and commit, per (group, workload key)."""

    groups: dict[int, GroupInfo]
    warmup: int = 1
    min_samples: int = 3
    states: dict[tuple[int, Key], KeyState] = field(default_factory=dict)

    def state(self, gid: int, key: Key) -> KeyState:
        if (gid, key) not in self.states:
            n = len(self.groups[gid].variants)
            self.states[(gid, key)] = KeyState([[] for _ in range(n)], [0] * n)
        return self.states[(gid, key)]

    def _param(self, gid: int, name: str, default: int) -> int:
        return int(self.groups[gid].params.get(name, default))

    def select(self, gid: int, key: Key) -> tuple[int, bool]:
        """The variant to run next and whether the choice is final."""
        state = self.state(gid, key)
        if state.decision is not None:
            return state.decision, True
        warmup = self._param(gid, "warmup", self.warmup)
        needed = warmup + self._param(gid, "min_samples", self.min_samples)
        pending = [i for i, seen in enumerate(state.seen) if seen < needed]
        if not pending:
            return self.decide(gid, key), True
        state.explored_calls += 1
        return min(pending, key=lambda i: state.seen[i]), False

    def record(self, gid: int, variant: int, elapsed_ns: float, key: Key) -> None:
        state = self.state(gid, key)
        if not 0 <= variant < len(state.samples):
            return
        state.seen[variant] += 1
        if state.seen[variant] > self._param(gid, "warmup", self.warmup):
            state.samples[variant].append(float(elapsed_ns))

    def decide(self, gid: int, key: Key) -> int:
        """Commit to the fastest variant measured so far (variant 0 if none was)."""
        state = self.state(gid, key)
        if state.decision is None:
            medians = state.medians()
            best = min(range(len(medians)), key=lambda i: medians[i])
            state.decision = best if math.isfinite(medians[best]) else 0
        return state.decision
