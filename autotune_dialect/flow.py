"""The `flow` ops the lowering rewrites or creates: `flow.dispatch`,
`flow.tensor.tie_shape` and `flow.tensor.splat`.

Every other `flow` op is IREE's: it is read and printed by IREE and kept by the import
into xDSL as it is (docs/interop.md). The properties of these ops are IREE 3.13's, so
that their generic form is the one IREE reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    ShapedType,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from autotune_dialect.syntax import build, lenient, print_attr_dict_if_any, printed_attributes


def dynamic_rank(type_: Attribute) -> int:
    """Number of dynamic dimensions of a shaped type (0 for other types)."""
    if isinstance(type_, ShapedType):
        return sum(1 for d in type_.get_shape() if d < 0)
    return 0


def _parse_dims(parser: Parser, type_: Attribute) -> list[UnresolvedOperand]:
    """Parse `{%d0, ...}` after a type with dynamic dimensions."""
    if dynamic_rank(type_) == 0:
        return []
    return parser.parse_comma_separated_list(
        parser.Delimiter.BRACES, parser.parse_unresolved_operand
    )


def _print_dims(printer: Printer, dims: Sequence[SSAValue]) -> None:
    if dims:
        printer.print_string("{")
        printer.print_list(dims, printer.print_operand)
        printer.print_string("}")


def split_dims(types: Sequence[Attribute], dims: Sequence[SSAValue]) -> list[list[SSAValue]]:
    """`dims` cut into the dynamic dimensions of each of `types`."""
    out: list[list[SSAValue]] = []
    pos = 0
    for type_ in types:
        n = dynamic_rank(type_)
        out.append(list(dims[pos : pos + n]))
        pos += n
    return out


@lenient
@irdl_op_definition
class DispatchOp(IRDLOperation):
    """`flow.dispatch @exe::@export[workload](args) : (types) -> results`.

    Dynamically shaped operands and results list their dynamic dimensions in `{...}` after
    their type; a result written as an argument's name (`-> %arg{%n}`, or `-> %arg as T`
    with another type) is tied to it: the kernel writes in place. `@exe::@export` may also
    name an `autotune.group` of `@exe`.
    """

    name = "flow.dispatch"

    workload = var_operand_def(IndexType)
    arguments = var_operand_def()
    argument_dims = var_operand_def(IndexType)
    result_dims = var_operand_def(IndexType)
    entry_points = prop_def(ArrayAttr[SymbolRefAttr])
    tied_operands = opt_prop_def(ArrayAttr[IntegerAttr])
    outputs = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        entry_point: SymbolRefAttr | Sequence[SymbolRefAttr],
        workload: Sequence[SSAValue],
        arguments: Sequence[SSAValue],
        argument_dims: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        result_dims: Sequence[SSAValue] = (),
        tied_operands: Sequence[int] | None = None,
    ):
        entries = [entry_point] if isinstance(entry_point, SymbolRefAttr) else entry_point
        tied = None
        if tied_operands is not None and any(t >= 0 for t in tied_operands):
            tied = ArrayAttr([IntegerAttr(t, IndexType()) for t in tied_operands])
        build(
            self,
            [*workload, *arguments, *argument_dims, *result_dims],
            result_types,
            {"entry_points": ArrayAttr(entries), "tied_operands": tied},
            segments=(len(workload), len(arguments), len(argument_dims), len(result_dims)),
        )

    @property
    def entry_point(self) -> SymbolRefAttr:
        return self.entry_points.data[0]

    def tied_operand_indices(self) -> list[int]:
        """For each result, the index of the argument it is tied to, or -1."""
        if self.tied_operands is None:
            return [-1] * len(self.outputs)
        return [a.value.data for a in self.tied_operands.data]

    def argument_dims_of(self) -> list[list[SSAValue]]:
        """The dynamic dimensions of each argument."""
        return split_dims([a.type for a in self.arguments], self.argument_dims)

    def result_dims_of(self) -> list[list[SSAValue]]:
        """The dynamic dimensions of each result."""
        return split_dims([r.type for r in self.outputs], self.result_dims)

    def verify_(self) -> None:
        tied = self.tied_operand_indices()
        if len(tied) != len(self.outputs):
            raise VerifyException("tied_operands must have one entry per result")
        for index in tied:
            if index >= len(self.arguments):
                raise VerifyException(f"result tied to missing argument {index}")
        if len(self.argument_dims) != sum(dynamic_rank(a.type) for a in self.arguments):
            raise VerifyException("argument dynamic dimension count mismatch")
        if len(self.result_dims) != sum(dynamic_rank(r.type) for r in self.outputs):
            raise VerifyException("result dynamic dimension count mismatch")

    @classmethod
    def parse(cls, parser: Parser) -> DispatchOp:
        entries = parser.parse_optional_comma_separated_list(
            parser.Delimiter.BRACES, parser.parse_attribute
        )
        if entries is None:
            entries = [parser.parse_attribute()]
        for entry in entries:
            if not isinstance(entry, SymbolRefAttr):
                parser.raise_error("expected an entry point @executable::@export")
        workload = [
            parser.resolve_operand(w, IndexType())
            for w in parser.parse_optional_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_unresolved_operand
            )
            or []
        ]
        pos = parser.pos
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        arg_types: list[Attribute] = []
        arg_dims: list[UnresolvedOperand] = []

        def arg_type() -> None:
            type_ = parser.parse_type()
            arg_types.append(type_)
            arg_dims.extend(_parse_dims(parser, type_))

        parser.parse_comma_separated_list(parser.Delimiter.PAREN, arg_type)
        arguments = parser.resolve_operands(args, arg_types, pos)
        names = [a.operand_name for a in args]
        parser.parse_punctuation("->")
        result_types: list[Attribute] = []
        result_dims: list[UnresolvedOperand] = []
        tied: list[int] = []

        def result_type() -> None:
            ref = parser.parse_optional_unresolved_operand()
            if ref is not None:
                if ref.operand_name not in names:
                    parser.raise_error(
                        f"tied result %{ref.operand_name} is not an argument of the dispatch",
                        ref.span.start,
                        ref.span.end,
                    )
                index = names.index(ref.operand_name)
                tied.append(index)
                type_ = arg_types[index]
                if parser.parse_optional_keyword("as") is not None:
                    type_ = parser.parse_type()
            else:
                tied.append(-1)
                type_ = parser.parse_type()
            result_types.append(type_)
            result_dims.extend(_parse_dims(parser, type_))

        if parser.parse_optional_comma_separated_list(parser.Delimiter.PAREN, result_type) is None:
            result_type()
        index = IndexType()
        op = cls(
            entries,  # type: ignore[arg-type]
            workload,
            arguments,
            [parser.resolve_operand(d, index) for d in arg_dims],
            result_types,
            [parser.resolve_operand(d, index) for d in result_dims],
            tied,
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        if len(self.entry_points) == 1:
            printer.print_attribute(self.entry_point)
        else:
            printer.print_string("{")
            printer.print_list(self.entry_points.data, printer.print_attribute)
            printer.print_string("}")
        if self.workload:
            printer.print_string("[")
            printer.print_list(self.workload, printer.print_operand)
            printer.print_string("]")
        printer.print_string("(")
        printer.print_list(self.arguments, printer.print_operand)
        printer.print_string(")")
        print_attr_dict_if_any(printer, printed_attributes(self))
        printer.print_string(" : (")
        arg_dims = self.argument_dims_of()

        def print_arg(i: int) -> None:
            printer.print_attribute(self.arguments[i].type)
            _print_dims(printer, arg_dims[i])

        printer.print_list(range(len(self.arguments)), print_arg)
        printer.print_string(") -> ")
        res_dims = self.result_dims_of()
        tied = self.tied_operand_indices()

        def print_result(i: int) -> None:
            if tied[i] >= 0:
                argument = self.arguments[tied[i]]
                printer.print_operand(argument)
                if argument.type != self.outputs[i].type:
                    printer.print_string(" as ")
                    printer.print_attribute(self.outputs[i].type)
            else:
                printer.print_attribute(self.outputs[i].type)
            _print_dims(printer, res_dims[i])

        if len(self.outputs) == 1:
            print_result(0)
        else:
            printer.print_string("(")
            printer.print_list(range(len(self.outputs)), print_result)
            printer.print_string(")")


@lenient
@irdl_op_definition
class TensorTieShapeOp(IRDLOperation):
    """`%t = flow.tensor.tie_shape %v : tensor<?x4xf32>{%n}`: attaches dynamic dimension
    values to a tensor."""

    name = "flow.tensor.tie_shape"

    operand = operand_def(ShapedType)
    dynamic_dims = var_operand_def(IndexType)
    result = result_def(ShapedType)

    def __init__(self, operand: SSAValue, dynamic_dims: Sequence[SSAValue]):
        build(self, [operand, *dynamic_dims], [operand.type])

    def verify_(self) -> None:
        if len(self.dynamic_dims) != dynamic_rank(self.operand.type):
            raise VerifyException("one dimension value per dynamic dimension is required")

    @classmethod
    def parse(cls, parser: Parser) -> TensorTieShapeOp:
        pos = parser.pos
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        dims = _parse_dims(parser, type_)
        value = parser.resolve_operands([operand], [type_], pos)[0]
        op = cls(value, [parser.resolve_operand(d, IndexType()) for d in dims])
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)
        _print_dims(printer, self.dynamic_dims)
        print_attr_dict_if_any(printer, printed_attributes(self))


@lenient
@irdl_op_definition
class TensorSplatOp(IRDLOperation):
    """`%t = flow.tensor.splat %value : tensor<?x4xf32>{%n}`: a tensor of one value, a flow
    op of its own (no dispatch to form), so a module built from the flow phase takes it as
    it is (a `tensor.empty` and `linalg.fill` there would need dispatch formation)."""

    name = "flow.tensor.splat"

    value = operand_def()
    result_dims = var_operand_def(IndexType)
    result = result_def(ShapedType)

    def __init__(self, value: SSAValue, result_dims: Sequence[SSAValue], type_: ShapedType):
        build(self, [value, *result_dims], [type_])

    def verify_(self) -> None:
        if len(self.result_dims) != dynamic_rank(self.result.type):
            raise VerifyException("one dimension value per dynamic dimension is required")
        element = self.result.type.get_element_type()  # type: ignore[union-attr]
        if self.value.type != element:
            raise VerifyException(
                f"the value's type {self.value.type} is not the element type {element}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> TensorSplatOp:
        pos = parser.pos
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        if not isinstance(type_, ShapedType):
            parser.raise_error("expected a tensor type")
        dims = _parse_dims(parser, type_)
        element = type_.get_element_type()
        op = cls(
            parser.resolve_operands([value], [element], pos)[0],
            [parser.resolve_operand(d, IndexType()) for d in dims],
            type_,
        )
        if (extra := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes.update(extra.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        _print_dims(printer, self.result_dims)
        if attributes := printed_attributes(self):  # IREE's `attr-dict-with-keyword`
            printer.print_string(" attributes ")
            printer.print_attr_dict(attributes)


Flow = Dialect("flow", [DispatchOp, TensorTieShapeOp, TensorSplatOp], [])
