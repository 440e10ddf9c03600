"""The `autotune` host module: one handler per kind of import serves every workload arity
(`select_w0` ... `select_w8`), the workload's values reaching the tuner as its key."""

from __future__ import annotations

import iree.runtime as rt
import numpy as np
from conftest import DATA

from autotune_contracts import interface
from autotune_runtime import load
from autotune_runtime.host import create_host_module
from lowering.driver import compile  # noqa: A004 - the project's public name


class NoGroups:
    """A tuner with no groups: the host module is built without its warm-up."""

    groups: dict = {}


def test_the_host_module_exports_every_import_a_lowered_module_may_call():
    module = create_host_module(rt.VmInstance(), NoGroups(), rt.get_device("local-sync"))
    assert module.name == interface.HOST_MODULE
    names = [signature.name for signature in interface.all_imports()]
    assert sorted(module.function_names) == sorted(names)
    arities = range(interface.MAX_WORKLOAD_ARITY + 1)
    for kind in ("select", "record", "decide", "decided", "check", "compare"):
        assert all(f"{kind}_w{arity}" in names for arity in arities)


def test_a_two_value_workload_is_the_key_of_the_decision():
    """`@mm::@mm[%c64, %c64]`: the select, record and check imports of arity 2."""
    path = DATA / "semi_affine" / "matmul_grid_cpu.mlir"
    vmfb = compile(path.read_text(), filename=str(path), policy="online")
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    with load(vmfb, device="local-sync", cache=False) as module:
        for _ in range(200):
            np.testing.assert_allclose(module.main(a, b), a @ b, rtol=1e-4, atol=1e-3)
            if module.decisions():
                break
        decisions = module.decisions()
        (state,) = module.stats()
    assert list(decisions) == [("mm::mm", (64, 64))]
    assert decisions["mm::mm", (64, 64)] in ("mm_a", "mm_b")
    assert state["decision"] == decisions["mm::mm", (64, 64)]
    assert all(variant["runs"] > 0 for variant in state["variants"])
