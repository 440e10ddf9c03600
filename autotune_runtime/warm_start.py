"""Warm start: a workload key of a group with a workload learns from what its variants
took at the group's other keys, in this process or in the tuning cache (same device,
module and group): which variant runs first, which variants cannot win there, and how
few samples confirm the likely winner.

What is known of the other keys: each variant's fastest timed sample at each key it ran
at (`observe`; a decided key of the cache gives each variant's fastest sample there).
Distance between keys of one group: the sum over the workload's dimensions of
|log2(a) - log2(b)| (sizes compare by ratio).

Bounds. A kernel's time is assumed never to shrink as a size grows, and to grow at most
like a power e of each size: the cube (`GROWTH_EXPONENT`, as a matmul's) until the group
shows less, then `SLOPE_MARGIN` times the steepest growth of a variant's time seen between
two of its keys one to three octaves apart (at least 1). So a time t of a variant at a key
n bounds its time at a key k from below by t / 2 ** (e * down) and from above by
t * 2 ** (e * up), where down is how far n lies above k (the sum over the dimensions where
n is larger) and up how far k lies above n. At a key between two measured ones the time
is so held between its neighbours' (the one below bounds it from below, the one above
from above), with no growth allowance at all. A variant whose low bound at k exceeds the
lowest high bound there, by more than the rule's indifference, cannot win at k and is
ruled out: it never runs there again (`KeyState.bounds` keeps its low bound, for reports
and for later keys); one that already ran at k is ruled out only where its fastest sample
there exceeds that limit too (a key of a shuffled stream starts exploring before its
neighbours are measured, and then stops running what they rule out). The bounds are
taken from the nearest measured keys on each side of k (two each, per variant) in a
one-dimensional workload, in a wider one from the measured keys whose total size (the
product of the values) is within 2 ** 4 of k's; they are taken again whenever a time
changed within their reach (or e did), however far exploring keys are from being decided.

Confirmation: the variant with the lowest high bound (the likely winner) runs first, and
where the bounds ruled at least one variant out, the stop rule over the remaining
contenders takes `confirm_samples` (default 1) timed samples each, no fewer and no more:
if the likely winner is fastest among them (a tie within the noise going to it), it
is committed (without a timed sample of its own where the others' are slower than its
cold run, the key's first); otherwise the key is explored with the group's rule over the contenders,
keeping the samples taken. Where the
bounds rule nothing out the key is explored with the group's rule, the guess (below)
first. The reference stays a contender of `explicit` and `init` groups (their checks need
its results). Off for a group with `warm_start = false`, or for all with the load option
`warm_start=False`; a key measured nowhere else then runs the reference first.

The first call at a new key (before any bound rules a variant out) runs `guess`: the
variant whose time, interpolated between its measured neighbours, is lowest.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from autotune_contracts.policy import Policy
from autotune_contracts.workloads import Key
from autotune_runtime.cache import CacheKey, TuningCache
from autotune_runtime.key_state import GroupInfo, KeyState, WarmStart
from autotune_runtime.stats import (
    StopRule,
    VariantStats,
    next_or_winner,
)

GROWTH_EXPONENT = 3
"""Warm start assumes a kernel's time grows with each size at most like its cube (as a
matmul's does) and never shrinks as a size grows, until its group shows less."""
SLOPE_MARGIN = 1.5
"""The growth exponent learned from a group: this times the steepest growth seen."""
SLOPE_SPAN = (1.0, 3.0)
"""Distances (octaves) between two keys whose times a growth is learned from."""
NEAREST = 2
"""Measured keys taken on each side of a key, per variant, in a one-dimensional workload."""
NEWS = 0.99
"""A key's fastest time counts as changed (its neighbours look again) when a sample is
faster than it by more than 1%."""
WINDOW = 4.0
"""In a wider workload, how far (octaves of total size) measured keys are taken from."""


class Point(NamedTuple):
    """What is known of a variant's time at one key: bounds from below and above, and
    whether they are its fastest timed sample (else they come from warm-up runs)."""

    low: float
    high: float
    timed: bool


class Changes:
    """What changed in one group's times, and when: a version counted up at each change,
    each key's latest change, those keys by log size (sorted), and the growth exponent's
    latest change. Whether anything changed within a key's reach since its last look
    costs the keys there, not every change since (a shuffled stream made hundreds)."""

    def __init__(self) -> None:
        self.version = 0
        self.latest: dict[Key, int] = {}
        self.sizes: list[tuple[float, Key]] = []
        self.exponent = 0

    def key_changed(self, key: Key) -> None:
        self.version += 1
        if key not in self.latest:
            bisect.insort(self.sizes, (_log_size(key), key))
        self.latest[key] = self.version

    def exponent_changed(self) -> None:
        self.version += 1
        self.exponent = self.version

    def since(self, version: int, key: Key, low: float, high: float) -> bool:
        """Whether, after `version`, the exponent changed or a time at a key other than
        `key` whose log size is within [low, high]."""
        if self.exponent > version:
            return True
        start = bisect.bisect_left(self.sizes, (low,))
        end = bisect.bisect_right(self.sizes, (high, (math.inf,)))
        return any(self.latest[k] > version for _, k in self.sizes[start:end] if k != key)


class WarmStarts:
    """What each variant of every group took at the keys it ran at, and the bounds,
    guesses and confirmations that new keys take from it."""

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
        self.points: dict[int, list[dict[Key, Point]]] = {}
        """Per group and variant, what is known of its time at each key it ran at."""
        self._sizes: dict[int, list[list[tuple[float, Key]]]] = {}
        """Per group and variant, the keys of `points` by log2 size (the sum of their
        values' log2; sorted): the nearest on each side, or those within `WINDOW`, are
        found by bisection."""
        self.slopes: dict[int, float] = {}
        """Per group of a one-dimensional workload, the steepest growth of a variant's
        time seen between two of its keys `SLOPE_SPAN` apart (log time over log size)."""
        self.changes: dict[int, Changes] = {}
        """Per group, what changed in what is known, and when: a key looks again when a
        time changed within the reach of its last bounds (or the growth exponent did)."""
        self._confirmation_rules: dict[int, StopRule] = {}

    def applies(self, group: GroupInfo) -> bool:
        """Whether keys of `group` learn from each other."""
        return self.enabled and group.workload_arity > 0 and self.rule_for(group.gid).warm_start

    def observe(self, gid: int, key: Key, variant: int, elapsed_ns: float) -> None:
        """A timed sample of a variant at a key."""
        if not 0.0 < elapsed_ns < math.inf:
            return
        before = self._points(gid, variant).get(key)
        if before is not None and before.timed and elapsed_ns >= before.high * NEWS:
            return
        self._put(gid, key, variant, Point(elapsed_ns, elapsed_ns, True))

    def _points(self, gid: int, variant: int) -> dict[Key, Point]:
        per_variant = self.points.get(gid)
        if per_variant is None:
            per_variant = self.points[gid] = [{} for _ in self.groups[gid].variants]
            self._sizes[gid] = [[] for _ in self.groups[gid].variants]
        return per_variant[variant]

    def _put(self, gid: int, key: Key, variant: int, point: Point) -> None:
        seen = self._points(gid, variant)
        before = seen.get(key)
        new = before is None
        seen[key] = point
        self._changes(gid).key_changed(key)
        sizes = self._sizes[gid][variant]  # made with `points` (`_points`)
        if new:
            bisect.insort(sizes, (_log_size(key), key))
        if len(key) == 1 and point.timed and (new or not before.timed):  # its first time
            self._learn_slope(gid, key, seen, sizes)

    def _changes(self, gid: int) -> Changes:
        changes = self.changes.get(gid)
        if changes is None:
            changes = self.changes[gid] = Changes()
        return changes

    def _learn_slope(
        self, gid: int, key: Key, seen: dict[Key, Point], sizes: list[tuple[float, Key]]
    ) -> None:
        """Take the growth between a variant's new time at `key` and its times at the
        keys `SLOPE_SPAN` away into the group's steepest."""
        here, near, far = _log_size(key), *SLOPE_SPAN
        steepest = self.slopes.get(gid, 0.0)
        for lo, hi in ((here - far, here - near), (here + near, here + far)):
            start = bisect.bisect_left(sizes, (lo,))
            for size, other in sizes[start : bisect.bisect_right(sizes, (hi, (math.inf,)))]:
                if not seen[other].timed:
                    continue
                small, large = (other, key) if size < here else (key, other)
                growth = math.log2(seen[large].high / seen[small].high) / abs(here - size)
                steepest = max(steepest, growth)
        before = self.exponent(gid)
        self.slopes[gid] = steepest
        if self.exponent(gid) != before:
            self._changes(gid).exponent_changed()

    def exponent(self, gid: int) -> float:
        """The growth exponent of the bounds: `SLOPE_MARGIN` times the group's steepest
        growth seen (at least 1: linear), `GROWTH_EXPONENT` at most and before any."""
        if gid not in self.slopes or self.slopes[gid] <= 0.0:
            return float(GROWTH_EXPONENT)
        return min(float(GROWTH_EXPONENT), max(1.0, SLOPE_MARGIN * self.slopes[gid]))

    def _read_cached_neighbours(self, gid: int, key: Key) -> None:
        """Observe the fastest samples of the group's decided keys that the tuning cache
        holds (another process's, or an earlier run's)."""
        if self.cache is None:
            return
        names = self.groups[gid].variants
        for entry in self.cache.neighbours(self.cache_key(gid, key)):
            other = entry.key.workload
            if len(other) != len(key) or other == key:
                continue
            for variant, point in _cached_points(names, entry.stats.get("variants")):
                known = self._points(gid, variant).get(other)
                if known is None or (point.timed and not known.timed):
                    self._put(gid, other, variant, point)

    def guess(self, gid: int, key: Key) -> int | None:
        """The variant likely fastest at a key not measured yet, to run first there: each
        variant's time interpolated (log size, log time) between its fastest samples at
        the nearest keys below and above, or extrapolated from one side with the slope of
        the two nearest there (linear in the size when one is known). None before any
        variant was timed. Only the order of exploration follows it."""
        size = _log_size(key)
        best, chosen = math.inf, None
        for variant, seen in enumerate(self.points.get(gid, ())):
            below, above = self._near(gid, variant, key, size)
            near = [(s, seen[k].high) for s, k in (*below, *above) if seen[k].timed]
            predicted = _predict(near, size)
            if predicted < best:
                best, chosen = predicted, variant
        return chosen

    def look(self, gid: int, key: Key, state: KeyState) -> None:
        """Take the bounds at `key` again if any time changed since the last look: rule
        out the variants that cannot win (eliminated, their low bound kept) and set the
        key's warm start (the likely winner and the contenders)."""
        if state.seen_version < 0:
            self._read_cached_neighbours(gid, key)
            state.seen_version = 0
        changes = self._changes(gid)
        seen, state.seen_version = state.seen_version, changes.version
        size = _log_size(key)
        below, above = state.reach
        # a key's own times do not bound it, nor times beyond the keys its bounds came from
        if state.prior is not None and not changes.since(seen, key, size - below, size + above):
            return
        lows, highs, sources, state.reach = self._bounds(gid, key)
        # the likely winner: lowest high bound among the variants neither ruled out nor
        # failed (one the stop rule eliminated here fails the confirmation)
        usable = [
            i
            for i, v in enumerate(state.variants)
            if i not in state.bounds and not (v.failed or v.rejected)
        ]
        if not usable or all(highs[i] == math.inf for i in usable):
            return
        winner = min(usable, key=lambda i: (highs[i], i))
        live = [i for i in usable if not state.variants[i].eliminated]
        limit = highs[winner] * (1.0 + self.rule_for(gid).indifference)
        group = self.groups[gid]
        keep = {winner}
        if group.policy in (Policy.EXPLICIT, Policy.INIT):
            keep.add(group.reference)
        for i in live:
            if i not in keep and lows[i] > limit and state.variants[i].minimum > limit:
                state.variants[i].eliminated = True
                state.bounds[i] = lows[i]
        contenders = tuple(i for i, v in enumerate(state.variants) if not v.eliminated)
        state.prior = WarmStart(sources[winner], winner, contenders, bool(state.bounds))

    def _bounds(
        self, gid: int, key: Key
    ) -> tuple[list[float], list[float], list[Key], tuple[float, float]]:
        """Per variant, its low and high bound at `key` (0 and inf where nothing is
        known) and the key its high bound came from; and the reach of the keys they came
        from (how far below and above `key`, in log size, a change could tighten them:
        inf on a side where some variant had fewer than `NEAREST` measured keys)."""
        count = len(self.groups[gid].variants)
        points = self.points.get(gid)
        if not points:
            return [0.0] * count, [math.inf] * count, [key] * count, (math.inf, math.inf)
        exponent = self.exponent(gid)
        size = _log_size(key)
        lows, highs, sources = [], [], []
        one = len(key) == 1
        reach_below = reach_above = 0.0 if one else WINDOW
        for variant, seen in enumerate(points):
            low, high, source = 0.0, math.inf, key
            below, above = self._near(gid, variant, key, size)
            if one:  # (plain comparisons: this runs on every look of every exploring key)
                if len(below) < NEAREST:
                    reach_below = math.inf
                elif size - below[0][0] > reach_below:
                    reach_below = size - below[0][0]
                if len(above) < NEAREST:
                    reach_above = math.inf
                elif above[-1][0] - size > reach_above:
                    reach_above = above[-1][0] - size
                for other_size, other in below:  # no lower bound beyond its own low
                    point = seen[other]
                    if point.low > low:
                        low = point.low
                    bound = point.high * 2.0 ** (exponent * (size - other_size))
                    if bound < high:
                        high, source = bound, other
                for other_size, other in above:  # no upper bound beyond its own high
                    point = seen[other]
                    floor = point.low / 2.0 ** (exponent * (other_size - size))
                    if floor > low:
                        low = floor
                    if point.high < high:
                        high, source = point.high, other
            else:
                for _, other in below:
                    point = seen[other]
                    up, down = _climb(other, key)
                    floor = point.low / 2.0 ** (exponent * down) if down > 0.0 else point.low
                    if floor > low:
                        low = floor
                    bound = point.high * 2.0 ** (exponent * up) if up > 0.0 else point.high
                    if bound < high:
                        high, source = bound, other
            lows.append(low)
            highs.append(high)
            sources.append(source)
        return lows, highs, sources, (reach_below, reach_above)

    def _near(
        self, gid: int, variant: int, key: Key, size: float
    ) -> tuple[list[tuple[float, Key]], list[tuple[float, Key]]]:
        """The measured keys of a variant that bound it at `key` (of log size `size`; not
        `key` itself), as (log size, key), below and above it: the `NEAREST` on each side
        in a one-dimensional workload (in order of size); else, all as the first list,
        those whose log size is within `WINDOW` of it (a key farther bounds little: its
        growth allowance is at least 2 ** WINDOW)."""
        sizes = self._sizes[gid][variant]  # the variant is in `points`
        if len(key) != 1:
            start = bisect.bisect_left(sizes, (size - WINDOW,))
            end = bisect.bisect_right(sizes, (size + WINDOW, (math.inf,)))
            return [(s, k) for s, k in sizes[start:end] if k != key], []
        at = bisect.bisect_left(sizes, (size, key))
        after = at + 1 if at < len(sizes) and sizes[at][1] == key else at
        return sizes[max(at - NEAREST, 0) : at], sizes[after : after + NEAREST]

    def confirm(self, gid: int, state: KeyState) -> tuple[int | None, int | None]:
        """Confirmation of a warm start: the stop rule over the contenders. (variant to
        run, None); or (None, winner) when the likely winner wins (or is the only
        contender left); or (None, None) when another contender does (the key is then
        explored with the group's rule)."""
        prior = state.prior
        assert prior is not None and prior.informative  # else the group's rule explores
        contenders = [i for i in prior.contenders if not state.variants[i].eliminated]
        if contenders == [prior.winner]:
            return None, prior.winner
        if prior.winner not in contenders:
            state.confirmation_failed = True
            return None, None
        stats = [state.variants[i] for i in contenders]
        first = contenders.index(prior.winner)
        rule = self.confirmation_rule(gid)
        if _beaten_cold(rule, stats, first):
            return None, prior.winner
        variant, winner = next_or_winner(rule, stats, first)
        if winner is None:
            assert variant is not None
            return contenders[variant], None
        if contenders[winner] == prior.winner and not stats[winner].eliminated:
            return None, prior.winner
        state.confirmation_failed = True
        for v in stats:  # explored now with the full rule: eliminated by it only
            v.eliminated = v.failed or v.rejected
        return None, None

    def confirmation_rule(self, gid: int) -> StopRule:
        """The stop rule of a warm start's confirmation: the group's, with
        `confirm_samples` timed samples per contender (the bounds are the prior: one
        sample each tells whether the likely winner holds)."""
        rule = self._confirmation_rules.get(gid)
        if rule is None:
            full = self.rule_for(gid)
            samples = min(full.confirm_samples, full.min_samples)
            rule = replace(full, min_samples=samples, max_samples=samples)
            self._confirmation_rules[gid] = rule
        return rule


def _beaten_cold(rule: StopRule, stats: list[VariantStats], first: int) -> bool:
    """Whether the likely winner (`stats[first]`), run only cold at the key so far (its
    run there was the key's first, a warm-up), already wins the confirmation: every other
    contender has its samples and a median above the winner's cold run by more than the
    indifference. A cold run is never faster than a warm one, so the winner's timed
    sample could only confirm it: a call of the key's fastest variant saved (the second
    of three, at most keys of B8)."""
    winner = stats[first]
    if winner.samples or not winner.cold:
        return False
    limit = winner.cold_minimum * (1.0 + rule.indifference)
    return all(
        len(v.samples) >= rule.min_samples and v.median > limit
        for i, v in enumerate(stats)
        if i != first
    )


def _climb(other: Key, key: Key) -> tuple[float, float]:
    """How far `key` lies above `other` (the sum of log2 ratios over the dimensions where
    it is larger) and how far below it (where it is smaller)."""
    up = down = 0.0
    for a, b in zip(other, key, strict=True):
        step = math.log2(max(b, 1)) - math.log2(max(a, 1))
        if step > 0:
            up += step
        else:
            down -= step
    return up, down


def _predict(near: list[tuple[float, float]], size: float) -> float:
    """A variant's time at a key of log size `size` from its fastest samples (log size,
    time) at the keys near it (`WarmStarts.guess`); inf when it has none."""
    if not near:
        return math.inf
    points = sorted((s, math.log2(t)) for s, t in near)
    below = [p for p in points if p[0] <= size]
    above = [p for p in points if p[0] > size]
    if below and above:
        (s0, t0), (s1, t1) = below[-1], above[0]
        return 2.0 ** (t0 + (t1 - t0) * (size - s0) / (s1 - s0))
    side = below[-2:] if below else above[:2]
    slope = 1.0
    if len(side) == 2 and side[1][0] > side[0][0]:
        slope = min(max((side[1][1] - side[0][1]) / (side[1][0] - side[0][0]), 0.0), 3.0)
    s0, t0 = side[-1] if below else side[0]
    return 2.0 ** (t0 + slope * (size - s0))


@functools.lru_cache(maxsize=4096)
def _log_size(key: Key) -> float:
    """A key's size: the sum of its values' log2 (values below 1 count as 1)."""
    return sum(math.log2(max(v, 1)) for v in key)


def _cached_points(variants: tuple[str, ...], stats: object) -> list[tuple[int, Point]]:
    """(variant, what is known of its time) from a cache entry's per-variant statistics
    (`KeyState.summaries`): its fastest timed sample, else its low estimate (`low_ns`),
    for the variants that have a usable one."""
    found = []
    if not isinstance(stats, list):
        return found
    for item in stats:
        if not isinstance(item, dict) or item.get("variant") not in variants:
            continue
        variant = variants.index(item["variant"])
        fastest, low, samples = item.get("min_ns"), item.get("low_ns"), item.get("samples")
        if _number(fastest) and isinstance(samples, int) and samples > 0:
            found.append((variant, Point(float(fastest), float(fastest), True)))
        elif _number(low):
            found.append((variant, Point(float(low), math.inf, False)))
    return found


def _number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0.0 < float(value) < math.inf
    )
