"""Synthetic inputs of every element type: the `explicit` policy's `__autotune` fills each
tensor operand with a valid value of its type (an i1 attention mask, quantized i8 and i4
weights, index tensors, f16 and bf16 activations, complex numbers), and a type none can
be made of is a clear error at the dispatch, not an internal one."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    ComplexType,
    Float16Type,
    IndexType,
    IntegerType,
    f32,
    i1,
)

from autotune_contracts.errors import DiagnosticError
from autotune_model.report import KEPT, WRONG
from autotune_runtime import load
from lowering.autotune_to_iree import lower_to_iree
from lowering.driver import compile
from lowering.synthetic import synthetic_value

ELEMENTS = ["i1", "i4", "i8", "index", "f16", "bf16", "complex<f32>"]


def copy_module(element: str, size: int = 16) -> str:
    """Two variants of a kernel that copies the second of two tensors of `element`, in an
    explicit group (the second operand's synthetic input is the one that an i1 did not
    fit)."""
    t = f"tensor<{size}x{element}>"
    ro = f"!iree_tensor_ext.dispatch.tensor<readonly:{t}>"
    wo = f"!iree_tensor_ext.dispatch.tensor<writeonly:{t}>"
    names = ("c0", "c1")
    kernels = "".join(
        f"""
      func.func @{n}(%first: {ro}, %in: {ro}, %out: {wo}) {{
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [{size}], strides = [1] : {ro} -> {t}
        %1 = tensor.empty() : {t}
        %2 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%0 : {t}) outs(%1 : {t}) {{
        ^bb0(%a: {element}, %o: {element}):
          linalg.yield %a : {element}
        }} -> {t}
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0], sizes = [{size}], strides = [1] : {t} -> {wo}
        return
      }}"""
        for n in names
    )
    exports = "\n".join(
        f"""    flow.executable.export public @{n} workgroups() -> (index, index, index) {{
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }}"""
        for n in names
    )
    return f"""module {{
  flow.executable private @copy {{
{exports}
    autotune.group @g variants([@c0, @c1]) {{policy = "explicit"}}
    builtin.module {{{kernels}
    }}
  }}
  util.func public @run(%a: {t}, %b: {t}) -> {t} {{
    %r = flow.dispatch @copy::@g(%a, %b) : ({t}, {t}) -> {t}
    util.return %r : {t}
  }}
}}
"""


@pytest.mark.parametrize(
    "element",
    [
        i1,
        IntegerType(2),
        IntegerType(4),
        IntegerType(8),
        IndexType(),
        Float16Type(),
        BFloat16Type(),
    ],
    ids=str,
)
def test_every_synthetic_value_is_a_valid_value_of_its_type(element):
    values = [synthetic_value(element, seed) for seed in range(16)]
    assert all(v is not None and v.type == element for v in values)
    if isinstance(element, IntegerType):
        width = element.width.data
        # within the type's range (signless: [-2^(w-1), 2^w)), never 0 (a divisor, a mask)
        assert all(-(2 ** (width - 1)) <= v.value.data < 2**width for v in values)
        assert all(v.value.data != 0 for v in values)


@pytest.mark.parametrize("part", [f32, Float16Type(), IntegerType(8)], ids=str)
def test_a_synthetic_complex_value_is_two_valid_values_of_its_part(part):
    """`complex.constant`'s [real, imaginary], each a valid value of the part's type
    (before, no complex input could be made: tuning a group of complex operands failed)."""
    for seed in range(8):
        value = synthetic_value(ComplexType(part), seed)
        assert isinstance(value, ArrayAttr) and len(value.data) == 2
        real, imaginary = value.data
        assert real.type == part and imaginary.type == part
        assert (real.value.data, imaginary.value.data) == (
            synthetic_value(part, seed).value.data,
            synthetic_value(part, seed + 1).value.data,
        )


@pytest.mark.parametrize("element", ELEMENTS)
def test_explicit_tuning_lowers_synthetic_inputs_of_every_element_type(element):
    """Before, an i1 operand was filled with `seed % 7 + 1` (4 for the fifth operand, 2
    for the second): `internal error (VerifyException: Integer value 2 is out of range
    for type i1)`."""
    lowered = lower_to_iree(copy_module(element), policy="explicit", filename="copy.mlir")
    assert "@__autotune" in lowered
    assert f"x{element}>" in lowered


@pytest.mark.parametrize("element", ["i1", "i8", "f16", "bf16", "complex<f32>"])
def test_explicit_tuning_runs_on_synthetic_inputs_of_every_element_type(element):
    vmfb = compile(copy_module(element), target="llvm-cpu", policy="explicit")
    with load(vmfb, "local-sync", cache=False) as module:
        module.tune()
        assert module.decisions().get(("copy::g", ())) in ("c0", "c1")


def test_a_type_no_input_can_be_made_of_is_a_clear_error():
    with pytest.raises(DiagnosticError) as caught:
        lower_to_iree(copy_module("vector<4xf32>"), policy="explicit", filename="copy.mlir")
    message = caught.value.render()
    assert "copy.mlir:36:10:" in message  # the dispatch
    assert "element type vector<4xf32>, of which none can be made" in message


COMPLEX_MATMUL = """func.func @cmm(%a: tensor<16x24xcomplex<f32>>, %b: tensor<24x32xcomplex<f32>>) -> tensor<16x32xcomplex<f32>> {
  %zero = complex.constant [0.0 : f32, 0.0 : f32] : complex<f32>
  %e = tensor.empty() : tensor<16x32xcomplex<f32>>
  %z = linalg.fill ins(%zero : complex<f32>) outs(%e : tensor<16x32xcomplex<f32>>) -> tensor<16x32xcomplex<f32>>
  %r = linalg.matmul ins(%a, %b : tensor<16x24xcomplex<f32>>, tensor<24x32xcomplex<f32>>) outs(%z : tensor<16x32xcomplex<f32>>) -> tensor<16x32xcomplex<f32>>
  return %r : tensor<16x32xcomplex<f32>>
}
"""


def test_tune_model_benchmarks_a_dispatch_of_complex_operands():
    """Inputs of complex numbers (both parts random) for the benchmark and the model's
    checks, candidates compared by the magnitude of their difference: one whose results
    differ only in their imaginary parts is wrong (before: "argument 0 of @cmm has
    element type complex<f32>, which tune-model cannot make inputs of")."""
    from small_models import SMALL, assert_close

    from autotune_model import tune_model
    from autotune_model.bench import benchmark_dispatch
    from autotune_model.executors import SerialExecutor

    victims = []

    def perturbing(job):
        results = benchmark_dispatch(job)
        assert all(np.iscomplexobj(o) for r in results for o in r.outputs)
        victim = results[1]  # the first candidate after IREE's own
        victim.outputs = [o + 0.5j for o in victim.outputs]
        victims.append(victim.candidate.name)
        for r in results:  # every survivor looks faster, so that it would be kept
            r.times_ns = [1000] if r.candidate.is_default else [100]
        return results

    tuned = tune_model(COMPLEX_MATMUL, SMALL, executor=SerialExecutor(), benchmark_job=perturbing)
    (dispatch,) = tuned.report.dispatches
    fates = {c.name: c.fate for c in dispatch.candidates}
    assert fates[victims[0]] == WRONG
    assert KEPT in fates.values()
    rng = np.random.default_rng(1)
    a, b = (
        (rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(np.complex64)
        for s in ((16, 24), (24, 32))
    )
    with load(tuned.vmfb, "local-sync", cache=False) as module:
        for _ in range(30):  # online: every variant runs
            got = np.asarray(module.function("cmm")(a, b))
        assert_close(got, a @ b)
