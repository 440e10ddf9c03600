"""The `util` ops the lowering reads or creates: `util.call` (a call of a function group
is rewritten), the functions, globals, returns and barriers the lowering emits, the lists
of its tables of committed workload keys, and `util.initializer` (so that xDSL does not
take it for a symbol table).

Every other `util` op, and the user's own functions and globals, are IREE's: read and
printed by IREE and kept by the import into xDSL as they are (docs/interop.md). The
properties are IREE 3.13's, so that the generic form of these ops is the one IREE reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FlatSymbolRefAttrConstr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    UnitAttr,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    RangeOf,
    RangeVarConstraint,
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
from xdsl.traits import CallableOpInterface, IsolatedFromAbove, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from autotune_dialect.mlir_text import parse_type_text
from autotune_dialect.syntax import (
    ValuesTerminator,
    build,
    lenient,
    print_attr_dict_if_any,
    printed_attributes,
    symbol_ref,
)


@lenient
@irdl_op_definition
class GlobalOp(IRDLOperation):
    """`util.global private mutable @name : type = value`: a module-level variable."""

    name = "util.global"

    sym_name = prop_def(SymbolNameConstraint())
    sym_visibility = opt_prop_def(StringAttr)
    type = prop_def(Attribute)
    is_mutable = opt_prop_def(UnitAttr)
    initial_value = opt_prop_def(Attribute)

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
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        initial_value = None
        if parser.parse_optional_punctuation("=") is not None:
            initial_value = parser.parse_attribute()
        op = cls(name.data, type_, initial_value, mutable)
        op.sym_visibility = visibility
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility is not None:
            printer.print_string(f" {self.sym_visibility.data}")
        if self.is_mutable is not None:
            printer.print_string(" mutable")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        print_attr_dict_if_any(printer, printed_attributes(self))
        printer.print_string(" : ")
        printer.print_attribute(self.type)
        if self.initial_value is not None:
            printer.print_string(" = ")
            printer.print_attribute(self.initial_value)


@lenient
@irdl_op_definition
class GlobalLoadOp(IRDLOperation):
    """`%v = util.global.load @name : type`."""

    name = "util.global.load"

    global_ = prop_def(FlatSymbolRefAttrConstr, prop_name="global")
    result = result_def()

    assembly_format = "$global attr-dict `:` type($result)"

    def __init__(self, global_name: str, type_: Attribute):
        build(self, (), [type_], {"global": symbol_ref(global_name)})


@lenient
@irdl_op_definition
class GlobalStoreOp(IRDLOperation):
    """`util.global.store %v, @name : type`."""

    name = "util.global.store"

    value = operand_def()
    global_ = prop_def(FlatSymbolRefAttrConstr, prop_name="global")

    assembly_format = "$value `,` $global attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, global_name: str):
        build(self, [value], (), {"global": symbol_ref(global_name)})


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


@lenient
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
        if not self.body.blocks and (self.arg_attrs or self.res_attrs):
            self._print_declaration(printer)
            return
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            printed_attributes(self),
            arg_attrs=self.arg_attrs,
            res_attrs=self.res_attrs,
            reserved_attr_names=("sym_name", "function_type", "sym_visibility", "arg_attrs"),
        )

    def _print_declaration(self, printer: Printer) -> None:
        """`@f(%arg0: T {attrs}, ...) -> (R {attrs}, ...)`, as IREE prints a function
        without a body: xDSL's function printer leaves out its argument attributes, and
        its parser drops those of unnamed arguments."""

        def typed(
            types: Sequence[Attribute], attrs: ArrayAttr[DictionaryAttr] | None, named: bool
        ) -> None:
            printer.print_string("(")
            dicts = attrs.data if attrs is not None else [DictionaryAttr({})] * len(types)
            for i, (type_, attr) in enumerate(zip(types, dicts, strict=True)):
                printer.print_string(", " if i else "")
                printer.print_string(f"%arg{i}: " if named else "")
                printer.print_attribute(type_)
                if attr.data:
                    printer.print_string(" ")
                    printer.print_attr_dict(attr.data)
            printer.print_string(")")

        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        typed(self.function_type.inputs.data, self.arg_attrs, named=True)
        if self.function_type.outputs.data:
            printer.print_string(" -> ")
            typed(self.function_type.outputs.data, self.res_attrs, named=False)
        printer.print_op_attributes(
            printed_attributes(self),
            reserved_attr_names=("sym_name", "function_type", "sym_visibility", "arg_attrs"),
            print_keyword=True,
        )


@lenient
@irdl_op_definition
class CallOp(IRDLOperation):
    """`%r = util.call @f(%a) : (T) -> R`."""

    name = "util.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    tied_operands = opt_prop_def(ArrayAttr[IntegerAttr])
    arguments = var_operand_def()
    res = var_result_def()

    def __init__(
        self, callee: str, arguments: Sequence[SSAValue], result_types: Sequence[Attribute]
    ):
        build(self, arguments, result_types, {"callee": symbol_ref(callee)})

    def has_tied_results(self) -> bool:
        """Whether a result is tied to an argument (`-> %arg0`), a form the custom syntax
        does not print: the import keeps such a call unregistered (generic form)."""
        return self.tied_operands is not None and any(
            t.value.data >= 0 for t in self.tied_operands.data
        )

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
        print_attr_dict_if_any(printer, printed_attributes(self))
        printer.print_string(" : ")
        printer.print_function_type([a.type for a in self.arguments], [r.type for r in self.res])


@lenient
@irdl_op_definition
class ReturnOp(ValuesTerminator):
    """`util.return`: return from a `util.func`."""

    name = "util.return"


@lenient
@irdl_op_definition
class OptimizationBarrierOp(IRDLOperation):
    """`%a, %b = util.optimization_barrier %x, %y : T1, T2`: hides values from folding,
    CSE and const-evaluation."""

    name = "util.optimization_barrier"

    T: ClassVar = RangeVarConstraint("T", RangeOf(AnyAttr()))
    operands_ = var_operand_def(T)
    results_ = var_result_def(T)

    assembly_format = "attr-dict $operands_ `:` type($operands_)"

    def __init__(self, values: Sequence[SSAValue]):
        build(self, values, [v.type for v in values])


def list_type(element: str) -> Attribute:
    """`!util.list<element>` (the element type as text: `i64`)."""
    return parse_type_text(f"!util.list<{element}>")


@lenient
@irdl_op_definition
class ListCreateOp(IRDLOperation):
    """`%l = util.list.create %capacity : !util.list<T>`: a new list, empty, with room
    for `capacity` elements."""

    name = "util.list.create"

    initial_capacity = operand_def()
    result = result_def()

    def __init__(self, capacity: SSAValue, type_: Attribute):
        build(self, [capacity], [type_])


@lenient
@irdl_op_definition
class ListResizeOp(IRDLOperation):
    """`util.list.resize %l, %size : !util.list<T>`: grow or shrink a list to `size`
    elements (new ones zero)."""

    name = "util.list.resize"

    list_ = operand_def()
    new_size = operand_def()

    def __init__(self, list_: SSAValue, size: SSAValue):
        build(self, [list_, size])


@lenient
@irdl_op_definition
class ListGetOp(IRDLOperation):
    """`%v = util.list.get %l[%i] : !util.list<T>`: the element at `index`."""

    name = "util.list.get"

    list_ = operand_def()
    index = operand_def()
    result = result_def()

    def __init__(self, list_: SSAValue, index: SSAValue, type_: Attribute):
        build(self, [list_, index], [type_])


@lenient
@irdl_op_definition
class ListSetOp(IRDLOperation):
    """`util.list.set %l[%i], %v : !util.list<T>`: store `value` at `index`."""

    name = "util.list.set"

    list_ = operand_def()
    index = operand_def()
    value = operand_def()

    def __init__(self, list_: SSAValue, index: SSAValue, value: SSAValue):
        build(self, [list_, index, value])


@lenient
@irdl_op_definition
class InitializerOp(IRDLOperation):
    """`util.initializer { ... }`: code that runs when the module loads. Modelled so that
    xDSL does not take it for a symbol table: an unregistered op has every trait, so the
    stock `xdsl-opt` looked up the callee of a `func.call` inside it among the
    initializer's own ops. Printed in generic form."""

    name = "util.initializer"

    body = region_def()
    function_type = opt_prop_def(FunctionType)

    traits = traits_def(IsolatedFromAbove())


Util = Dialect(
    "util",
    [
        GlobalOp,
        GlobalLoadOp,
        GlobalStoreOp,
        FuncOp,
        CallOp,
        ReturnOp,
        OptimizationBarrierOp,
        ListCreateOp,
        ListResizeOp,
        ListGetOp,
        ListSetOp,
        InitializerOp,
    ],
    [],
)
