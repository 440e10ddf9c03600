"""Selection state behind the host imports: which variant runs next, and when to commit.

One `KeyState` per (group, workload key). Exploration is round robin over the variants the
stop rule (`stats.py`) has not eliminated; a commit is written to the tuning cache, and a
key found in the cache starts committed, so its first call explores nothing.

Variants are also checked against the group's reference variant (`check`: results on
synthetic inputs, `compare`: results on the same real inputs); one that disagrees beyond the
group's `tolerance` (default 1e-3, relative to the reference's largest magnitude) is
rejected with a `TuningWarning` and never chosen. An `online` variant is compared once per
size bucket (`size_bucket`: keys whose sizes share their powers of two): one that agreed
at a key of the bucket, and disagreed at none, runs unchecked at its other keys. A run that
fails is reported by `fail_in_flight` and the variant is excluded.

Parameters come from, in increasing precedence: `StopRule` defaults, the options given at
load, and the group's own attributes (`warmup`, `min_samples`, `max_samples`, `confidence`).

Warm start: a new workload key of a group with a workload starts from the winner of the
nearest key already decided, in this process or in the tuning cache (same device, module
and group). Distance between keys of one group: the sum over the workload's dimensions of
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
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from autotune_contracts import interface
from autotune_contracts.policy import Policy
from autotune_contracts.workloads import Key, key_distance
from autotune_runtime.cache import CacheKey, Entry, TuningCache
from autotune_runtime.compare import agrees, max_error
from autotune_runtime.fingerprint import DeviceFingerprint
from autotune_runtime.stats import (
    StopRule,
    VariantStats,
    cold_penalty,
    evidence,
    next_or_winner,
    tie_break,
    tied,
)

DEFAULT_TOLERANCE = 1e-3
GROWTH_EXPONENT = 3
"""Warm start assumes a kernel's time grows with each size at most like its cube (as a
matmul's does) and never shrinks as a size grows."""


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
    """Where a new key starts: the nearest decided key, its winner and the variants that
    run to confirm it."""

    neighbour: Key
    winner: int
    contenders: tuple[int, ...]
    ratios: tuple[float, ...]
    """Each variant's low estimate over the winner's median, at the neighbour."""
    growth: float
    """How much those ratios may have shrunk from there to here."""
    rank: tuple = ()
    """How near the neighbour is (`Tuner._look_for_warm_start`): a nearer one replaces it."""


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
    """The neighbour's winner was not the best here: every variant is explored."""
    bounds: dict[int, float] = field(default_factory=dict)
    """Low estimates of the variants ruled out by a warm start's growth bound."""
    tie: dict | None = None
    """At the commit, the tie band and the variants within it of the fastest, whose
    tie-break chose the winner (None when no other variant was within it)."""
    adopted: bool = False
    """The decision is another process's, committed to the tuning cache first while this
    one explored (`from_cache` is then set too)."""
    decisions_seen: int = -1
    """How many of the group's decided keys a warm start was looked for among (-1: not
    looked for yet; the tuning cache's neighbours are read at the first look)."""

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


class Tuner:
    """Round-robin exploration with successive elimination, per (group, workload key)."""

    def __init__(
        self,
        groups: dict[int, GroupInfo],
        rule: StopRule | None = None,
        cache: TuningCache | None = None,
        device: DeviceFingerprint | None = None,
        warm_start: bool = True,
    ):
        self.groups = groups
        self.warm_start = warm_start
        self.rule = rule or StopRule()
        self._rules: dict[int, StopRule] = {}
        self._confirmation_rules: dict[int, StopRule] = {}
        self.cache = cache
        self.device = device
        self.states: dict[tuple[int, Key], KeyState] = {}
        self.decided_keys: dict[int, dict[Key, tuple[int, list[float]]]] = {}
        """Per group, the decided keys this process knows (committed here or read from
        the cache): the winner and a low estimate of every variant's time there (see
        `_look_for_warm_start`), kept at the decision so that looking for a warm start
        costs a pass over them, not their statistics recomputed. A warm start is looked
        for again when their number changes."""
        self.in_flight: tuple[int, Key, int] | None = None
        self.manual: dict[tuple[int, Key], int] = {}
        """Choices set by hand (an `explicit` group's setter), per key: they are what the
        module's calls run until `__autotune` stores its decisions."""
        self.restoring = False
        """While set, `select` only answers from the tuning cache and measures nothing:
        (the cached decision or -1, committed). `__autotune` run so stores the cached
        decisions of `explicit` groups, and -1 (the reference) for the other keys."""
        self.observer: Callable[[int, Key], None] | None = None
        """Called with (group, key) after each timed run and each commit."""
        self.first_key: dict[tuple[int, int], Key] = {}
        """Per (group, variant), the key it first ran at in this process (`_warmup`)."""
        self.checked: dict[tuple[int, Key], dict[int, bool]] = {}
        """Per group and size bucket (`size_bucket`), each variant compared with the
        reference on real inputs there: whether it agreed at every key it was compared
        at (an `online` variant is validated once per bucket)."""

    def rule_for(self, gid: int) -> StopRule:
        """The stop rule of a group: the load's, with the group's own parameters (made
        once per group: every exploring call reads it)."""
        rule = self._rules.get(gid)
        if rule is None:
            rule = self._rules[gid] = self.rule.with_overrides(self.groups[gid].params)
        return rule

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
                state.tie = _tie_of(entry.stats)
                self._note_decided(gid, key, state)
            self.states[(gid, key)] = state
        return self.states[(gid, key)]

    # --- warm start ---------------------------------------------------------------------

    def _warm_starts(self, group: GroupInfo) -> bool:
        return (
            self.warm_start
            and group.workload_arity > 0
            and bool(group.params.get("warm_start", True))
        )

    def _note_decided(self, gid: int, key: Key, state: KeyState) -> None:
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

    def _look_for_warm_start(self, gid: int, key: Key, state: KeyState) -> None:
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
            state.prior = self._warm_start(gid, key, nearest, best)

    def _warm_start(self, gid: int, key: Key, neighbour: Key, rank: tuple) -> WarmStart:
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
        here = self.states[(gid, key)].variants
        contenders.update(
            i for i, v in enumerate(here) if v.samples and v.minimum <= here[winner].median
        )
        if group.policy in (Policy.EXPLICIT, Policy.INIT):
            contenders.add(group.reference)
        return WarmStart(neighbour, winner, tuple(sorted(contenders)), ratios, growth, rank)

    def _confirm(self, gid: int, state: KeyState) -> tuple[int | None, int | None]:
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

    # --- the host imports ----------------------------------------------------------------

    def select(self, gid: int, key: Key) -> tuple[int, bool, bool]:
        """The variant to run next, whether the choice is final, and whether the run
        should be compared with the reference's on the same inputs."""
        if self.restoring:
            return self._restore(gid, key), True, False
        state = self.state(gid, key)
        if state.decision is not None:
            return state.decision, True, False
        reference = self.groups[gid].reference
        variant, winner = None, None
        group_decisions = len(self.decided_keys.get(gid, ()))
        if not state.confirmation_failed and state.decisions_seen != group_decisions:
            # a key still exploring takes up a warm start once a neighbour is decided, and
            # a nearer one's when that is decided in turn
            if self._warm_starts(self.groups[gid]):
                self._look_for_warm_start(gid, key, state)
        if state.prior is not None and not state.confirmation_failed:
            variant, winner = self._confirm(gid, state)
        if variant is None and winner is None:
            group = self.groups[gid]
            variant, winner = next_or_winner(
                self.rule_for(gid), state.variants, group.preference, group.expected
            )
        if winner is not None:
            self._commit(gid, key, state, winner)
            assert state.decision is not None
            return state.decision, True, False
        state.explored_calls += 1
        assert variant is not None
        self.in_flight = (gid, key, variant)
        return variant, False, variant != reference and not self._validated(gid, key, variant)

    def _validated(self, gid: int, key: Key, variant: int) -> bool:
        """Whether `variant` agreed with the reference at this key, or at another key of
        its size bucket and disagreed at none there."""
        if variant in self.states[(gid, key)].validated:
            return True
        return self.checked.get((gid, size_bucket(key)), {}).get(variant, False)

    def _restore(self, gid: int, key: Key) -> int:
        """The committed (or cached) decision of a key, -1 when there is none; a key
        without one is left without state."""
        known = (gid, key) in self.states
        decision = self.state(gid, key).decision
        if decision is None and not known:
            del self.states[(gid, key)]
        return -1 if decision is None else decision

    def record(self, gid: int, variant: int, elapsed_ns: float, key: Key) -> None:
        state = self.state(gid, key)
        self.in_flight = None
        if 0 <= variant < len(state.variants):
            warmup = self._warmup(gid, key, state, variant)
            self.first_key.setdefault((gid, variant), key)
            state.variants[variant].add(elapsed_ns, warmup)
        if self.observer is not None:
            self.observer(gid, key)

    def _warmup(self, gid: int, key: Key, state: KeyState, variant: int) -> int:
        """The warm-up runs of a variant at a key: the rule's, unless the variant already
        ran at another key of the group; then only the key's first run (of any variant)
        is one. What makes a run cold at a new key is the key's (its sizes' first buffers),
        not each variant's: a static build's first call at a new length took 1.9x its warm
        time, another build's first call at that length, right after, 0.9x."""
        rule = self.rule_for(gid)
        if self.first_key.get((gid, variant), key) == key:
            return rule.warmup
        first_at_key = not any(v.runs for v in state.variants)
        return min(rule.warmup, 1) if first_at_key else 0

    def set_choice(self, gid: int, variant: int) -> None:
        """A choice set by hand for every key of a group (what its setter stores)."""
        for key in self.groups[gid].keys:
            self.manual[(gid, key)] = variant

    def choice(self, gid: int, key: Key) -> tuple[int, str]:
        """What a call of an `explicit` / `init` group at this key runs, as far as this
        process set it: (variant, how) with how one of "set" (by hand), "cache", "tuned",
        or (-1, "none") when nothing was stored (the reference runs)."""
        if (gid, key) in self.manual:
            return self.manual[(gid, key)], "set"
        state = self.states.get((gid, key))
        if state is None or state.decision is None:
            return -1, "none"
        return state.decision, "cache" if state.from_cache else "tuned"

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
        bucket = self.checked.setdefault((gid, size_bucket(key)), {})
        if agrees(got, expected, tolerance):
            state.validated.add(variant)
            bucket.setdefault(variant, True)
            return
        bucket[variant] = False
        stats.reject()
        error = max_error(got, expected)
        warnings.warn(
            f"variant {group.variants[variant]} of {group.qualified_name} disagrees with the "
            f"reference {group.variants[group.reference]} at workload {list(key)} (largest "
            f"difference {error:.3g}, tolerance {tolerance:g}) and is rejected",
            TuningWarning,
            stacklevel=3,
        )

    def decide(self, gid: int, key: Key) -> int:
        """Commit now to the fastest variant measured so far, with the tie-break among
        those within the tie band (the reference, then variant order; the reference if
        none was measured)."""
        state = self.state(gid, key)
        if state.decision is None:
            everyone = list(range(len(state.variants)))
            rule = self.rule_for(gid)
            self._commit(
                gid,
                key,
                state,
                tie_break(rule, state.variants, everyone, self.groups[gid].preference),
            )
        assert state.decision is not None
        return state.decision

    def decided(self, gid: int, key: Key) -> int:
        """The variant committed for this key (from the cache or earlier calls), -1 when
        none is."""
        decision = self.state(gid, key).decision
        return -1 if decision is None else decision

    def _commit(self, gid: int, key: Key, state: KeyState, winner: int) -> None:
        """Commit `winner`, unless the tuning cache already holds a decision for the key
        (another process committed first while this one explored): that one stands and
        is adopted, so every process runs the same variant and reports the cache's."""
        group = self.groups[gid]
        state.tie = self._tie(gid, state, winner)
        if self.cache is not None:
            stats = {
                "variants": state.summaries(group.variants),
                "explored_calls": state.explored_calls,
                "tie": state.tie,
            }
            info = self.device.__dict__ if self.device else {}
            entry = Entry(
                self.cache_key(gid, key), group.variants[winner], stats, dict(info), time.time()
            )
            stored = self.cache.commit(entry)
            if stored.variant != entry.variant and stored.variant in group.variants:
                winner = group.variants.index(stored.variant)
                state.adopted = True
                state.from_cache = True
                state.cached_stats = stored.stats.get("variants")
                state.tie = _tie_of(stored.stats)
        state.decision = winner
        self._note_decided(gid, key, state)
        if self.observer is not None:
            self.observer(gid, key)

    def _tie(self, gid: int, state: KeyState, winner: int) -> dict | None:
        """How the tie band took part in choosing `winner`: the band and the variants
        within it of the fastest (None when the winner had no other variant in it)."""
        rule = self.rule_for(gid)
        candidates = [i for i, v in enumerate(state.variants) if not v.eliminated]
        if winner not in candidates or not math.isfinite(state.variants[winner].median):
            return None
        band = tied(rule, state.variants, candidates)
        if len(band) < 2 or winner not in band:
            return None
        names = self.groups[gid].variants
        fastest = min(band, key=lambda i: (state.variants[i].median, i))
        return {"band": rule.band, "tied": [names[i] for i in band], "fastest": names[fastest]}


def _tie_of(stats: dict) -> dict | None:
    """The `tie` of a cache entry's statistics, when it is well formed."""
    tie = stats.get("tie")
    ok = isinstance(tie, dict) and isinstance(tie.get("tied"), list)
    return tie if ok and isinstance(tie.get("band"), int | float) else None


def size_bucket(key: Key) -> Key:
    """The size bucket of a workload key: each value's power of two (floor of its log2;
    values below 1 count as 1). Keys of one bucket differ by less than 2x in each size."""
    return tuple(max(int(v), 1).bit_length() - 1 for v in key)


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
