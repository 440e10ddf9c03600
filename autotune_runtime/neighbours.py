"""The workload keys of a group that lie near a given one: where a new key's first run and
the variants it need not run are read from (`Tuner._opener`, `Tuner._ruled_out`)."""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Callable, Iterator

from autotune_contracts.workloads import Key, key_distance

RECENT_KEYS = 64
"""Keys of more than one value: how many of the group's keys seen last are searched (a
key of one value is found among all of them, in order of size)."""
STEPS = 16
"""Keys of one value: how many keys on each side are looked at, at most, for one that
`accept`s."""


class KeyIndex:
    """The keys a group has state for: in the order they were seen and, for keys of one
    value, in order of size (a lookup then costs a bisection, not a pass over them)."""

    def __init__(self) -> None:
        self.seen: dict[Key, None] = {}
        self.by_size: list[Key] = []

    def add(self, key: Key) -> None:
        if key in self.seen:
            return
        self.seen[key] = None
        if len(key) == 1:
            bisect.insort(self.by_size, key)

    def nearest(self, key: Key, accept: Callable[[Key], bool]) -> Iterator[tuple[float, Key]]:
        """The other keys that `accept` takes, nearest first (`key_distance`), with their
        distance: for keys of one value the nearest on each side in turn, `STEPS` at most
        each way; otherwise among the `RECENT_KEYS` seen last."""
        if len(key) != 1:
            recent = itertools.islice(reversed(self.seen), RECENT_KEYS)
            found = [(key_distance(o, key), o) for o in recent if o != key and accept(o)]
            yield from heapq.nsmallest(len(found), found)
            return
        at = bisect.bisect_left(self.by_size, key)
        below = (o for o in reversed(self.by_size[max(0, at - STEPS) : at]) if accept(o))
        above = (o for o in self.by_size[at : at + STEPS + 1] if o != key and accept(o))
        firsts = (next(below, None), next(above, None))
        sides = [(key_distance(o, key), o) for o in firsts if o is not None]
        while sides:
            sides.sort()
            distance, other = sides.pop(0)
            yield distance, other
            following = next(below if other < key else above, None)
            if following is not None:
                sides.append((key_distance(following, key), following))
