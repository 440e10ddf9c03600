"""The `hal` ops the lowering creates to time variants on the host: `hal.devices.get`,
`hal.fence.create`, `hal.tensor.barrier`, `hal.fence.await` and `hal.tensor.export`; and
`hal.device.query`, which tells a module at load which device it runs on.

Every other `hal` op (executables, exports, `hal.tensor.import`, ...) is IREE's: read and
printed by IREE and kept by the import into xDSL as it is (docs/interop.md). The properties
are IREE 3.13's, so that the generic form of these ops is the one IREE reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, TensorType, i1, i32, i64
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    RangeOf,
    RangeVarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from autotune_dialect.mlir_text import parse_type_text
from autotune_dialect.syntax import (
    build,
    lenient,
    print_operand_list,
    trailing_attributes,
)

_NO_FLAGS = IntegerAttr(0, i64)
"""IREE's `flags("None")`, as the integer its generic form holds."""


def device_type() -> Attribute:
    """`!hal.device`."""
    return parse_type_text("!hal.device")


def fence_type() -> Attribute:
    """`!hal.fence`."""
    return parse_type_text("!hal.fence")


def buffer_view_type() -> Attribute:
    """`!hal.buffer_view`."""
    return parse_type_text("!hal.buffer_view")


def type_in_context(parser: Parser, text: str) -> Attribute:
    """The type `text` as the parser's context makes it. A type xDSL does not model is an
    unregistered type of its context, and equals only types of that context: one made in
    another (`parse_type_text`) would not match the values the parser read
    (`xdsl-opt` reads with a context of its own)."""
    return Parser(parser.ctx, text).parse_type()


@irdl_custom_directive
class NoFlags(CustomDirective):
    """`"None"` in `flags("None")`, the only flags the lowering uses: IREE's generic form
    holds them as the integer 0 (`_NO_FLAGS`), which no declarative piece spells so."""

    flags: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        pos = parser.pos
        if parser.parse_optional_str_literal() != "None":
            parser.raise_error('expected flags("None")', pos)
        self.flags.set(state, _NO_FLAGS)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_string_literal("None")


@irdl_custom_directive
class Fences(CustomDirective):
    """`%f0, %f1` (none or more), values of type `!hal.fence`, which the syntax does not
    print: the type is the one of the parser's context (`type_in_context`), which a
    declarative type constraint cannot name."""

    fences: VariadicOperandVariable
    types: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        fences = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        self.fences.set(state, fences or [])
        self.types.set(state, [type_in_context(parser, "!hal.fence")] * len(fences or []))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        print_operand_list(printer, self.fences.get(op))


@lenient
@irdl_op_definition
class DevicesGetOp(IRDLOperation):
    """`%d = hal.devices.get %index : !hal.device`: the device at an ordinal."""

    name = "hal.devices.get"

    index = operand_def(IndexType)
    result = result_def()

    assembly_format = "$index `:` type($result) attr-dict"

    def __init__(self, index: SSAValue, result_type: Attribute | None = None):
        build(self, [index], [result_type or device_type()])


@lenient
@irdl_op_definition
class FenceCreateOp(IRDLOperation):
    """`%f = hal.fence.create device(%d : !hal.device) flags("None") : !hal.fence`."""

    name = "hal.fence.create"

    device = operand_def()
    flags = prop_def(IntegerAttr)
    result = result_def()

    custom_directives = (NoFlags,)
    assembly_format = (
        "`device` `(` $device `:` type($device) `)` `flags` `(` custom<NoFlags>($flags) `)` "
        "`:` type($result) attr-dict"
    )

    def __init__(self, device: SSAValue, result_type: Attribute | None = None):
        build(self, [device], [result_type or fence_type()], {"flags": _NO_FLAGS})


@lenient
@irdl_op_definition
class FenceAwaitOp(IRDLOperation):
    """`%s = hal.fence.await until([%f]) timeout_millis(%t) flags("None") : i32`:
    blocks the host until the fences are signaled; returns a status code."""

    name = "hal.fence.await"

    timeout_millis = operand_def(i32)
    fences = var_operand_def()
    flags = prop_def(IntegerAttr)
    status = result_def()

    custom_directives = (NoFlags, Fences)
    assembly_format = (
        "`until` `(` `[` custom<Fences>($fences, type($fences)) `]` `)` "
        "`timeout_millis` `(` $timeout_millis `)` `flags` `(` custom<NoFlags>($flags) `)` "
        "`:` type($status) attr-dict"
    )

    def __init__(self, fences: Sequence[SSAValue], timeout_millis: SSAValue):
        build(self, [timeout_millis, *fences], [i32], {"flags": _NO_FLAGS})


_BARRIER_TENSORS = RangeVarConstraint("TENSORS", RangeOf(base(TensorType)))
"""A barrier's sources and results: tensors, the results of the sources' types."""


@lenient
@irdl_op_definition
class TensorBarrierOp(IRDLOperation):
    """`%r = hal.tensor.barrier join(%t : tensor<..>) => %fence : !hal.fence`: signals the
    fence once the tensors are ready; the results alias the sources."""

    name = "hal.tensor.barrier"

    sources = var_operand_def(_BARRIER_TENSORS)
    signal_fence = operand_def()
    results_ = var_result_def(_BARRIER_TENSORS)

    # IREE's `join( : )` when there is no tensor: the else branch prints it.
    assembly_format = (
        "`join` `(` ($sources^ `:` type($sources)) : (` ` `:` ` `)? `)` `=` `>` $signal_fence "
        "`:` type($signal_fence) attr-dict"
    )

    def __init__(self, sources: Sequence[SSAValue], signal_fence: SSAValue):
        build(self, [*sources, signal_fence], [s.type for s in sources])


@trailing_attributes
@lenient
@irdl_op_definition
class TensorExportOp(IRDLOperation):
    """`%v = hal.tensor.export %t : tensor<?xf32>{%n} -> !hal.buffer_view`: hands a tensor
    to the host as a buffer view (`: E as tensor<...>` when the encoding E differs from the
    tensor's type)."""

    name = "hal.tensor.export"

    source = operand_def(TensorType)
    source_dims = var_operand_def(IndexType)
    source_encoding = prop_def(Attribute)
    target = result_def()

    def __init__(
        self,
        source: SSAValue,
        dims: Sequence[SSAValue],
        result_type: Attribute,
        source_encoding: Attribute | None = None,
    ):
        encoding = source.type if source_encoding is None else source_encoding
        build(self, [source, *dims], [result_type], {"source_encoding": encoding})

    @classmethod
    def parse(cls, parser: Parser) -> TensorExportOp:
        pos = parser.pos
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        encoding = parser.parse_type()
        type_ = parser.parse_type() if parser.parse_optional_keyword("as") else encoding
        dims: list[SSAValue] = []
        if parser.parse_optional_punctuation("{") is not None:
            if parser.parse_optional_punctuation("}") is None:
                dims = [
                    parser.resolve_operand(d, IndexType())
                    for d in parser.parse_comma_separated_list(
                        parser.Delimiter.NONE, parser.parse_unresolved_operand
                    )
                ]
                parser.parse_punctuation("}")
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        value = parser.resolve_operands([source], [type_], pos)[0]
        return cls(value, dims, result_type, encoding)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(" : ")
        if self.source_encoding != self.source.type:  # `: tensor<...xf32> as tensor<...>`
            printer.print_attribute(self.source_encoding)
            printer.print_string(" as ")
        printer.print_attribute(self.source.type)
        if self.source_dims:
            printer.print_string("{")
            print_operand_list(printer, self.source_dims)
            printer.print_string("}")
        printer.print_string(" -> ")
        printer.print_attribute(self.target.type)


@trailing_attributes
@lenient
@irdl_op_definition
class DeviceQueryOp(IRDLOperation):
    """`%ok, %v = hal.device.query<%d : !hal.device> key("CATEGORY" :: "KEY") : i1, i1 =
    false`: whether the device answers the key, and its answer (an `i1`; a key such as
    `hal.device.id` takes a pattern, `vulkan*`)."""

    name = "hal.device.query"

    device = operand_def()
    category = prop_def(StringAttr)
    key = prop_def(StringAttr)
    default_value = prop_def(IntegerAttr)
    ok = result_def()
    value = result_def()

    def __init__(self, device: SSAValue, category: str, key: str):
        properties = {
            "category": StringAttr(category),
            "key": StringAttr(key),
            "default_value": IntegerAttr(0, i1),
        }
        build(self, [device], [i1, i1], properties)

    @classmethod
    def parse(cls, parser: Parser) -> DeviceQueryOp:
        parser.parse_punctuation("<")
        device = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        device = parser.resolve_operand(device, parser.parse_type())
        parser.parse_punctuation(">")
        parser.parse_keyword("key")
        parser.parse_punctuation("(")
        category = parser.parse_str_literal()
        parser.parse_punctuation(":")
        parser.parse_punctuation(":")
        key = parser.parse_str_literal()
        parser.parse_punctuation(")")
        parser.parse_punctuation(":")
        for punctuation in (None, ",", None, "="):
            if punctuation is None:
                parser.parse_type()
            else:
                parser.parse_punctuation(punctuation)
        pos = parser.pos
        if parser.parse_optional_keyword("false") is None:
            parser.raise_error("expected the default answer false", pos)
        return cls(device, category, key)

    def print(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_operand(self.device)
        printer.print_string(" : ")
        printer.print_attribute(self.device.type)
        printer.print_string("> key(")
        printer.print_string_literal(self.category.data)
        printer.print_string(" :: ")
        printer.print_string_literal(self.key.data)
        printer.print_string(") : i1, i1 = false")


HAL = Dialect(
    "hal",
    [DevicesGetOp, FenceCreateOp, FenceAwaitOp, TensorBarrierOp, TensorExportOp, DeviceQueryOp],
    [],
)
