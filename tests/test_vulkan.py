"""Modules on the `vulkan` driver: IREE's SPIR-V code, device-local buffers, a queue that
runs asynchronously and Vulkan's alignment rules for host memory. On a machine without a
GPU, Mesa's llvmpipe (Debian's mesa-vulkan-drivers) is the device: what runs there proves
that modules, their selection and their read-backs are right on a GPU-kind device, not
how fast anything is on a GPU.

Every test here is skipped, with the reason, where no Vulkan device can be opened
(`make install` installs the driver where it can)."""

from __future__ import annotations

import re
from pathlib import Path

import iree.runtime as rt
import numpy as np
import pytest
from command_line import cli
from modules import EXAMPLES, tagged_module

from autotune_runtime import load
from autotune_runtime.devices import open_device, read_back
from lowering.driver import compile


def vulkan_problem() -> str | None:
    """Why no Vulkan device can be opened here, or None."""
    if "vulkan" not in rt.query_available_drivers():
        return "this IREE runtime has no vulkan driver"
    try:
        rt.get_device("vulkan")
    except (ValueError, RuntimeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return (
            f"no Vulkan device ({first}); install a driver, e.g. Debian's mesa-vulkan-drivers "
            "and libvulkan1"
        )
    return None


_PROBLEM = vulkan_problem()
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=str(_PROBLEM))

POLICIES = ("online", "explicit", "init", "static")
VARIANTS = {"mm_8x64", "mm_16x256", "mm_32x64"}
QUICK = {"warmup": 0, "min_samples": 2, "max_samples": 2}
MAX_CALLS = 40
"""Calls the online module may explore in: 3 variants x 2 samples, and more where a run is
discounted because another process held the device's threads up."""


@pytest.fixture(scope="module")
def matmul_vmfbs(tmp_path_factory) -> dict[str, Path]:
    """examples/matmul_vulkan.mlir built for vulkan with each policy."""
    folder = tmp_path_factory.mktemp("vulkan")
    source = (EXAMPLES / "matmul_vulkan.mlir").read_text()
    paths = {}
    for policy in POLICIES:
        paths[policy] = folder / f"matmul_{policy}.vmfb"
        paths[policy].write_bytes(compile(source, target="vulkan", policy=policy))
    return paths


def operands() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.random((256, 256), np.float32), rng.random((256, 256), np.float32)


@pytest.mark.parametrize("policy", POLICIES)
def test_each_policy_of_the_example_gives_numpys_results(matmul_vmfbs, policy):
    a, b = operands()
    with load(matmul_vmfbs[policy], device="vulkan", cache=False, **QUICK) as module:
        if policy == "explicit":
            module.tune()
        results = [module.matmul(a, b)]
        while policy == "online" and not module.decisions() and len(results) < MAX_CALLS:
            results.append(module.matmul(a, b))  # exploring: each call times one variant
        results.append(module.matmul(a, b))
        decided = set(module.decisions().values())
    for c in results:
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    if policy == "static":
        assert decided == set()
    else:
        assert len(decided) == 1 and decided <= VARIANTS, decided


def test_the_variant_set_by_hand_is_the_one_that_runs():
    """Variant k adds k + 1: the result tells which kernel the device ran."""
    text = tagged_module(group_attrs='{policy = "explicit"}')
    x = np.arange(16, dtype=np.float32)
    with load(compile(text, target="vulkan", policy="explicit"), device="vulkan") as module:
        np.testing.assert_array_equal(module.run(x), x + 1)  # the reference, v0
        module.__autotune_set_tagged_add("v2")
        np.testing.assert_array_equal(module.run(x), x + 3)


@pytest.mark.parametrize("length", [1, 3, 1000, 1025, 5000])
def test_results_whose_host_arrays_are_not_page_aligned_are_read_back(length):
    """A result of a few bytes, or of a size that is no multiple of 4096: IREE's own
    read-back imports a numpy array of that size, which Vulkan refuses ("host allocation
    import pointer does not satisfy Vulkan minImportedHostPointerAlignment 4096")."""
    text = tagged_module(dynamic=True, group_attrs='{policy = "static"}')
    x = np.arange(length + 1, dtype=np.float32)[1:]  # an argument 4 bytes off its buffer
    assert x.ctypes.data % 4096 != 0
    with load(compile(text, target="vulkan", policy="static"), device="vulkan") as module:
        np.testing.assert_array_equal(module.run(x), x + 1)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16, np.int64])
def test_a_device_local_buffer_reads_back_with_its_element_type(dtype):
    device = open_device("vulkan")
    values = (np.arange(37) % 100).astype(dtype).reshape(1, 37)
    array = rt.asdevicearray(device, values)
    got = read_back(device, array)
    assert got.dtype == values.dtype and got.flags.owndata
    np.testing.assert_array_equal(got, values)


def test_a_caching_allocator_is_refused_on_vulkan_with_the_reason():
    with pytest.raises(ValueError, match="caching allocator cannot serve vulkan"):
        open_device("vulkan", "caching:*=*;64mib;8")


def test_run_and_tune_on_the_vulkan_device(tmp_path):
    """`iree-autotune tune` then `run` on the device: the printed result is the one of the
    variant tuning chose (variant k adds k + 1)."""
    attrs = '{policy = "explicit", warmup = 0, min_samples = 2, max_samples = 2}'
    vmfb = tmp_path / "tagged.vmfb"
    vmfb.write_bytes(compile(tagged_module(group_attrs=attrs), target="vulkan", policy="explicit"))
    cache = tmp_path / "cache.db"
    tuned = cli("tune", vmfb, "--device", "vulkan", "--cache", cache)
    assert tuned.returncode == 0, tuned.stderr
    ran = cli("run", vmfb, "--device", "vulkan", "--cache", cache, "--input", "16xf32=0")
    assert ran.returncode == 0, ran.stderr
    chosen = re.search(r"tagged::add workload \[\]: v(\d) \(from cache\)", ran.stdout)
    assert chosen is not None, ran.stdout
    assert f"result[0]: 16xf32={' '.join([str(int(chosen.group(1)) + 1)] * 16)}" in ran.stdout


def test_tune_model_writes_a_module_that_gives_numpys_results_on_vulkan(tmp_path):
    """`tune-model --target vulkan` times its SPIR-V candidates and checks them on the
    vulkan device (their read-backs through a staging buffer) and writes a module that
    computes the model. One candidate a dispatch: llvmpipe takes about 7 ms a matmul call,
    and three candidates of each of the MLP's two dispatches took 3 minutes to time."""
    out = tmp_path / "mlp.vmfb"
    flags = ("--candidates", "1", "--top-k", "1", "--no-timing")
    tuned = cli("tune-model", EXAMPLES / "mlp.mlir", "--target", "vulkan", *flags, "-o", out)
    assert tuned.returncode == 0, tuned.stderr
    assert "2/0/" in tuned.stdout  # each dispatch: IREE's own and one candidate, both built
    rng = np.random.default_rng(3)
    shapes = [(16, 256), (256, 512), (512,), (512, 128), (128,)]
    x, w1, b1, w2, b2 = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    expected = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    with load(out, device="vulkan", cache=False) as module:
        np.testing.assert_allclose(module.mlp(x, w1, b1, w2, b2), expected, rtol=1e-4, atol=1e-3)
