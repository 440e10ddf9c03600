"""The table of committed dynamic workload keys that an online site reads on every call.

A site's table has `TABLE_SETS` sets of `TABLE_WAYS` slots, a key in a slot of the set its
hash names: once each decided size has been called, calls at any of them run their
variants without a host call, however many there are. Each key's own variant must run (a
tagged kernel adds its tag, so a key that ran another key's choice shows it); two keys of
one set both keep their slots, and a key whose slot a third key of its set took asks the
host again.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from modules import tagged_module

from autotune_runtime import load
from autotune_runtime.cache import Entry
from lowering.committed import HASH_MULTIPLIER, TABLE_SETS, TABLE_WAYS
from lowering.driver import compile


def set_of(*key: int) -> int:
    """The set of a key, as the lowered code computes it (wrapping i64 arithmetic)."""
    hashed = 0
    for value in key:
        hashed = ((hashed ^ value) * HASH_MULTIPLIER) % 2**64
    return hashed >> (64 - (TABLE_SETS - 1).bit_length())


def _spread_sizes(count: int) -> list[int]:
    """`count` sizes from 8 up whose sets all differ."""
    sizes, taken = [], set()
    n = 8
    while len(sizes) < count:
        if set_of(n) not in taken:
            taken.add(set_of(n))
            sizes.append(n)
        n += 1
    return sizes


def _sharing_one_set(count: int) -> tuple[int, ...]:
    """The first `count` sizes from 8 up that share a set."""
    members: dict[int, list[int]] = {}
    for n in range(8, 100_000):
        found = members.setdefault(set_of(n), [])
        found.append(n)
        if len(found) == count:
            return tuple(found)
    raise AssertionError(f"no {count} sizes share a set")


SPREAD = _spread_sizes(40)
CLASH = _sharing_one_set(TABLE_WAYS + 1)
# variant vK adds K + 1 to every element; each size has a decision of its own
DECIDED = {n: f"v{n % 3}" for n in {*SPREAD, *CLASH}}


@pytest.fixture(scope="module")
def dynamic_vmfb() -> bytes:
    return compile(tagged_module(3, dynamic=True), target="llvm-cpu")


def _decided_module(vmfb: bytes, path):
    """The module loaded on a tuning cache that holds `DECIDED`, and a log of the host
    `select` calls its calls make."""
    module = load(vmfb, device="local-sync", cache=path)
    (gid,) = module.groups
    for n, variant in DECIDED.items():
        key = module.tuner.cache_key(gid, (n,))
        module.cache.put(Entry(key, variant, {}, {}, time.time()))
    asked: list[tuple[int, ...]] = []
    select = module.tuner.select

    def logged(group: int, key: tuple[int, ...]):
        asked.append(key)
        return select(group, key)

    module.tuner.select = logged
    return module, asked


def _run(module, n: int) -> None:
    x = np.arange(n, dtype=np.float32)
    tag = int(DECIDED[n][1:]) + 1
    np.testing.assert_array_equal(module.run(x), x + tag)


def test_the_sets_of_keys_spread_sizes_that_share_low_bits():
    powers = {set_of(2**k) for k in range(3, 20)}
    multiples = {set_of(64 * k) for k in range(1, 33)}
    assert len(powers) >= 12 and len(multiples) >= 20  # of 17 and 32, not one or two


def test_calls_over_many_decided_sizes_stay_off_the_host(dynamic_vmfb, tmp_path):
    module, asked = _decided_module(dynamic_vmfb, tmp_path / "c.sqlite")
    for n in SPREAD:  # each size's first call asks the host, which answers from the cache
        _run(module, n)
    assert asked == [(n,) for n in SPREAD]
    asked.clear()
    rng = np.random.default_rng(0)
    for _ in range(3):
        for n in rng.permutation(SPREAD):
            _run(module, int(n))
    assert asked == []  # every size holds its slot: no host call
    module.close()


def test_a_key_whose_slot_a_third_key_of_its_set_took_asks_the_host_again(dynamic_vmfb, tmp_path):
    module, asked = _decided_module(dynamic_vmfb, tmp_path / "c.sqlite")
    first, second, third = CLASH
    for n in (first, second, first, second, first):
        _run(module, n)
    assert asked == [(first,), (second,)]  # two keys of one set: both keep their slots
    asked.clear()
    for n in (third, third, second, first, second):
        _run(module, n)
    # the third took the first slot, its holder (second) moved to the other and the
    # first key, the least recently stored, left: it asks again and takes the first slot
    # back, the third moving over the second, which asks again too
    assert asked == [(third,), (first,), (second,)]
    module.close()
