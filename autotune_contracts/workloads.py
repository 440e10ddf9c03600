"""Workload keys: the problem sizes a group's call is tuned at, and how near two are (the
lowered `static` code and the runtime's warm start both take the nearest decided key)."""

from __future__ import annotations

import math

Key = tuple[int, ...]
"""A call's workload: the integers its group's `workload` names, in order."""


def key_distance(a: Key, b: Key) -> float:
    """Distance between two workload keys of one group: the sum of |log2 a_i - log2 b_i|
    (sizes below 1 count as 1)."""
    return sum(abs(math.log2(max(x, 1)) - math.log2(max(y, 1))) for x, y in zip(a, b, strict=True))
