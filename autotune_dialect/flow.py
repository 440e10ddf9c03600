"""The subset of IREE's `flow` dialect that autotune inputs and lowered output use."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    ShapedType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from autotune_dialect.iree_attrs import opaque_classes
from autotune_dialect.passthrough import (
    PassthroughModuleOp,
    parse_executable_body,
    print_executable_body,
)
from autotune_dialect.symbols import lookup_symbol
from autotune_dialect.syntax import (
    ValuesTerminator,
    parse_attributes_keyword,
    parse_region_with_signature,
    print_attr_dict_if_any,
    print_attributes_keyword,
    print_region_with_signature,
    print_visibility_and_name,
    region_results,
)


def dynamic_rank(type_: Attribute) -> int:
    """Number of dynamic dimensions of a shaped type (0 for anything else)."""
    if isinstance(type_, ShapedType):
        return sum(1 for d in type_.get_shape() if d < 0)
    return 0


@irdl_op_definition
class ExecutableOp(IRDLOperation):
    """`flow.executable`: exports plus the kernel module that implements them."""

    name = "flow.executable"

    sym_name = prop_def(SymbolNameConstraint())
    sym_visibility = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable())

    def __init__(self, sym_name: str, body: Region, visibility: str | None = "private"):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "sym_visibility": None if visibility is None else StringAttr(visibility),
            },
            regions=[body],
        )

    def exports(self) -> list[ExecutableExportOp]:
        return [op for op in self.body.ops if isinstance(op, ExecutableExportOp)]

    def kernel_module(self) -> PassthroughModuleOp | None:
        return next((op for op in self.body.ops if isinstance(op, PassthroughModuleOp)), None)

    @classmethod
    def parse(cls, parser: Parser) -> ExecutableOp:
        visibility = parser.parse_optional_visibility_keyword()
        name = parser.parse_symbol_name()
        attrs = parse_attributes_keyword(parser)
        op = cls(name.data, parse_executable_body(parser), None)
        op.sym_visibility = visibility
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_visibility_and_name(printer, self)
        print_attributes_keyword(printer, self.attributes)
        printer.print_string(" ")
        print_executable_body(printer, self.body)


@irdl_op_definition
class ExecutableExportOp(IRDLOperation):
    """`flow.executable.export`: an entry point of a `flow.executable`, with an optional
    `workgroups(...)` region computing the workgroup count from the workload."""

    name = "flow.executable.export"

    sym_name = prop_def(SymbolNameConstraint())
    sym_visibility = opt_prop_def(StringAttr)
    function_ref = opt_prop_def(SymbolRefAttr)
    workgroup_count = region_def()

    traits = traits_def(HasParent(ExecutableOp), SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        workgroup_count: Region | None = None,
        function_ref: SymbolRefAttr | None = None,
        visibility: str = "public",
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "sym_visibility": StringAttr(visibility),
                "function_ref": function_ref,
            },
            regions=[workgroup_count or Region()],
        )

    @property
    def kernel_name(self) -> str:
        """Name of the kernel function that implements the export."""
        if self.function_ref is not None:
            return self.function_ref.root_reference.data
        return self.sym_name.data

    @property
    def workload_arity(self) -> int | None:
        """Workload values the `workgroups` region takes, None without one."""
        if not self.workgroup_count.blocks:
            return None
        return len(self.workgroup_count.blocks[0].args)

    def verify_(self) -> None:
        if self.workgroup_count.blocks:
            if region_results(self.workgroup_count) != [IndexType()] * 3:
                raise VerifyException("workgroups region must return index, index, index")

    @classmethod
    def parse(cls, parser: Parser) -> ExecutableExportOp:
        visibility = parser.parse_optional_visibility_keyword() or StringAttr("public")
        name = parser.parse_symbol_name()
        function_ref = None
        if parser.parse_optional_keyword("as") is not None:
            parser.parse_punctuation("(")
            function_ref = SymbolRefAttr(parser.parse_symbol_name())
            parser.parse_punctuation(")")
        region = None
        if parser.parse_optional_keyword("workgroups") is not None:
            region, _ = parse_region_with_signature(parser)
        attrs = parse_attributes_keyword(parser)
        op = cls(name.data, region, function_ref, visibility.data)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_visibility_and_name(printer, self)
        if self.function_ref is not None:
            printer.print_string(" as(")
            printer.print_attribute(self.function_ref)
            printer.print_string(")")
        if self.workgroup_count.blocks:
            printer.print_string(" workgroups")
            print_region_with_signature(printer, self.workgroup_count, [IndexType()] * 3)
        print_attributes_keyword(printer, self.attributes)


@irdl_op_definition
class ReturnOp(ValuesTerminator):
    """`flow.return`: terminator of `workgroups` regions."""

    name = "flow.return"


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


@irdl_op_definition
class DispatchOp(IRDLOperation):
    """`flow.dispatch @exe::@export[workload](args) : (types) -> results`.

    Dynamically shaped operands and results list their dynamic dimensions in `{...}` after
    their type; a result written as an argument's name (`-> %arg{%n}`) is tied to it (the
    kernel writes in place). `@exe::@export` may also name an `autotune.group` of `@exe`.
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
        super().__init__(
            operands=[workload, arguments, argument_dims, result_dims],
            properties={"entry_points": ArrayAttr(entries), "tied_operands": tied},
            result_types=[result_types],
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
        return _split_dims([a.type for a in self.arguments], self.argument_dims)

    def result_dims_of(self) -> list[list[SSAValue]]:
        """The dynamic dimensions of each result."""
        return _split_dims([r.type for r in self.outputs], self.result_dims)

    def verify_(self) -> None:
        tied = self.tied_operand_indices()
        if len(tied) != len(self.outputs):
            raise VerifyException("tied_operands must have one entry per result")
        for result, index in zip(self.outputs, tied, strict=True):
            if index >= len(self.arguments):
                raise VerifyException(f"result tied to missing argument {index}")
            if index >= 0 and self.arguments[index].type != result.type:
                raise VerifyException("a tied result must have its argument's type")
        if len(self.argument_dims) != sum(dynamic_rank(a.type) for a in self.arguments):
            raise VerifyException("argument dynamic dimension count mismatch")
        if len(self.result_dims) != sum(dynamic_rank(r.type) for r in self.outputs):
            raise VerifyException("result dynamic dimension count mismatch")
        # A group dispatched like an export checks the operands against its variants.
        for entry in self.entry_points.data:
            target = lookup_symbol(self, entry)
            if target is None:
                raise VerifyException(f"entry point {entry} not found")
            check = getattr(target, "verify_dispatch", None)
            if check is None:
                continue
            if len(self.entry_points) > 1:
                raise VerifyException(f"group {entry} must be the only entry point of a dispatch")
            check(self)

    @classmethod
    def parse(cls, parser: Parser) -> DispatchOp:
        if parser._current_token.kind == MLIRTokenKind.L_BRACE:
            entries = parser.parse_comma_separated_list(
                parser.Delimiter.BRACES, lambda: parser.parse_attribute()
            )
        else:
            entries = [parser.parse_attribute()]
        for entry in entries:
            if not isinstance(entry, SymbolRefAttr):
                parser.raise_error("expected an entry point @executable::@export")
        workload: list[SSAValue] = []
        if parser._current_token.kind == MLIRTokenKind.L_SQUARE:
            workload = [
                parser.resolve_operand(w, IndexType())
                for w in parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_unresolved_operand
                )
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
            if parser._current_token.kind == MLIRTokenKind.PERCENT_IDENT:
                ref = parser.parse_unresolved_operand()
                if ref.operand_name not in names:
                    parser.raise_error(
                        f"tied result %{ref.operand_name} is not an argument of the dispatch",
                        ref.span.start,
                        ref.span.end,
                    )
                index = names.index(ref.operand_name)
                tied.append(index)
                type_ = arg_types[index]
            else:
                tied.append(-1)
                type_ = parser.parse_type()
            result_types.append(type_)
            result_dims.extend(_parse_dims(parser, type_))

        if parser._current_token.kind == MLIRTokenKind.L_PAREN:
            parser.parse_comma_separated_list(parser.Delimiter.PAREN, result_type)
        else:
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
        print_attr_dict_if_any(printer, self.attributes)
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
                printer.print_operand(self.arguments[tied[i]])
            else:
                printer.print_attribute(self.outputs[i].type)
            _print_dims(printer, res_dims[i])

        if len(self.outputs) == 1:
            print_result(0)
        else:
            printer.print_string("(")
            printer.print_list(range(len(self.outputs)), print_result)
            printer.print_string(")")


def _split_dims(types: Sequence[Attribute], dims: Sequence[SSAValue]) -> list[list[SSAValue]]:
    out: list[list[SSAValue]] = []
    pos = 0
    for type_ in types:
        n = dynamic_rank(type_)
        out.append(list(dims[pos : pos + n]))
        pos += n
    return out


@irdl_op_definition
class TensorTieShapeOp(IRDLOperation):
    """`%t = flow.tensor.tie_shape %v : tensor<?x4xf32>{%n}`: attaches dynamic dimension
    values to a tensor."""

    name = "flow.tensor.tie_shape"

    operand = operand_def(ShapedType)
    dynamic_dims = var_operand_def(IndexType)
    result = result_def(ShapedType)

    def __init__(self, operand: SSAValue, dynamic_dims: Sequence[SSAValue]):
        super().__init__(operands=[operand, dynamic_dims], result_types=[operand.type])

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
        return cls(value, [parser.resolve_operand(d, IndexType()) for d in dims])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)
        _print_dims(printer, self.dynamic_dims)


Flow = Dialect(
    "flow",
    [ExecutableOp, ExecutableExportOp, ReturnOp, DispatchOp, TensorTieShapeOp],
    opaque_classes("flow"),
)
