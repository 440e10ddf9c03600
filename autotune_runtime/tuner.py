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
load, and the group's own attributes (`autotune_contracts.stop_rule.GROUP_SETTINGS`: `warmup`,
`min_samples`, `max_samples`, `confidence`, `tolerance`, `tie_band`, `warm_start`).

Warm start (`warm_start.py`): a workload key of a group with a workload learns from the
times its variants took at the group's other keys.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable

import numpy as np

from autotune_contracts.workloads import Key
from autotune_runtime.cache import CacheKey, CacheWarning, Entry, TuningCache
from autotune_runtime.compare import agrees, max_error
from autotune_runtime.fingerprint import DeviceFingerprint
from autotune_runtime.interrupts import held_back
from autotune_runtime.key_state import GroupInfo, KeyState
from autotune_runtime.run_queue import disturbed
from autotune_runtime.stats import StopRule, VariantStats, next_or_winner, tie_break, tied
from autotune_runtime.warm_start import WarmStarts


class TuningWarning(UserWarning):
    """A variant was excluded from tuning (its results disagree, or it failed)."""


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
        self.rule = rule or StopRule()
        self._rules: dict[int, StopRule] = {}
        self.cache = cache
        self.device = device
        self.states: dict[tuple[int, Key], KeyState] = {}
        self.warm = WarmStarts(groups, self.rule_for, cache, self.cache_key, warm_start)
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
            elif entry is not None:
                state.unknown_cached = entry.variant
                warnings.warn(
                    f"tuning cache {self.cache.path}: the decision for {group.qualified_name} at "
                    f"{list(key)} names {entry.variant!r}, which is not a variant of the group "
                    f"({', '.join(group.variants)}); it is not used, and the decision tuned "
                    "for this key replaces it",
                    CacheWarning,
                    stacklevel=2,
                )
            self.states[(gid, key)] = state
        return self.states[(gid, key)]

    # --- the host imports ----------------------------------------------------------------

    def select(self, gid: int, key: Key) -> tuple[int, bool, bool]:
        """The variant to run next, whether the choice is final, and whether the run
        should be compared with the reference's on the same inputs."""
        if self.restoring:
            return self._restore(gid, key), True, False
        state = self.state(gid, key)
        if state.decision is not None:
            return state.decision, True, False
        group = self.groups[gid]
        variant, winner = None, None
        warm = self.warm.applies(group)
        if warm:
            if not any(v.runs for v in state.variants):
                state.guess = self.warm.guess(gid, key)
            self.warm.look(gid, key, state)
        prior = state.prior
        if prior is not None and prior.informative and not state.confirmation_failed:
            variant, winner = self.warm.confirm(gid, state)
        if variant is None and winner is None:
            variant, winner = next_or_winner(
                self.rule_for(gid), state.variants, group.preference, group.expected, state.guess
            )
        if winner is not None:
            self._commit(gid, key, state, winner)
            assert state.decision is not None
            return state.decision, True, False
        state.explored_calls += 1
        assert variant is not None
        self.in_flight = (gid, key, variant)
        validate = variant != group.reference and not self._validated(gid, key, variant)
        return variant, False, validate

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

    def record(
        self, gid: int, variant: int, elapsed_ns: float, key: Key, waited_ns: float = 0.0
    ) -> None:
        """A run's time, and how long the process's threads waited for a CPU during it
        (`waited_ns`: a run held up by other processes is discounted, `stats.py`)."""
        state = self.state(gid, key)
        self.in_flight = None
        if 0 <= variant < len(state.variants):
            warmup = self._warmup(gid, key, state, variant)
            self.first_key.setdefault((gid, variant), key)
            stats = state.variants[variant]
            discount = stats.discounted < self.rule_for(gid).max_samples
            samples = len(stats.samples)
            stats.add(elapsed_ns, warmup, disturbed(elapsed_ns, waited_ns), discount)
            if len(stats.samples) > samples:
                self.warm.observe(gid, key, variant, float(elapsed_ns))
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
        tolerance = self.rule_for(gid).tolerance
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

    @held_back()  # SIGINT: the decision is stored and known here whole, or not at all
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
            stored = self._store(entry, state)
            if stored.variant != entry.variant and stored.variant in group.variants:
                winner = group.variants.index(stored.variant)
                state.adopted = True
                state.from_cache = True
                state.cached_stats = stored.stats.get("variants")
                state.tie = _tie_of(stored.stats)
        state.decision = winner
        if self.observer is not None:
            self.observer(gid, key)

    def _store(self, entry: Entry, state: KeyState) -> Entry:
        """Commit a decision to the tuning cache (the first one committed for its key
        stands); a stored decision naming a variant the group lacks is no decision, and
        this one replaces it. Returns the decision that stands."""
        if state.unknown_cached is not None:
            stored = self.cache.get(entry.key)
            if stored is not None and stored.variant == state.unknown_cached:
                self.cache.put(entry)
                state.unknown_cached = None
                return self.cache.get(entry.key) or entry
        return self.cache.commit(entry)

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
