"""Pieces of custom syntax shared by the IREE ops the project models, and the decorators
that let them carry what IREE gives them beyond what the project models."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping, Sequence

from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, IntegerAttr, SymbolRefAttr, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException


def build(
    op: Operation,
    operands: Sequence[SSAValue] = (),
    result_types: Sequence[Attribute] = (),
    properties: Mapping[str, Attribute | None] | None = None,
    segments: Sequence[int] | None = None,
) -> None:
    """Initialise a project op from flat lists of operands and result types (`segments`:
    the sizes of its operand groups, for ops with several variadic ones).

    IRDL's generic builder checks every group against the op's definition and costs more
    than the op itself; lowered modules hold tens of thousands of these ops, and the
    verifier checks them all the same."""
    props = {k: v for k, v in (properties or {}).items() if v is not None}
    if segments is not None:
        props["operandSegmentSizes"] = _segment_sizes(tuple(segments))
    Operation.__init__(op, operands=operands, result_types=result_types, properties=props)


@functools.lru_cache(maxsize=256)
def _segment_sizes(sizes: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, sizes)


@functools.lru_cache(maxsize=65536)
def symbol_ref(name: str) -> SymbolRefAttr:
    """`@name` (one attribute per name: generated code refers to a few names often)."""
    return SymbolRefAttr(name)


def print_attr_dict_if_any(printer: Printer, attrs: Mapping[str, Attribute]) -> None:
    """Print ` {..}` (nothing when empty)."""
    if attrs:
        printer.print_string(" ")
        printer.print_attr_dict(attrs)


def print_operand_list(printer: Printer, values: Sequence[SSAValue]) -> None:
    printer.print_list(values, printer.print_operand)


class ValuesTerminator(IRDLOperation):
    """A terminator printed as `NAME %a, %b : T1, T2` (IREE's `hal.return`, `flow.return`,
    `util.return`)."""

    values = var_operand_def()
    traits = traits_def(IsTerminator())

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values: Sequence[SSAValue] = ()):
        build(self, values)


def printed_attributes(op: Operation) -> dict[str, Attribute]:
    """What a custom syntax prints in its attribute dictionary: the discardable attributes
    and the properties IREE gave the op that its definition does not name (`lenient`);
    they come back as attributes, which IREE takes as the same properties. Ties of no
    result (`tied_operands` all -1) are left out."""
    assert isinstance(op, IRDLOperation)
    known = op.get_irdl_definition().properties
    extra = {
        k: v
        for k, v in op.properties.items()
        if k not in known and k not in ("operandSegmentSizes", "resultSegmentSizes")
    }
    tied = extra.get("tied_operands")
    if isinstance(tied, ArrayAttr) and all(
        isinstance(t, IntegerAttr) and t.value.data < 0 for t in tied.data
    ):
        del extra["tied_operands"]
    return {**extra, **op.attributes}


def trailing_attributes(cls: type[IRDLOperation]) -> type[IRDLOperation]:
    """Give a custom syntax an attribute dictionary at its end (`printed_attributes`)."""
    parse, print_ = cls.parse.__func__, cls.print  # type: ignore[attr-defined]

    def parse_with_attributes(c: type[IRDLOperation], parser: Parser) -> IRDLOperation:
        op = parse(c, parser)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print_with_attributes(self: IRDLOperation, printer: Printer) -> None:
        print_(self, printer)
        print_attr_dict_if_any(printer, printed_attributes(self))

    cls.parse = classmethod(parse_with_attributes)  # type: ignore[method-assign,assignment]
    cls.print = print_with_attributes  # type: ignore[method-assign]
    return cls


def check_property_names(
    op: IRDLOperation, extra: Mapping[str, Attribute], known: Iterable[str]
) -> None:
    """Refuse a property the op does not define whose name is close to one it does
    (`entry_point` for `entry_points`): a misspelt name set from Python, which the op
    would otherwise carry unread while the property meant stays as it was."""
    names = sorted(known)
    for name in extra:
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
        if close:
            raise VerifyException(
                f"has no property '{name}' (did you mean '{close[0]}'? "
                f"its properties: {', '.join(names)})"
            )


def lenient(cls: type[IRDLOperation]) -> type[IRDLOperation]:
    """Let an IREE op the project models carry properties the project does not: IREE may
    add some (and xDSL text from IREE's generic print has them). They are kept and printed
    as they are, and not checked, except that one named like a property of the op is a
    misspelling (`check_property_names`). An op with a declarative syntax (`assembly_format`)
    prints them in its `attr-dict` (`printed_attributes`), which by itself prints only
    the attributes."""
    strict = cls.verify_
    definition = cls.get_irdl_definition()
    known = set(definition.properties) | {"operandSegmentSizes", "resultSegmentSizes"}

    def extras(self: IRDLOperation) -> dict[str, Attribute]:
        return {k: self.properties.pop(k) for k in list(self.properties) if k not in known}

    def verify_(self: IRDLOperation) -> None:
        extra = extras(self)
        try:
            strict(self)
        finally:
            self.properties.update(extra)
        check_property_names(self, extra, definition.properties)

    cls.verify_ = verify_  # type: ignore[method-assign]
    if definition.assembly_format is not None:
        declarative = cls.print

        def print_(self: IRDLOperation, printer: Printer) -> None:
            shown, attributes = printed_attributes(self), self.attributes
            extra = extras(self)
            self.attributes = shown
            try:
                declarative(self, printer)
            finally:
                self.attributes = attributes
                self.properties.update(extra)

        cls.print = print_  # type: ignore[method-assign]
    return cls
