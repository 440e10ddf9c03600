"""The sizes a flow phase's host code computes for example input shapes (`sizes.host_values`),
as IREE writes that code: a data-tiled operand's tile count is a ceiling division spelled
out with comparisons and selects."""

from __future__ import annotations

import pytest

from autotune_bridge.ir import parse_module
from autotune_model.measure import model_function
from autotune_model.sizes import host_values, times_run, workloads_run

HOST_CODE = """
util.func public @main(%arg0: !hal.buffer_view) -> !hal.buffer_view {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %n = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[0] : index
  %empty = arith.cmpi sle, %n, %c0 : index
  %negated = arith.subi %c0, %n : index
  %less = arith.subi %n, %c1 : index
  %picked = arith.select %empty, %negated, %less : index
  %quotient = arith.divsi %picked, %c16 : index
  %negative = arith.subi %c0, %quotient : index
  %next = arith.addi %quotient, %c1 : index
  %tiles = arith.select %empty, %negative, %next : index
  %minus = arith.subi %c0, %c1 : index
  %below = arith.cmpi ult, %n, %minus : index
  %signed_below = arith.cmpi slt, %n, %minus : index
  %masked = arith.andi %n, %c16 : index
  %either = arith.ori %n, %c3 : index
  %doubled = arith.shli %n, %c1 : index
  %halved = arith.shrui %n, %c1 : index
  %too_far = arith.shli %n, %minus : index
  %by_zero = arith.divsi %n, %c0 : index
  util.return %arg0 : !hal.buffer_view
}
"""


NAMES = [
    line.split("=")[0].strip().lstrip("%")
    for line in HOST_CODE.splitlines()
    if line.strip().startswith("%")
]


def computed(rows: int) -> dict[str, int]:
    """The values `host_values` knows, by their names in `HOST_CODE` (the ops in order)."""
    module = parse_module(HOST_CODE)
    function = model_function(module, None)
    values = host_values(function.body, function.arguments, [(rows, 8)])
    ops = [op for op in function.body.walk() if op.results]
    assert len(ops) == len(NAMES)
    return {
        name: values[op.results[0]]
        for name, op in zip(NAMES, ops, strict=True)
        if op.results[0] in values
    }


@pytest.mark.parametrize("rows, tiles", [(40, 3), (32, 2), (33, 3), (1, 1)])
def test_a_ceiling_division_written_with_selects_is_followed(rows, tiles):
    assert computed(rows)["tiles"] == tiles


def test_comparisons_and_bit_operations_are_followed_and_undefined_ones_are_not():
    got = computed(40)
    assert got["below"] == 1  # unsigned: -1 is the largest 64-bit word
    assert got["signed_below"] == 0
    assert (got["masked"], got["either"], got["doubled"], got["halved"]) == (40 & 16, 43, 80, 20)
    assert "too_far" not in got and "by_zero" not in got


LOOPED = """
flow.executable private @ex {
  flow.executable.export public @step workgroups(%arg0: index) -> (index, index, index) {
    %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
    flow.return %x, %y, %z : index, index, index
  }
}
util.func public @main(%arg0: !hal.buffer_view) -> !hal.buffer_view {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %n = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[0] : index
  %x = hal.tensor.import %arg0 "x" : !hal.buffer_view -> tensor<?xf32>{%n}
  %before = flow.dispatch @ex::@step[%n](%x, %n, %n) : (tensor<?xf32>{%n}, index, index) -> tensor<4xf32>
  %r = scf.for %i = %c1 to %n step %c2 iter_args(%carried = %c3) -> (index) {
    %offset = arith.addi %i, %carried : index
    %d = flow.dispatch @ex::@step[%offset](%x, %n, %offset) : (tensor<?xf32>{%n}, index, index) -> tensor<4xf32>
    scf.for %j = %c0 to %c3 step %c1 {
      %inner = flow.dispatch @ex::@step[%j](%x, %n, %j) : (tensor<?xf32>{%n}, index, index) -> tensor<4xf32>
    }
    %unknown = util.optimization_barrier %c3 : index
    scf.for %k = %c0 to %unknown step %c1 {
      %nowhere = flow.dispatch @ex::@step[%c5](%x, %n, %k) : (tensor<?xf32>{%n}, index, index) -> tensor<4xf32>
    }
    scf.yield %offset : index
  }
  util.return %arg0 : !hal.buffer_view
}
"""


def looped(rows: int):
    """`LOOPED`'s function, its dispatches (before the loop, in it, in a loop of 3 inside
    it, in a loop whose bound is not followed) and the values known at the first step."""
    function = model_function(parse_module(LOOPED), None)
    return (
        function,
        function.dispatches(),
        host_values(function.body, function.arguments, [(rows,)]),
    )


def test_a_loop_runs_its_dispatches_as_many_times_as_its_bounds_say():
    function, (before, step, inner, nowhere), values = looped(8)  # steps 1, 3, 5, 7
    assert [times_run(d, values) for d in (before, step, inner)] == [1, 4, 12]
    # the first step: the step, and what the loop carries, at their first values
    assert values[step.workload[0]] == 1 + 3
    # a loop whose bound is not followed counts once (at least)
    assert times_run(nowhere, values) == 4


def test_a_dispatch_in_a_loop_runs_at_each_step_s_workload():
    function, (before, step, inner, nowhere), values = looped(8)
    dispatches = [before, step, inner, nowhere]
    runs = workloads_run(function.body, function.arguments, [(8,)], dispatches, values)
    assert runs[before] == [[8]] and runs[nowhere] == [[5]]
    assert runs[inner] == [[0], [1], [2]]  # its loop's steps, each once
    # only the first step's offset is known: later steps add what the loop carried
    assert runs[step] == [[4]]
    induction = step.workload[0].owner.operands[0]
    later = host_values(function.body, function.arguments, [(8,)], iteration=2)
    assert later[induction] == 5  # step 2 of 1, 3, 5, 7
    assert step.workload[0] not in later  # (the carried value is not followed past step 0)
    past_the_end = host_values(function.body, function.arguments, [(8,)], iteration=9)
    assert past_the_end[induction] == 7  # the last step
