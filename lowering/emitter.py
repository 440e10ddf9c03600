"""A small IR builder: appends ops to a block, with helpers for constants and `scf.if`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    UnknownLoc,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from autotune_contracts import interface
from autotune_dialect import hal, util


@functools.cache
def _integer_attr(value: int, type_: IntegerType | IndexType) -> IntegerAttr:
    """One attribute per (value, type): building and checking one costs more than the op
    that holds it, and lowered modules hold tens of thousands of constants."""
    return IntegerAttr(value, type_)


def _stamp(op: Operation, location: Attribute) -> None:
    """Give `op`, and what it nests, `location` where they have none (ops that have one
    were added by an emitter, with what they nest)."""
    if isinstance(op.location, UnknownLoc):
        op.location = location
        for region in op.regions:
            for block in region.blocks:
                locate_arguments(block, location)
                for inner in block.ops:
                    _stamp(inner, location)


def locate_arguments(block: Block, location: Attribute) -> None:
    """Give `block`'s arguments `location` where they have none: `iree-compile` names the
    place of an argument it reports, and one without a location would be named by its line
    in the lowered text."""
    for arg in block.args:
        if isinstance(arg.location, UnknownLoc):
            arg.location = location


class Emitter:
    """Inserts ops into `block`, before `before` when given, else at its end; ops (and
    what they nest) without a location get `location`."""

    def __init__(
        self, block: Block, before: Operation | None = None, location: Attribute | None = None
    ):
        self.point = InsertPoint(block, before)
        self.location = location

    def nested(self, block: Block) -> Emitter:
        """An emitter at the end of `block` with this one's location."""
        return Emitter(block, location=self.location)

    def add(self, op: Operation) -> Operation:
        if self.location is not None:
            _stamp(op, self.location)
        Rewriter.insert_op(op, self.point)
        return op

    def value(self, op: Operation) -> SSAValue:
        return self.add(op).results[0]

    # --- constants and arithmetic ---------------------------------------------------

    def const(self, value: int, type_: Attribute) -> SSAValue:
        if type_ == i1:
            value = int(bool(value))
        assert isinstance(type_, IntegerType | IndexType)
        attr = _integer_attr(value, type_)
        return self.value(arith.ConstantOp.create(properties={"value": attr}, result_types=[type_]))

    def i32(self, value: int) -> SSAValue:
        return self.const(value, i32)

    def i64(self, value: int) -> SSAValue:
        return self.const(value, i64)

    def to_i64(self, value: SSAValue) -> SSAValue:
        if value.type == i64:
            return value
        cast = arith.IndexCastOp if isinstance(value.type, IndexType) else arith.ExtSIOp
        return self.value(cast.create(operands=[value], result_types=[i64]))

    def binary(self, kind: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue:
        """`a kind b` for an `arith` op on integers of one type (`arith.SubiOp`, ...)."""
        return self.value(kind.create(operands=[a, b], result_types=[a.type]))

    def cmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        code = _integer_attr(arith.CMPI_COMPARISON_OPERATIONS.index(predicate), i64)
        return self.value(
            arith.CmpiOp.create(operands=[a, b], properties={"predicate": code}, result_types=[i1])
        )

    def all_of(self, conditions: Sequence[SSAValue]) -> SSAValue:
        result = conditions[0]
        for cond in conditions[1:]:
            result = self.binary(arith.AndIOp, result, cond)
        return result

    def key_is(self, key: Sequence[SSAValue], values: Sequence[int]) -> SSAValue:
        """Whether the i64 `key` holds `values`, one by one."""
        pairs = zip(key, values, strict=True)
        return self.all_of([self.cmp("eq", k, self.i64(v)) for k, v in pairs])

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value(arith.SelectOp.create(operands=[cond, a, b], result_types=[a.type]))

    # --- structured control flow ----------------------------------------------------

    def if_(
        self,
        cond: SSAValue,
        result_types: Sequence[Attribute],
        then: Callable[[Emitter], Sequence[SSAValue]],
        otherwise: Callable[[Emitter], Sequence[SSAValue]] | None = None,
    ) -> list[SSAValue]:
        """`scf.if` whose branches are filled by `then` / `otherwise` (which return the
        values to yield)."""

        def region(fill: Callable[[Emitter], Sequence[SSAValue]] | None) -> Region:
            block = Block()
            yielded = fill(self.nested(block)) if fill is not None else []
            block.add_op(scf.YieldOp.create(operands=yielded))
            return Region(block)

        has_else = otherwise is not None or bool(result_types)
        op = scf.IfOp.create(
            operands=[cond],
            result_types=result_types,
            regions=[region(then), region(otherwise) if has_else else Region()],
        )
        self.add(op)  # also gives the branches' terminators the location
        return list(op.results)

    # --- host imports and synchronisation ------------------------------------------

    def call(self, callee: str, args: Sequence[SSAValue], results: Sequence[Attribute]):
        return list(self.add(util.CallOp(callee, args, results)).results)

    def host(
        self,
        signature: interface.ImportSignature,
        args: Sequence[SSAValue],
        views: Sequence[SSAValue] = (),
    ):
        """Call a host import; integer arguments are widened to i64, views follow them."""
        kinds = {"i": i32, "I": i64}
        return self.call(
            f"{interface.HOST_MODULE}.{signature.name}",
            [self.to_i64(a) for a in args] + list(views),
            [kinds[k] for k in signature.results],
        )

    def dynamic_dims(self, value: SSAValue) -> list[SSAValue]:
        """`tensor.dim` of each dynamic dimension of a tensor value."""
        assert isinstance(value.type, TensorType)
        return [
            self.value(tensor.DimOp(value, self.const(axis, IndexType())))
            for axis, size in enumerate(value.type.get_shape())
            if size < 0
        ]

    def view(self, value: SSAValue, dims: Sequence[SSAValue]) -> SSAValue:
        """`hal.tensor.export`: a tensor as a `!hal.buffer_view` for the host."""
        return self.value(hal.TensorExportOp(value, dims, hal.buffer_view_type()))

    def wait_for(self, tensors: Sequence[SSAValue]) -> list[SSAValue]:
        """Block the host until `tensors` are computed (barrier, fence, await); returns
        the barrier's results, the same tensors ordered after the wait. The host may read
        those (`view`), never the tensors themselves: an export of a tensor is not ordered
        after a wait on it, and on an asynchronous device (local-task, cuda) the host then
        reads a buffer that is not yet written, or not yet allocated ("transient buffer
        has not been committed")."""
        if not tensors:
            return []
        device = self.value(hal.DevicesGetOp(self.const(0, IndexType())))
        fence = self.value(hal.FenceCreateOp(device))
        ready = list(self.add(hal.TensorBarrierOp(list(tensors), fence)).results)
        self.add(hal.FenceAwaitOp([fence], self.i32(-1)))
        return ready
