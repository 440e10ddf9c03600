"""The sizes a flow phase's host code computes for example input shapes (`sizes.host_values`),
as IREE writes that code: a data-tiled operand's tile count is a ceiling division spelled
out with comparisons and selects."""

from __future__ import annotations

import pytest

from autotune_bridge.ir import parse_module
from autotune_model.measure import model_function
from autotune_model.sizes import host_values

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
