"""The subset of IREE's `util` dialect that autotune inputs and lowered output use."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FlatSymbolRefAttrConstr,
    FunctionType,
    NoneAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    i32,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue, TypedAttribute
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
    CallableOpInterface,
    IsolatedFromAbove,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from autotune_dialect.iree_attrs import IREEOpaqueAttr, opaque_classes
from autotune_dialect.symbols import lookup_symbol
from autotune_dialect.syntax import (
    ValuesTerminator,
    parse_attributes_keyword,
    parse_operands_with_types,
    parse_property_dict,
    print_attr_dict_if_any,
    print_attributes_keyword,
    print_operands_with_types,
    print_property_dict,
)


def _type_of_initial_value(value: Attribute) -> Attribute | None:
    if isinstance(value, TypedAttribute):
        return value.get_type()
    if isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
        return value.type
    if isinstance(value, IREEOpaqueAttr) and not isinstance(value.trailing_type, NoneAttr):
        return value.trailing_type
    return None


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """`util.global private mutable @name = value : type`: a module-level variable."""

    name = "util.global"

    sym_name = prop_def(SymbolNameConstraint())
    sym_visibility = opt_prop_def(StringAttr)
    type = prop_def(Attribute)
    is_mutable = opt_prop_def(UnitAttr)
    initial_value = opt_prop_def(Attribute)
    inlining_policy = opt_prop_def(Attribute)

    traits = traits_def(SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        type_: Attribute,
        initial_value: Attribute | None = None,
        mutable: bool = False,
        visibility: str = "private",
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "sym_visibility": StringAttr(visibility),
                "type": type_,
                "is_mutable": UnitAttr() if mutable else None,
                "initial_value": initial_value,
            }
        )

    @classmethod
    def parse(cls, parser: Parser) -> GlobalOp:
        visibility = parser.parse_optional_visibility_keyword()
        mutable = parser.parse_optional_keyword("mutable") is not None
        name = parser.parse_symbol_name()
        props = parse_property_dict(parser)
        attrs = parser.parse_optional_attr_dict()
        initial_value = None
        type_ = None
        if parser.parse_optional_punctuation("=") is not None:
            pos = parser.pos
            initial_value = parser.parse_attribute()
            type_ = _type_of_initial_value(initial_value)
            if type_ is None:
                if parser.parse_optional_punctuation(":") is None:
                    parser.raise_error("expected ':' and the global's type", pos)
                type_ = parser.parse_type()
        else:
            parser.parse_punctuation(":")
            type_ = parser.parse_type()
            if parser.parse_optional_punctuation("=") is not None:
                initial_value = parser.parse_attribute()
        op = cls(name.data, type_, initial_value, mutable, "private")
        op.sym_visibility = visibility
        op.properties.update(props)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility is not None:
            printer.print_string(f" {self.sym_visibility.data}")
        if self.is_mutable is not None:
            printer.print_string(" mutable")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        extra = {
            k: v
            for k, v in self.properties.items()
            if k not in ("sym_name", "sym_visibility", "type", "is_mutable", "initial_value")
        }
        print_property_dict(printer, extra)
        print_attr_dict_if_any(printer, self.attributes)
        if self.initial_value is not None:
            printer.print_string(" = ")
            printer.print_attribute(self.initial_value)
            if _type_of_initial_value(self.initial_value) is None:
                printer.print_string(" : ")
                printer.print_attribute(self.type)
        else:
            printer.print_string(" : ")
            printer.print_attribute(self.type)

    def verify_(self) -> None:
        if self.initial_value is not None:
            value_type = _type_of_initial_value(self.initial_value)
            if value_type is not None and value_type != self.type:
                raise VerifyException(
                    f"initial value type {value_type} does not match global type {self.type}"
                )


def _global_name(parser: Parser) -> SymbolRefAttr:
    return SymbolRefAttr(parser.parse_symbol_name())


@irdl_op_definition
class GlobalLoadOp(IRDLOperation):
    """`%v = util.global.load [immutable] @name : type`."""

    name = "util.global.load"

    global_ = prop_def(FlatSymbolRefAttrConstr, prop_name="global")
    is_immutable = opt_prop_def(UnitAttr)
    result = result_def()

    def __init__(self, global_name: str, type_: Attribute, immutable: bool = False):
        super().__init__(
            properties={
                "global": SymbolRefAttr(global_name),
                "is_immutable": UnitAttr() if immutable else None,
            },
            result_types=[type_],
        )

    @classmethod
    def parse(cls, parser: Parser) -> GlobalLoadOp:
        immutable = parser.parse_optional_keyword("immutable") is not None
        name = _global_name(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(name.root_reference.data, parser.parse_type(), immutable)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        if self.is_immutable is not None:
            printer.print_string(" immutable")
        printer.print_string(" ")
        printer.print_attribute(self.global_)
        print_attr_dict_if_any(printer, self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class GlobalStoreOp(IRDLOperation):
    """`util.global.store %v, @name : type`."""

    name = "util.global.store"

    value = operand_def()
    global_ = prop_def(FlatSymbolRefAttrConstr, prop_name="global")

    def __init__(self, value: SSAValue, global_name: str):
        super().__init__(operands=[value], properties={"global": SymbolRefAttr(global_name)})

    @classmethod
    def parse(cls, parser: Parser) -> GlobalStoreOp:
        pos = parser.pos
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        name = _global_name(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        resolved = parser.resolve_operands([value], [parser.parse_type()], pos)[0]
        op = cls(resolved, name.root_reference.data)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_attribute(self.global_)
        print_attr_dict_if_any(printer, self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)


@irdl_op_definition
class InitializerOp(IRDLOperation):
    """`util.initializer { ... }`: code run once when the module is loaded."""

    name = "util.initializer"

    body = region_def()
    traits = traits_def(IsolatedFromAbove())

    def __init__(self, body: Region):
        super().__init__(regions=[body])

    @classmethod
    def parse(cls, parser: Parser) -> InitializerOp:
        attrs = parse_attributes_keyword(parser)
        op = cls(parser.parse_region())
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_attributes_keyword(printer, self.attributes)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)


class _FuncCallable(CallableOpInterface):
    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        assert isinstance(op, FuncOp)
        return op.body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.outputs.data


@irdl_op_definition
class FuncOp(IRDLOperation):
    """`util.func`: IREE's function, with a body or (private, no body) a declaration such
    as an import from a host module."""

    name = "util.func"

    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    sym_visibility = opt_prop_def(StringAttr)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    tied_operands = opt_prop_def(ArrayAttr)

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), _FuncCallable())

    def __init__(
        self,
        name: str,
        function_type: FunctionType | tuple[Sequence[Attribute], Sequence[Attribute]],
        region: Region | None = None,
        visibility: str | None = None,
        arg_attrs: ArrayAttr[DictionaryAttr] | None = None,
        res_attrs: ArrayAttr[DictionaryAttr] | None = None,
    ):
        if isinstance(function_type, tuple):
            function_type = FunctionType.from_lists(*function_type)
        if region is None:
            region = Region(Block(arg_types=function_type.inputs))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": function_type,
                "sym_visibility": None if visibility is None else StringAttr(visibility),
                "arg_attrs": arg_attrs,
                "res_attrs": res_attrs,
            },
            regions=[region],
        )

    @staticmethod
    def declaration(name: str, inputs: Sequence[Attribute], outputs: Sequence[Attribute]):
        """A private body-less function, e.g. an import of a host module."""
        return FuncOp(name, (inputs, outputs), Region(), "private")

    def verify_(self) -> None:
        if self.body.blocks:
            if tuple(self.body.blocks[0].arg_types) != self.function_type.inputs.data:
                raise VerifyException("entry block arguments must have the function's input types")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        visibility = parser.parse_optional_visibility_keyword()
        name, inputs, outputs, region, extra, arg_attrs, res_attrs = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type", "sym_visibility")
        )
        op = cls(name, (inputs, outputs), region, None, arg_attrs, res_attrs)
        op.sym_visibility = visibility
        if extra is not None:
            op.attributes |= extra.data
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility is not None:
            printer.print_string(f" {self.sym_visibility.data}")
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            arg_attrs=self.arg_attrs,
            res_attrs=self.res_attrs,
            reserved_attr_names=("sym_name", "function_type", "sym_visibility", "arg_attrs"),
        )


@irdl_op_definition
class CallOp(IRDLOperation):
    """`%r = util.call @f(%a) : (T) -> R`."""

    name = "util.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    arguments = var_operand_def()
    res = var_result_def()

    def __init__(
        self, callee: str, arguments: Sequence[SSAValue], result_types: Sequence[Attribute]
    ):
        super().__init__(
            operands=[arguments],
            properties={"callee": SymbolRefAttr(callee)},
            result_types=[result_types],
        )

    def verify_(self) -> None:
        callee = lookup_symbol(self, self.callee)
        if callee is None:
            raise VerifyException(f"callee {self.callee} not found")
        # A function group called like a function checks the call against its variants.
        check = getattr(callee, "verify_call", None)
        if check is not None:
            check(self)

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        callee = parser.parse_symbol_name()
        pos = parser.pos
        args = parser.parse_op_args_list()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        fn_type = parser.parse_function_type()
        arguments = parser.resolve_operands(args, fn_type.inputs.data, pos)
        op = cls(callee.data, arguments, fn_type.outputs.data)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_string("(")
        printer.print_list(self.arguments, printer.print_operand)
        printer.print_string(")")
        print_attr_dict_if_any(printer, self.attributes)
        printer.print_string(" : ")
        printer.print_function_type([a.type for a in self.arguments], [r.type for r in self.res])


@irdl_op_definition
class ReturnOp(ValuesTerminator):
    """`util.return`: return from a `util.func` or `util.initializer`."""

    name = "util.return"


@irdl_op_definition
class OptimizationBarrierOp(IRDLOperation):
    """`%a, %b = util.optimization_barrier %x, %y : T1, T2`: hides values from folding,
    CSE and const-evaluation."""

    name = "util.optimization_barrier"

    operands_ = var_operand_def()
    results_ = var_result_def()

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values], result_types=[[v.type for v in values]])

    @classmethod
    def parse(cls, parser: Parser) -> OptimizationBarrierOp:
        attrs = parser.parse_optional_attr_dict()
        op = cls(parse_operands_with_types(parser))
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_attr_dict_if_any(printer, self.attributes)
        print_operands_with_types(printer, self.operands_)


@irdl_op_definition
class StatusCheckOkOp(IRDLOperation):
    """`util.status.check_ok %status, "message"`: fails the invocation when the i32 status
    is not 0."""

    name = "util.status.check_ok"

    status = operand_def()
    message = opt_prop_def(StringAttr)

    def __init__(self, status: SSAValue, message: str | None = None):
        super().__init__(
            operands=[status],
            properties={"message": None if message is None else StringAttr(message)},
        )

    @classmethod
    def parse(cls, parser: Parser) -> StatusCheckOkOp:
        status = parser.parse_operand(i32)
        message = None
        if parser.parse_optional_punctuation(",") is not None:
            message = parser.parse_str_literal()
        return cls(status, message)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.status)
        if self.message is not None:
            printer.print_string(", ")
            printer.print_string_literal(self.message.data)


Util = Dialect(
    "util",
    [
        GlobalOp,
        GlobalLoadOp,
        GlobalStoreOp,
        InitializerOp,
        FuncOp,
        CallOp,
        ReturnOp,
        OptimizationBarrierOp,
        StatusCheckOkOp,
    ],
    opaque_classes("util"),
)
