"""A dispatch that writes into an operand (a `readwrite` accumulator binding, tied to its
result) changes the operands it is called with: every candidate is checked on operands of
its own, never on those an earlier candidate's calls wrote into."""

from __future__ import annotations

import numpy as np

from autotune_bridge import parse_module
from autotune_model.bench import (
    BenchmarkJob,
    CompileJob,
    bench_module,
    benchmark_dispatch,
    compile_candidate,
)
from autotune_model.candidates import DEFAULT
from autotune_model.measure import function_inputs, model_function
from autotune_model.sizes import host_values
from autotune_model.tuning_setup import flow_phase
from lowering.driver import target_flags

ACCUMULATING = """
func.func @f(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>)
    -> tensor<64x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>)
                     outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}
"""


def test_candidates_of_a_readwrite_accumulator_are_each_checked_on_fresh_operands():
    text = flow_phase(ACCUMULATING, "llvm-cpu", None, "acc.mlir")
    assert "readwrite:tensor<64x48xf32>" in text  # the accumulator is written in place
    module = parse_module(text)
    function = model_function(module, None)
    inputs = function_inputs(function, None)
    values = host_values(function.body, function.arguments, [o.shape for o in inputs])
    (dispatch,) = function.dispatches()
    assert dispatch.tied_operand_indices()
    bench = bench_module(module, dispatch, values)
    flags = (*target_flags("llvm-cpu", None), *bench.flags)
    built = compile_candidate(CompileJob("d", DEFAULT, bench, flags))
    assert built.vmfb is not None, built.error
    # IREE's own configuration three times over, timed in rounds beside each other
    job = BenchmarkJob("d", ((DEFAULT, built.vmfb),) * 3, bench.operands, repeats=3)
    measured = benchmark_dispatch(job)
    a, b, c = (operand.array(seed) for seed, operand in enumerate(bench.operands))
    # one call runs the dispatch `repeat` times, each adding a @ b into the accumulator
    expected = c.astype(np.float64) + bench.repeat * (a.astype(np.float64) @ b)
    for result in measured:
        assert result.error is None
        np.testing.assert_allclose(result.outputs[0], expected, rtol=1e-4, atol=1e-3)
