"""The table of committed dynamic workload keys that an online site reads on every call.

Each site remembers `COMMITTED_KEYS` committed keys, the most recent first: calls
alternating between decided sizes run their variants without a host call. Each key's own
variant must run (a tagged kernel adds its tag, so a key that ran another key's choice
shows it), and a key that left the table asks the host again.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from modules import tagged_module

from autotune_runtime import load
from autotune_runtime.cache import Entry
from lowering.driver import compile
from lowering.exploration import COMMITTED_KEYS

# variant vK adds K + 1 to every element; each size has a decision of its own
DECIDED = {8: "v0", 9: "v1", 10: "v2", 11: "v1", 12: "v0"}


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


def test_calls_alternating_between_decided_sizes_stay_off_the_host(dynamic_vmfb, tmp_path):
    module, asked = _decided_module(dynamic_vmfb, tmp_path / "c.sqlite")
    sizes = list(DECIDED)[:COMMITTED_KEYS]
    for n in sizes:  # each size's first call asks the host, which answers from the cache
        _run(module, n)
    assert asked == [(n,) for n in sizes]
    asked.clear()
    for _ in range(5):
        for n in reversed(sizes):
            _run(module, n)
        for n in sizes[::2] + sizes[1::2]:
            _run(module, n)
    assert asked == []  # every size is in the table: no host call
    module.close()


def test_a_key_that_left_the_table_asks_the_host_again(dynamic_vmfb, tmp_path):
    module, asked = _decided_module(dynamic_vmfb, tmp_path / "c.sqlite")
    sizes = list(DECIDED)[: COMMITTED_KEYS + 1]
    for n in sizes:
        _run(module, n)
    asked.clear()
    _run(module, sizes[0])  # the oldest left when the last entered
    _run(module, sizes[-1])  # the most recent two are in the table
    _run(module, sizes[0])
    assert asked == [(sizes[0],)]
    module.close()
