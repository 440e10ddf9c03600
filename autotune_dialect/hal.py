"""The subset of IREE's `hal` dialect that autotune inputs and lowered output use.

Each op parses and prints IREE 3.13's custom syntax. Inherent attributes are printed in the
`<{...}>` property dictionary that 3.13 requires; IREE's own stripped form (`<k = v>`) is
accepted on input.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    i1,
    i32,
)
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
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
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from autotune_dialect.iree_attrs import (
    PipelineBindingAttr,
    PipelineLayoutAttr,
    device_type,
    fence_type,
    opaque_class,
    opaque_classes,
)
from autotune_dialect.passthrough import parse_executable_body, print_executable_body
from autotune_dialect.syntax import (
    ValuesTerminator,
    parse_attributes_keyword,
    parse_flags,
    parse_operands_with_types,
    parse_property_dict,
    parse_region_with_signature,
    print_attributes_keyword,
    print_flags,
    print_operand_list,
    print_property_dict,
    print_region_with_signature,
    print_visibility_and_name,
    region_results,
)

ExecutableObjectsAttr = opaque_class("hal.executable.objects", False)

_SOURCE_PROPS = ("sym_name", "sym_visibility", "objects")
_EXPORT_PROPS = (
    "sym_name",
    "sym_visibility",
    "ordinal",
    "layout",
    "condition_fallback",
    "workgroup_size",
    "subgroup_size",
    "workgroup_local_memory",
    "source_locs",
)


@irdl_op_definition
class ExecutableSourceOp(IRDLOperation):
    """`hal.executable.source`: a HAL executable given as exports plus external objects
    (or a kernel module), not yet translated for a target."""

    name = "hal.executable.source"

    sym_name = prop_def(SymbolNameConstraint())
    sym_visibility = opt_prop_def(StringAttr)
    objects = opt_prop_def(Attribute)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable())

    def __init__(
        self,
        sym_name: str,
        body: Region,
        objects: Attribute | None = None,
        visibility: str | None = "private",
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "sym_visibility": None if visibility is None else StringAttr(visibility),
                "objects": objects,
            },
            regions=[body],
        )

    def exports(self) -> list[ExecutableExportOp]:
        return [op for op in self.body.ops if isinstance(op, ExecutableExportOp)]

    @classmethod
    def parse(cls, parser: Parser) -> ExecutableSourceOp:
        visibility = parser.parse_optional_visibility_keyword()
        name = parser.parse_symbol_name()
        props = parse_property_dict(parser, stripped={"objects": ExecutableObjectsAttr})
        attrs = parse_attributes_keyword(parser)
        body = parse_executable_body(parser)
        op = cls(name.data, body, props.pop("objects", None), None)
        op.sym_visibility = visibility
        op.properties.update(props)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_visibility_and_name(printer, self)
        print_property_dict(
            printer, {k: v for k, v in self.properties.items() if k not in _SOURCE_PROPS[:2]}
        )
        print_attributes_keyword(printer, self.attributes)
        printer.print_string(" ")
        print_executable_body(printer, self.body)


@irdl_op_definition
class ExecutableExportOp(IRDLOperation):
    """`hal.executable.export`: one entry point with its pipeline layout, an optional
    workgroup count region, an optional dispatch condition with a fallback export, and
    launch properties (workgroup size, subgroup size, workgroup local memory)."""

    name = "hal.executable.export"

    sym_name = prop_def(SymbolNameConstraint())
    sym_visibility = opt_prop_def(StringAttr)
    ordinal = opt_prop_def(IntegerAttr)
    layout = prop_def(PipelineLayoutAttr)
    condition_fallback = opt_prop_def(SymbolRefAttr)
    workgroup_size = opt_prop_def(ArrayAttr)
    subgroup_size = opt_prop_def(IntegerAttr)
    workgroup_local_memory = opt_prop_def(IntegerAttr)
    workgroup_count = region_def()
    condition = region_def()

    traits = traits_def(HasParent(ExecutableSourceOp), SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        ordinal: int | None,
        layout: PipelineLayoutAttr,
        workgroup_count: Region | None = None,
        condition: Region | None = None,
        properties: dict[str, Attribute] | None = None,
        visibility: str = "public",
    ):
        props: dict[str, Attribute | None] = {
            "sym_name": StringAttr(sym_name),
            "sym_visibility": StringAttr(visibility),
            "ordinal": None if ordinal is None else IntegerAttr(ordinal, IndexType()),
            "layout": layout,
        }
        props.update(properties or {})
        super().__init__(
            properties=props,
            regions=[workgroup_count or Region(), condition or Region()],
        )

    @property
    def workload_arity(self) -> int | None:
        """Workload values the count region takes (after the device), None without one."""
        if not self.workgroup_count.blocks:
            return None
        return len(self.workgroup_count.blocks[0].args) - 1

    def verify_(self) -> None:
        for region, what, results in (
            (self.workgroup_count, "count", [IndexType()] * 3),
            (self.condition, "condition", [i1]),
        ):
            if not region.blocks:
                continue
            if what == "count" and len(region.blocks) > 1:
                raise VerifyException("count region must have a single block")  # as IREE's
            args = region.blocks[0].args
            if not args or args[0].type != device_type():
                raise VerifyException(f"{what} region must take a !hal.device first")
            if any(a.type != IndexType() for a in args[1:]):
                raise VerifyException(f"{what} region workload arguments must be index")
            if region_results(region) != results:
                raise VerifyException(f"{what} region must return {', '.join(map(str, results))}")
        if self.condition_fallback is not None and not self.condition.blocks:
            raise VerifyException("fallback requires a condition region")

    @classmethod
    def parse(cls, parser: Parser) -> ExecutableExportOp:
        visibility = parser.parse_optional_visibility_keyword() or StringAttr("public")
        name = parser.parse_symbol_name()
        ordinal = None
        if parser.parse_optional_keyword("ordinal") is not None:
            parser.parse_punctuation("(")
            ordinal = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(")")
        parser.parse_keyword("layout")
        parser.parse_punctuation("(")
        pos = parser.pos
        layout = parser.parse_attribute()
        if not isinstance(layout, PipelineLayoutAttr):
            parser.raise_error("expected #hal.pipeline.layout<...>", pos)
        parser.parse_punctuation(")")
        condition = count = None
        fallback = None
        if parser.parse_optional_keyword("condition") is not None:
            condition, _ = parse_region_with_signature(parser)
            if parser.parse_optional_keyword("fallback") is not None:
                parser.parse_punctuation("(")
                fallback = SymbolRefAttr(parser.parse_symbol_name())
                parser.parse_punctuation(")")
        if parser.parse_optional_keyword("count") is not None:
            count, _ = parse_region_with_signature(parser)
        props = parse_property_dict(parser, ("workgroup_local_memory", "subgroup_size"))
        attrs = parse_attributes_keyword(parser)
        if fallback is not None:
            props["condition_fallback"] = fallback
        op = cls(name.data, ordinal, layout, count, condition, props, visibility.data)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_visibility_and_name(printer, self)
        if self.ordinal is not None:
            printer.print_string(f" ordinal({self.ordinal.value.data})")
        printer.print_string(" layout(")
        printer.print_attribute(self.layout)
        printer.print_string(")")
        if self.condition.blocks:
            printer.print_string(" condition")
            print_region_with_signature(printer, self.condition, [i1])
            if self.condition_fallback is not None:
                printer.print_string(" fallback(")
                printer.print_attribute(self.condition_fallback)
                printer.print_string(")")
        if self.workgroup_count.blocks:
            printer.print_string(" count")
            print_region_with_signature(printer, self.workgroup_count, [IndexType()] * 3)
        rest = {
            k: v
            for k, v in self.properties.items()
            if k not in ("sym_name", "sym_visibility", "ordinal", "layout", "condition_fallback")
        }
        print_property_dict(printer, rest)
        print_attributes_keyword(printer, self.attributes)


@irdl_op_definition
class ReturnOp(ValuesTerminator):
    """`hal.return`: terminator of export count and condition regions."""

    name = "hal.return"


@irdl_op_definition
class DevicesGetOp(IRDLOperation):
    """`%d = hal.devices.get %index : !hal.device`: the device at an ordinal."""

    name = "hal.devices.get"

    index = operand_def(IndexType)
    result = result_def()

    def __init__(self, index: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=[index], result_types=[result_type or device_type()])

    @classmethod
    def parse(cls, parser: Parser) -> DevicesGetOp:
        index = parser.parse_operand(IndexType())
        parser.parse_punctuation(":")
        return cls(index, parser.parse_type())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.index)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class FenceCreateOp(IRDLOperation):
    """`%f = hal.fence.create device(%d : !hal.device) flags("None") : !hal.fence`."""

    name = "hal.fence.create"

    device = operand_def()
    flags = prop_def(StringAttr)
    result = result_def()

    def __init__(self, device: SSAValue, flags: str = "None"):
        super().__init__(
            operands=[device], properties={"flags": StringAttr(flags)}, result_types=[fence_type()]
        )

    @classmethod
    def parse(cls, parser: Parser) -> FenceCreateOp:
        parser.parse_keyword("device")
        parser.parse_punctuation("(")
        device = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        device = parser.resolve_operand(device, parser.parse_type())
        parser.parse_punctuation(")")
        flags = parse_flags(parser)
        parser.parse_punctuation(":")
        parser.parse_type()
        return cls(device, flags.data)

    def print(self, printer: Printer) -> None:
        printer.print_string(" device(")
        printer.print_operand(self.device)
        printer.print_string(" : ")
        printer.print_attribute(self.device.type)
        printer.print_string(")")
        print_flags(printer, self.flags)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class FenceAwaitOp(IRDLOperation):
    """`%s = hal.fence.await until([%f]) timeout_millis(%t) flags("None") : i32`:
    blocks the host until the fences are signaled; returns a status code."""

    name = "hal.fence.await"

    fences = var_operand_def()
    timeout_millis = operand_def()
    flags = prop_def(StringAttr)
    status = result_def()

    def __init__(self, fences: Sequence[SSAValue], timeout_millis: SSAValue, flags: str = "None"):
        super().__init__(
            operands=[fences, timeout_millis],
            properties={"flags": StringAttr(flags)},
            result_types=[i32],
        )

    @classmethod
    def parse(cls, parser: Parser) -> FenceAwaitOp:
        parser.parse_keyword("until")
        parser.parse_punctuation("(")
        fences = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(")")
        parser.parse_keyword("timeout_millis")
        parser.parse_punctuation("(")
        timeout = parser.parse_operand(i32)
        parser.parse_punctuation(")")
        flags = parse_flags(parser)
        parser.parse_punctuation(":")
        parser.parse_type()
        resolved = [parser.resolve_operand(f, fence_type()) for f in fences]
        return cls(resolved, timeout, flags.data)

    def print(self, printer: Printer) -> None:
        printer.print_string(" until([")
        print_operand_list(printer, self.fences)
        printer.print_string("]) timeout_millis(")
        printer.print_operand(self.timeout_millis)
        printer.print_string(")")
        print_flags(printer, self.flags)
        printer.print_string(" : ")
        printer.print_attribute(self.status.type)


@irdl_op_definition
class TensorBarrierOp(IRDLOperation):
    """`%r = hal.tensor.barrier join(%t : tensor<..>) => %fence : !hal.fence`: signals the
    fence once the tensors are ready; the results alias the sources."""

    name = "hal.tensor.barrier"

    sources = var_operand_def(TensorType)
    signal_fence = operand_def()
    results_ = var_result_def(TensorType)

    def __init__(self, sources: Sequence[SSAValue], signal_fence: SSAValue):
        super().__init__(operands=[sources, signal_fence], result_types=[[s.type for s in sources]])

    @classmethod
    def parse(cls, parser: Parser) -> TensorBarrierOp:
        parser.parse_keyword("join")
        parser.parse_punctuation("(")
        sources = parse_operands_with_types(parser)
        parser.parse_punctuation(")")
        parser.parse_punctuation("=")
        parser.parse_punctuation(">")
        fence = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(sources, parser.resolve_operand(fence, parser.parse_type()))

    def print(self, printer: Printer) -> None:
        printer.print_string(" join(")
        print_operand_list(printer, self.sources)
        printer.print_string(" : ")
        printer.print_list(self.sources, lambda v: printer.print_attribute(v.type))
        printer.print_string(") => ")
        printer.print_operand(self.signal_fence)
        printer.print_string(" : ")
        printer.print_attribute(self.signal_fence.type)


@irdl_op_definition
class TensorExportOp(IRDLOperation):
    """`%v = hal.tensor.export %t : tensor<?xf32>{%n} -> !hal.buffer_view`: hands a tensor
    to the host as a buffer view."""

    name = "hal.tensor.export"

    source = operand_def(TensorType)
    source_dims = var_operand_def(IndexType)
    source_encoding = prop_def(Attribute)
    target = result_def()

    def __init__(self, source: SSAValue, dims: Sequence[SSAValue], result_type: Attribute):
        super().__init__(
            operands=[source, dims],
            properties={"source_encoding": source.type},
            result_types=[result_type],
        )

    @classmethod
    def parse(cls, parser: Parser) -> TensorExportOp:
        pos = parser.pos
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
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
        return cls(value, dims, result_type)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        if self.source_dims:
            printer.print_string("{")
            print_operand_list(printer, self.source_dims)
            printer.print_string("}")
        printer.print_string(" -> ")
        printer.print_attribute(self.target.type)


def exports_of(op: Operation) -> list[ExecutableExportOp]:
    """The `hal.executable.export` ops directly inside `op`."""
    return [o for r in op.regions for o in r.ops if isinstance(o, ExecutableExportOp)]


HAL = Dialect(
    "hal",
    [
        ExecutableSourceOp,
        ExecutableExportOp,
        ReturnOp,
        DevicesGetOp,
        FenceCreateOp,
        FenceAwaitOp,
        TensorBarrierOp,
        TensorExportOp,
    ],
    [
        PipelineLayoutAttr,
        PipelineBindingAttr,
        *opaque_classes("hal", exclude=("pipeline.layout", "pipeline.binding")),
    ],
)
