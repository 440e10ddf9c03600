"""Count regions written with semi-affine maps (`(s0 ceildiv 32) * (s1 ceildiv 32)`, the
shape of a Triton grid and of the RFC's example), which xDSL's affine parser cannot read:
they are kept as IREE wrote them, lowered, compiled for CUDA and run on the CPU."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import DATA

from autotune_bridge import parse_module, print_module
from autotune_runtime.session import load
from lowering import compile, lower_to_iree

SEMI_AFFINE = re.compile(
    r"affine_map<\(\)\[s0, s1\] -> \(\(s0 ceildiv \d+\) \* \(s1 ceildiv \d+\)\)>"
)

_GRID = re.compile(
    r"%v1 = arith.ceildivui %M, %c(\d+) : index\n"
    r"(\s*%c\d+ = arith.constant \d+ : index\n)?"
    r"\s*%v2 = arith.ceildivui %N, %c(\d+) : index\n"
    r"\s*%v3 = arith.muli %v1, %v2 : index"
)


def triton_matmul_with_affine_grid(arch: str) -> str:
    """The imported Triton matmul (four configs) with each count region's grid written as
    one `affine.apply` of a semi-affine map."""
    text = (DATA / "triton" / f"matmul.{arch}.mlir").read_text()
    rewritten, count = _GRID.subn(
        lambda m: (
            f"%v3 = affine.apply affine_map<()[s0, s1] -> ((s0 ceildiv {m[1]}) * "
            f"(s1 ceildiv {m[3]}))>()[%M, %N]"
        ),
        text,
    )
    assert count == text.count("arith.muli %v1, %v2") == 8  # 4 configs, 4 fallbacks
    return rewritten


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_triton_grid_as_semi_affine_map_lowers_and_compiles_for_cuda(arch):
    text = triton_matmul_with_affine_grid(arch)
    maps = SEMI_AFFINE.findall(text)
    assert len(maps) == 8
    # Read and printed back unchanged, and carried through the lowering.
    printed = print_module(parse_module(text, f"matmul.{arch}.mlir"))
    assert sorted(set(SEMI_AFFINE.findall(printed))) == sorted(set(maps))  # IREE aliases them
    lowered = lower_to_iree(text, filename=str(DATA / "triton" / f"matmul.{arch}.mlir"))
    assert sorted(set(SEMI_AFFINE.findall(lowered))) == sorted(set(maps))
    vmfb = compile(
        text, target="cuda", arch=arch, filename=str(DATA / "triton" / f"matmul.{arch}.mlir")
    )
    assert len(vmfb) > 1000


@pytest.mark.parametrize("policy", ["explicit", "online"])
def test_flow_exports_with_semi_affine_grids_compute_the_matmul(policy):
    path = DATA / "semi_affine" / "matmul_grid_cpu.mlir"
    text = path.read_text()
    assert len(SEMI_AFFINE.findall(text)) == 2
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    module = load(compile(text, filename=str(path), policy=policy), device="local-sync")
    try:
        if policy == "explicit":
            for index in (0, 1):  # each variant, its own grid
                module.__autotune_set_mm_mm(index)
                np.testing.assert_allclose(module.main(a, b), a @ b, rtol=1e-4, atol=1e-3)
        else:
            for _ in range(12):  # exploration runs both variants on these inputs
                np.testing.assert_allclose(module.main(a, b), a @ b, rtol=1e-4, atol=1e-3)
    finally:
        module.close()
