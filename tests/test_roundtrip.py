"""Golden round trip: the project's parse+print, canonicalised by iree-opt, equals iree-opt
on the original file."""

from __future__ import annotations

import pytest
from conftest import DATA, run_iree_opt

from autotune_bridge import parse_module, print_module

CORPUS = sorted((DATA / "roundtrip").glob("*.mlir"))


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 15


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_roundtrip_matches_iree_opt(path, iree_opt):
    original = path.read_text()
    expected = run_iree_opt(iree_opt, original)
    assert expected.returncode == 0, expected.stderr
    ours = print_module(parse_module(original, str(path)))
    got = run_iree_opt(iree_opt, ours)
    assert got.returncode == 0, f"iree-opt rejected our print:\n{got.stderr}\n{ours}"
    assert got.stdout == expected.stdout


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_print_is_a_fixed_point(path):
    once = print_module(parse_module(path.read_text(), str(path)))
    assert print_module(parse_module(once, "printed.mlir")) == once


# --- mixed precision: valid MLIR inside variants -----------------------------------------

_MIXED_KERNEL = """      func.func @{name}(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x32xf16>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x8xf16>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x8xf32>>) {{
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [16, 32], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x32xf16>> -> tensor<16x32xf16>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [32, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x8xf16>> -> tensor<32x8xf16>
        %init = tensor.empty() : tensor<16x8xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<16x8xf32>) -> tensor<16x8xf32>
        %c = linalg.matmul ins(%a, %b : tensor<16x32xf16>, tensor<32x8xf16>) outs(%acc : tensor<16x8xf32>) -> tensor<16x8xf32>
        iree_tensor_ext.dispatch.tensor.store %c, %out, offsets = [0, 0], sizes = [16, 8], strides = [1, 1] : tensor<16x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x8xf32>>
        return
      }}"""

_MIXED_EXPORT = """    flow.executable.export public @{name} workgroups() -> (index, index, index) {{
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }}"""

MIXED_PRECISION = (
    "module {\n  flow.executable private @mm_ex {\n"
    + "\n".join(_MIXED_EXPORT.format(name=n) for n in ("mm_a", "mm_b"))
    + "\n    autotune.group @mm variants([@mm_a, @mm_b])\n    builtin.module {\n"
    + "\n".join(_MIXED_KERNEL.format(name=n) for n in ("mm_a", "mm_b"))
    + """
    }
  }
  util.func public @matmul(%a: tensor<16x32xf16>, %b: tensor<32x8xf16>) -> tensor<16x8xf32> {
    %c = flow.dispatch @mm_ex::@mm(%a, %b) : (tensor<16x32xf16>, tensor<32x8xf16>) -> tensor<16x8xf32>
    util.return %c : tensor<16x8xf32>
  }
}
"""
)


def test_mixed_precision_matmul_in_variants_is_valid_and_runs(tmp_path):
    """f16 inputs with an f32 accumulator is valid MLIR (stock IREE compiles it): the
    verifier accepts it, and the lowered module computes the product."""
    np = pytest.importorskip("numpy")
    from autotune_runtime import load
    from lowering.driver import compile

    module = parse_module(MIXED_PRECISION, "mixed.mlir")
    printed = print_module(module)
    assert printed.count(": tensor<16x32xf16>, tensor<32x8xf16>) outs(") == 2  # both kept
    vmfb = tmp_path / "mixed.vmfb"
    vmfb.write_bytes(compile(MIXED_PRECISION, target="llvm-cpu", filename="mixed.mlir"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 8)).astype(np.float16)
    loaded = load(vmfb, device="local-sync", cache=False)
    try:
        for _ in range(4):  # both variants run while the group is tuned
            result = np.asarray(loaded.matmul(a, b))
            assert result.dtype == np.float32
            np.testing.assert_allclose(
                result, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3
            )
    finally:
        loaded.close()


def test_group_shows_as_mlir_in_a_notebook():
    from autotune_bridge import GroupOp

    module = parse_module(MIXED_PRECISION, "mixed.mlir")
    group = next(op for op in module.walk() if isinstance(op, GroupOp))
    assert group._repr_markdown_() == "```mlir\nautotune.group @mm variants([@mm_a, @mm_b])\n```"
