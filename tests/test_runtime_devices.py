"""The device a loaded module runs on: IREE's caching allocator keeps the buffers that one
call frees for the next (the results of every call, and while online tuning explores, the
timed variant's and the reference's), so repeated calls allocate from the device's own
allocator about once; `allocator=None` is the device's own allocator alone."""

from __future__ import annotations

import numpy as np
import pytest

from autotune_runtime import load
from autotune_runtime.devices import CACHING_ALLOCATOR, open_device
from benchmarks.common import compile_module
from benchmarks.kernels import speed_module

SIZE = 65536
RESULT_BYTES = SIZE * 4
CALLS = 40


@pytest.fixture(scope="module")
def online_vmfb() -> bytes:
    return compile_module(speed_module((1, 4), SIZE), "online")


def allocated_during_calls(vmfb: bytes, **options) -> tuple[int, int]:
    """Bytes the device's own allocator handed out over CALLS calls, and how many of the
    calls explored."""
    module = load(vmfb, device="local-sync", cache=False, **options)
    try:
        statistics = module.config.device.allocator
        assert statistics.has_statistics
        before = statistics.statistics["device_bytes_allocated"]
        x = np.arange(SIZE, dtype=np.float32)
        for _ in range(CALLS):
            np.testing.assert_allclose(module.step(x), x, rtol=1e-5)
        after = statistics.statistics["device_bytes_allocated"]
        return after - before, module.stats()[0]["explored_calls"]
    finally:
        module.close()


def test_repeated_calls_reuse_their_buffers(online_vmfb):
    cached, explored = allocated_during_calls(online_vmfb)
    own, _ = allocated_during_calls(online_vmfb, allocator=None)
    assert explored >= 5, explored
    assert cached <= 8 * RESULT_BYTES, cached  # a few calls' buffers, kept and reused
    assert own >= CALLS * RESULT_BYTES, own  # one result (at least) per call, each fresh


def test_one_device_per_uri_and_allocator():
    assert open_device("local-sync") is open_device("local-sync", CACHING_ALLOCATOR)
    assert open_device("local-sync", None) is not open_device("local-sync")


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("bogus", "unrecognized allocator 'bogus'"),
        ("caching:*=x;1gib;64", "size must be an integer, got 'x'"),
    ],
)
def test_a_wrong_allocator_is_named(online_vmfb, spec, reason):
    with pytest.raises(ValueError) as error:
        load(online_vmfb, device="local-sync", cache=False, allocator=spec)
    assert str(error.value).startswith(f"allocator {spec!r} on local-sync: "), error.value
    assert reason in str(error.value)
