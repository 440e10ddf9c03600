"""The sizes a model's dispatches run at, for example inputs of given shapes.

A dispatch of a flow-phase function takes its workload, dynamic dimensions and index
operands from the host code, which reads them from the inputs (`hal.buffer_view.dim`) and
computes with `arith` ops. `host_values` follows that code for the shapes of example inputs
and returns every integer value it can know; a dispatch whose operands depend on anything
else (data, an op not followed here) has unknown sizes and is not benchmarked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from autotune_dialect.interop import attribute, op_name


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b)


_BINARY: dict[str, Callable[[int, int], int]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divui": lambda a, b: a // b,
    "arith.divsi": lambda a, b: int(a / b),
    "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivui": _ceildiv,
    "arith.ceildivsi": _ceildiv,
    "arith.remui": lambda a, b: a % b,
    "arith.remsi": lambda a, b: a - b * int(a / b),
    "arith.maxui": max,
    "arith.maxsi": max,
    "arith.minui": min,
    "arith.minsi": min,
}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci")


def host_values(
    function: Operation, arguments: Sequence[SSAValue], input_shapes: Sequence[Sequence[int]]
) -> dict[SSAValue, int]:
    """Integer values of a flow-phase function's body whose `arguments` are buffer views of
    the given shapes, as far as they follow from those shapes."""
    values: dict[SSAValue, int] = {}
    shapes = dict(zip(arguments, input_shapes, strict=True))
    for op in function.walk():
        name = op_name(op)
        if name == "arith.constant":
            constant = attribute(op, "value")
            if isinstance(constant, IntegerAttr):
                values[op.results[0]] = constant.value.data
        elif name == "hal.buffer_view.dim":
            shape = shapes.get(op.operands[0])
            axis = attribute(op, "index")
            if shape is not None and isinstance(axis, IntegerAttr) and axis.value.data < len(shape):
                values[op.results[0]] = int(shape[axis.value.data])
        elif name in _BINARY and all(o in values for o in op.operands) and len(op.operands) == 2:
            a, b = (values[o] for o in op.operands)
            if b != 0 or name in ("arith.addi", "arith.subi", "arith.muli"):
                values[op.results[0]] = _BINARY[name](a, b)
        elif name in _CASTS and op.operands and op.operands[0] in values:
            values[op.results[0]] = values[op.operands[0]]
    return values
