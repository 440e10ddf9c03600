"""The table of committed dynamic workload keys that an online site reads on every call.

A site's table has `TABLE_SLOTS` slots, a key in the slot its hash names: once each
decided size has been called, calls at any of them run their variants without a host
call, however many there are. Each key's own variant must run (a tagged kernel adds its
tag, so a key that ran another key's choice shows it), and a key whose slot another key
took asks the host again.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from modules import tagged_module

from autotune_runtime import load
from autotune_runtime.cache import Entry
from lowering.committed import HASH_MULTIPLIER, TABLE_SLOTS
from lowering.driver import compile


def slot(*key: int) -> int:
    """The slot of a key, as the lowered code computes it (wrapping i64 arithmetic)."""
    hashed = 0
    for value in key:
        hashed = ((hashed ^ value) * HASH_MULTIPLIER) % 2**64
    return hashed >> (64 - (TABLE_SLOTS - 1).bit_length())


def _spread_sizes(count: int) -> list[int]:
    """`count` sizes from 8 up whose slots all differ."""
    sizes, taken = [], set()
    n = 8
    while len(sizes) < count:
        if slot(n) not in taken:
            taken.add(slot(n))
            sizes.append(n)
        n += 1
    return sizes


SPREAD = _spread_sizes(40)
CLASH = next((a, b) for a in range(8, 200) for b in range(a + 1, 200) if slot(a) == slot(b))
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


def test_the_slots_of_a_key_spread_sizes_that_share_low_bits():
    powers = {slot(2**k) for k in range(3, 20)}
    multiples = {slot(64 * k) for k in range(1, 33)}
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


def test_a_key_whose_slot_another_took_asks_the_host_again(dynamic_vmfb, tmp_path):
    module, asked = _decided_module(dynamic_vmfb, tmp_path / "c.sqlite")
    first, second = CLASH
    for n in (first, second, first, first, second):
        _run(module, n)
    # the second took the first's slot, and the first took it back: each asked again
    assert asked == [(first,), (second,), (first,), (second,)]
    module.close()
