"""Warm start: a new workload key of a group with a workload starts from the winner of the
nearest key already decided, in this process or in the tuning cache (same device, module
and group).

Distance between keys of one group: the sum over the workload's dimensions of
|log2(a) - log2(b)| (sizes compare by ratio; ties go to the smaller key). The new key first
runs a confirmation: the stop rule over the contenders, the variants that a growth bound does
not rule out (and the reference, for the `explicit` and `init` policies, whose checks need
its results). The bound: if a kernel's time never shrinks as a size grows and grows at most
like the cube of each size (`GROWTH_EXPONENT`, as a matmul's), the ratio of two variants'
times changes by at most 2 ** (3 * distance) between two keys; a variant slower than the
neighbour's winner there by more than that (on a low estimate of its time, `low_ns`) cannot
be faster here. The confirmation takes `confirm_samples` (default 1) timed samples of each
contender, not `min_samples`, where the bound rules at least one variant out: the
neighbour's ranking is then the prior (a neighbour so far that every variant stays a
contender tells nothing: its winner is confirmed on `min_samples`). If the neighbour's
winner wins among the contenders, it is committed without running the others; otherwise
the key is explored in full with the group's rule, keeping the samples taken (a variant
the confirmation eliminated on its few samples runs again). A key
still exploring when a neighbour gets decided takes up the warm start then, keeping its
samples (a variant it has already timed at or below the neighbour's winner stays a
contender), and a nearer neighbour's when that one is decided later, while its
confirmation has not failed (keys explored side by side otherwise all kept the first
decision's warm start, however far). Off for a group with `warm_start = false`, or for
all with the load option `warm_start=False`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from autotune_contracts.policy import Policy
from autotune_contracts.workloads import Key, key_distance
from autotune_runtime.cache import CacheKey, TuningCache
from autotune_runtime.key_state import GroupInfo, KeyState, WarmStart
from autotune_runtime.stats import StopRule, next_or_winner

GROWTH_EXPONENT = 3
"""Warm start assumes a kernel's time grows with each size at most like its cube (as a
matmul's does) and never shrinks as a size grows."""


class WarmStarts:
    """The decided keys of every group, and the warm starts of new keys taken from them."""

    def __init__(
        self,
        groups: dict[int, GroupInfo],
        rule_for: Callable[[int], StopRule],
        cache: TuningCache | None,
        cache_key: Callable[[int, Key], CacheKey],
        enabled: bool = True,
    ):
        self.groups = groups
        self.rule_for = rule_for
        self.cache = cache
        self.cache_key = cache_key
        self.enabled = enabled
        self.decided_keys: dict[int, dict[Key, tuple[int, list[float]]]] = {}
        """Per group, the decided keys this process knows (committed here or read from
        the cache): the winner and a low estimate of every variant's time there (see
        `look`), kept at the decision so that looking for a warm start costs a pass over
        them, not their statistics recomputed. A warm start is looked for again when
        their number changes."""
        self._confirmation_rules: dict[int, StopRule] = {}

    def decisions(self, gid: int) -> int:
        """How many decided keys of the group this process knows."""
        return len(self.decided_keys.get(gid, ()))

    def applies(self, group: GroupInfo) -> bool:
        """Whether new keys of `group` start warm."""
        return (
            self.enabled and group.workload_arity > 0 and bool(group.params.get("warm_start", True))
        )

    def note_decided(self, gid: int, key: Key, state: KeyState) -> None:
        """Keep a decided key's winner and low estimates, for the keys near it."""
        assert state.decision is not None
        names = self.groups[gid].variants
        lows = _low_estimates(names, state.summaries(names), state.decision)
        self.decided_keys.setdefault(gid, {})[key] = (state.decision, lows)

    def _read_cached_neighbours(self, gid: int, key: Key) -> None:
        """Learn the group's decided keys that the tuning cache holds near `key` (another
        process's, or an earlier run's)."""
        if self.cache is None:
            return
        names = self.groups[gid].variants
        known = self.decided_keys.setdefault(gid, {})
        for entry in self.cache.neighbours(self.cache_key(gid, key)):
            other = entry.key.workload
            if entry.variant in names and len(other) == len(key) and other not in known:
                winner = names.index(entry.variant)
                known[other] = (winner, _low_estimates(names, entry.stats.get("variants"), winner))

    def look(self, gid: int, key: Key, state: KeyState) -> None:
        """Take up the warm start of the nearest decided key, or of a nearer one decided
        since the last look (keeping the samples taken). Only the keys decided since then
        are compared, so a look costs what is new, not every decided key again."""
        if state.decisions_seen < 0:
            self._read_cached_neighbours(gid, key)
            state.decisions_seen = 0
        decided = self.decided_keys.get(gid, {})
        keys = list(decided)[state.decisions_seen :]
        state.decisions_seen = len(decided)
        best = state.prior.rank if state.prior is not None else None
        nearest = None
        for other in keys:
            if other == key:
                continue
            winner, lows = decided[other]
            # the nearest decided key whose winner was timed there (one committed at once
            # by a warm start of its own has no time to scale the others' estimates by)
            rank = (not 0.0 < lows[winner] < math.inf, key_distance(other, key), other)
            if best is None or rank < best:
                best, nearest = rank, other
        if nearest is not None:
            state.prior = self._warm_start(gid, key, state, nearest, best)

    def _warm_start(
        self, gid: int, key: Key, state: KeyState, neighbour: Key, rank: tuple
    ) -> WarmStart:
        """The warm start from a decided key: its winner, and the contenders: the variants
        that the growth bound does not rule out (see the module docstring)."""
        winner, lows = self.decided_keys[gid][neighbour]
        growth = 2.0 ** (GROWTH_EXPONENT * key_distance(neighbour, key))
        group = self.groups[gid]
        if 0.0 < lows[winner] < math.inf:
            ratios = tuple(low / lows[winner] for low in lows)
            contenders = {i for i, r in enumerate(ratios) if r <= growth} | {winner}
        else:
            ratios = tuple(1.0 for _ in lows)
            contenders = set(range(len(group.variants)))
        # what this key measured before the neighbour was decided outweighs the bound
        here = state.variants
        contenders.update(
            i for i, v in enumerate(here) if v.samples and v.minimum <= here[winner].median
        )
        if group.policy in (Policy.EXPLICIT, Policy.INIT):
            contenders.add(group.reference)
        return WarmStart(neighbour, winner, tuple(sorted(contenders)), ratios, growth, rank)

    def confirm(self, gid: int, state: KeyState) -> tuple[int | None, int | None]:
        """Confirmation of a warm start: the stop rule over the contenders. (variant to
        run, None); or (None, winner) when the neighbour's winner wins; or (None, None)
        when another contender does (every variant is then explored)."""
        prior = state.prior
        assert prior is not None
        if prior.contenders == (prior.winner,) and not any(v.runs for v in state.variants):
            # the bound rules every other variant out: the neighbour's winner, at once
            for i, v in enumerate(state.variants):
                v.eliminated = i != prior.winner
            return None, prior.winner
        stats = [state.variants[i] for i in prior.contenders]
        first = prior.contenders.index(prior.winner)
        # a neighbour whose bound rules no variant out tells nothing of this key: its
        # winner is confirmed on `min_samples`, as an exploration from scratch would be
        informative = len(prior.contenders) < len(state.variants)
        rule = self.confirmation_rule(gid) if informative else self.rule_for(gid)
        variant, winner = next_or_winner(rule, stats, first)
        if winner is None:
            assert variant is not None
            return prior.contenders[variant], None
        if prior.contenders[winner] == prior.winner and not stats[winner].eliminated:
            time_here = state.variants[prior.winner].median
            for i, v in enumerate(state.variants):
                if i not in prior.contenders:
                    v.eliminated = True  # ruled out by the growth bound
                    state.bounds[i] = time_here * prior.ratios[i] / prior.growth
            return None, prior.winner
        state.confirmation_failed = True
        for v in stats:  # explored in full now: eliminated by the full rule only
            v.eliminated = v.failed or v.rejected
        return None, None

    def confirmation_rule(self, gid: int) -> StopRule:
        """The stop rule of a warm start's confirmation: the group's, with
        `confirm_samples` timed samples per contender (the neighbour's ranking is the
        prior: one sample each tells whether it still holds)."""
        rule = self._confirmation_rules.get(gid)
        if rule is None:
            full = self.rule_for(gid)
            samples = min(full.confirm_samples, full.min_samples)
            rule = replace(full, min_samples=samples)
            self._confirmation_rules[gid] = rule
        return rule


def _low_estimates(variants: tuple[str, ...], stats: object, winner: int) -> list[float]:
    """Per variant, from its statistics at a decided key (`KeyState.summaries`, or a cache
    entry's): `low_ns` where recorded, else the median (the winner's: its median); inf
    where neither is known."""
    lows = {}
    if isinstance(stats, list):
        for item in stats:
            if not isinstance(item, dict):
                continue
            order = (
                ("median_ns",)
                if item.get("variant") == variants[winner]
                else ("low_ns", "median_ns")
            )
            for field_name in order:
                value = item.get(field_name)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    lows[item.get("variant")] = float(value)
                    break
    return [lows.get(name, math.inf) for name in variants]
