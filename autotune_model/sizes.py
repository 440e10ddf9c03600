"""The sizes a model's dispatches run at, for example inputs of given shapes.

A dispatch of a flow-phase function takes its workload, dynamic dimensions and index
operands from the host code, which reads them from the inputs (`hal.buffer_view.dim`) and
computes with `arith` ops (a data-tiled operand's tile count, for one: a ceiling division
spelled out with `arith.cmpi` and `arith.select`). `host_values` follows that code for the
shapes of example inputs and returns every integer value it can know; a dispatch whose
operands depend on anything else (data, an op not followed here) has unknown sizes and is
not benchmarked.

A recurrent model's host code runs its dispatches in an `scf.for` loop over the sequence
(an LSTM exported through ONNX: each step's matmul takes the step as its offset into the
input, as its workload too). Inside a loop whose bounds are known, the induction variable
takes the value of one iteration (`iteration`; the first by default, when the integers the
loop carries take their initial values too): a dispatch there is benchmarked as the first
iteration runs it, `times_run` says how many times a call runs it (the loops' trip
counts) and `workloads_run` the workloads it runs at, iteration by iteration.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from autotune_dialect.interop import attribute, op_name


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b)


_BITS = 64
"""Unsigned comparisons read values as 64-bit words (index is 64 bits on IREE's hosts)."""


def _unsigned(a: int) -> int:
    return a % (1 << _BITS)


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
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b,
    "arith.shrsi": lambda a, b: a >> b,
    "arith.shrui": lambda a, b: _unsigned(a) >> b,
}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci")
_PREDICATES: tuple[Callable[[int, int], bool], ...] = (
    # arith.cmpi's predicate, by its number: eq ne slt sle sgt sge ult ule ugt uge
    lambda a, b: a == b,
    lambda a, b: a != b,
    lambda a, b: a < b,
    lambda a, b: a <= b,
    lambda a, b: a > b,
    lambda a, b: a >= b,
    lambda a, b: _unsigned(a) < _unsigned(b),
    lambda a, b: _unsigned(a) <= _unsigned(b),
    lambda a, b: _unsigned(a) > _unsigned(b),
    lambda a, b: _unsigned(a) >= _unsigned(b),
)


def _defined(name: str, b: int) -> bool:
    """Whether a binary op is defined for a right operand `b` (no division by zero, no
    shift by a negative or too large amount)."""
    if name in ("arith.shli", "arith.shrsi", "arith.shrui"):
        return 0 <= b < _BITS
    return b != 0 or not name.startswith(("arith.div", "arith.rem", "arith.ceildiv", "arith.floor"))


def host_values(
    function: Operation,
    arguments: Sequence[SSAValue],
    input_shapes: Sequence[Sequence[int]],
    iteration: int = 0,
) -> dict[SSAValue, int]:
    """Integer values of a flow-phase function's body whose `arguments` are buffer views of
    the given shapes, as far as they follow from those shapes; inside loops, every loop at
    its `iteration` (or its last, where it has fewer)."""
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
            if _defined(name, b):
                values[op.results[0]] = _BINARY[name](a, b)
        elif name in _CASTS and op.operands and op.operands[0] in values:
            values[op.results[0]] = values[op.operands[0]]
        elif name == "arith.cmpi" and all(o in values for o in op.operands):
            predicate = attribute(op, "predicate")
            if isinstance(predicate, IntegerAttr) and 0 <= predicate.value.data < len(_PREDICATES):
                a, b = (values[o] for o in op.operands)
                values[op.results[0]] = int(_PREDICATES[predicate.value.data](a, b))
        elif name == "arith.select" and len(op.operands) == 3 and op.operands[0] in values:
            chosen = op.operands[1] if values[op.operands[0]] else op.operands[2]
            if chosen in values:
                values[op.results[0]] = values[chosen]
        elif name == "scf.for":
            _at_iteration(op, values, iteration)
    return values


def _trip_count(loop: Operation, values: dict[SSAValue, int]) -> int | None:
    """The iterations of an `scf.for` (operands: lower bound, upper bound, step, initial
    values), where its bounds are known."""
    if not all(o in values for o in loop.operands[:3]):
        return None
    low, high, step = (values[o] for o in loop.operands[:3])
    return max(0, math.ceil((high - low) / step)) if step > 0 else None


def _at_iteration(loop: Operation, values: dict[SSAValue, int], iteration: int) -> None:
    """An `scf.for`'s induction variable at its `iteration` (its last where it has fewer),
    and at the first the integers it carries (their initial values)."""
    body = loop.regions[0].blocks[0] if loop.regions and loop.regions[0].blocks else None
    trips = _trip_count(loop, values)
    if body is None or not trips:
        return
    step = min(iteration, trips - 1)
    values[body.args[0]] = values[loop.operands[0]] + step * values[loop.operands[2]]
    if step == 0:
        for initial, carried in zip(loop.operands[3:], body.args[1:], strict=False):
            if initial in values:
                values[carried] = values[initial]


def times_run(op: Operation, values: dict[SSAValue, int]) -> int:
    """How many times one run of the host code runs `op`: the trip counts of the
    `scf.for` loops around it, each where its bounds are known (`values`, from
    `host_values`; a loop of unknown bounds counts once)."""
    count = 1
    parent = op.parent_op()
    while parent is not None:
        if op_name(parent) == "scf.for" and (trips := _trip_count(parent, values)) is not None:
            count *= trips
        parent = parent.parent_op()
    return count


MAX_ITERATIONS = 64
"""Iterations of a loop whose workloads `workloads_run` follows (the first ones)."""


def workloads_run(
    function: Operation,
    arguments: Sequence[SSAValue],
    input_shapes: Sequence[Sequence[int]],
    dispatches: Sequence[Operation],
    first: dict[SSAValue, int],
) -> dict[Operation, list[list[int]]]:
    """Each of `dispatches` (`flow.dispatch` ops of the function) with the workloads it
    runs at, in order, each once: one where it is outside loops, one per iteration of its
    loops where its workload changes with them (the first `MAX_ITERATIONS`). A dispatch
    whose workload is not known at some iteration has the known ones. `first`: the
    function's `host_values` at the first iteration (the caller's)."""
    counts = {d: times_run(d, first) for d in dispatches}
    looped = [d for d in dispatches if counts[d] > 1]
    iterations = max((counts[d] for d in looped), default=1)
    runs: dict[Operation, list[list[int]]] = {d: [] for d in dispatches}
    for iteration in range(min(iterations, MAX_ITERATIONS)):
        values = (
            first if iteration == 0 else host_values(function, arguments, input_shapes, iteration)
        )
        for dispatch in looped if iteration else dispatches:
            workload = [values.get(w) for w in dispatch.workload]  # type: ignore[attr-defined]
            if None not in workload and workload not in runs[dispatch]:
                runs[dispatch].append(workload)  # type: ignore[arg-type]
    return runs
