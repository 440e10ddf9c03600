"""Pieces of IREE's custom assembly shared by the interop ops."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, StringAttr
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import IRDLOperation, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.mlir_lexer import MLIRTokenKind


def parse_region_with_signature(
    parser: Parser, single_result_unparenthesized: bool = True
) -> tuple[Region, list[Attribute]]:
    """Parse `(%a: T, ...) -> (R, ...) { body }` (also `-> R { body }`)."""
    args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
    parser.parse_punctuation("->")
    if parser._current_token.kind == MLIRTokenKind.L_PAREN:
        results = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    elif single_result_unparenthesized:
        results = [parser.parse_type()]
    else:
        parser.raise_error("expected '(' before result types")
    region = parser.parse_region(args)
    return region, results


def print_region_with_signature(
    printer: Printer, region: Region, results: Sequence[Attribute]
) -> None:
    """Print `(%a: T, ...) -> (R, ...) { body }` with the entry block's arguments."""
    block = region.blocks[0]
    printer.print_string("(")
    printer.print_list(block.args, printer.print_block_argument)
    printer.print_string(") -> ")
    if len(results) == 1:
        printer.print_attribute(results[0])
    else:
        printer.print_string("(")
        printer.print_list(results, printer.print_attribute)
        printer.print_string(")")
    printer.print_string(" ")
    printer.print_region(region, print_entry_block_args=False)


def region_results(region: Region) -> list[Attribute]:
    """Types returned by a region: the operands of its first block that ends in a return
    (its entry block when it has one block)."""
    for block in region.blocks:
        last = block.last_op
        if last is not None and last.name.endswith(".return"):
            return [v.type for v in last.operands]
    return []


def parse_property_dict(
    parser: Parser,
    index_keys: Sequence[str] = (),
    stripped: Mapping[str, type[ParametrizedAttribute]] | None = None,
) -> dict[str, Attribute]:
    """Parse `<{k = v, ...}>` or IREE's stripped `<k = v, ...>`, if present.

    In the stripped form integers of `index_keys` carry no type and mean `index`, and
    values of `stripped` keys may omit their `#dialect.name` prefix.
    """
    stripped = stripped or {}
    if parser._current_token.kind != MLIRTokenKind.LESS:
        return {}
    parser.parse_punctuation("<")
    props: dict[str, Attribute] = {}
    if parser._current_token.kind == MLIRTokenKind.L_BRACE:
        props = dict(parser.parse_optional_dictionary_attr_dict())
        parser.parse_punctuation(">")
        return props

    def entry() -> None:
        key = parser.parse_identifier("property name")
        parser.parse_punctuation("=")
        kind = parser._current_token.kind
        if key in index_keys and kind == MLIRTokenKind.INTEGER_LIT:
            props[key] = IntegerAttr(parser.parse_integer(), IndexType())
        elif key in stripped and kind == MLIRTokenKind.LESS:
            attr_class = stripped[key]
            props[key] = attr_class.new(attr_class.parse_parameters(parser))
        else:
            props[key] = parser.parse_attribute()

    parser.parse_comma_separated_list(parser.Delimiter.NONE, entry)
    parser.parse_punctuation(">")
    return props


def print_property_dict(printer: Printer, props: Mapping[str, Attribute]) -> None:
    """Print ` <{k = v, ...}>` (nothing when empty)."""
    if not props:
        return
    printer.print_string(" <")
    printer.print_attr_dict(props)
    printer.print_string(">")


def print_visibility_and_name(printer: Printer, op: Operation) -> None:
    """Print ` [visibility] @name` of a symbol op."""
    visibility = op.properties.get("sym_visibility")
    if isinstance(visibility, StringAttr):
        printer.print_string(f" {visibility.data}")
    printer.print_string(" ")
    name = op.properties["sym_name"]
    assert isinstance(name, StringAttr)
    printer.print_symbol_name(name.data)


def print_attr_dict_if_any(printer: Printer, attrs: Mapping[str, Attribute]) -> None:
    """Print ` {..}` (nothing when empty)."""
    if attrs:
        printer.print_string(" ")
        printer.print_attr_dict(attrs)


def print_attributes_keyword(printer: Printer, attrs: Mapping[str, Attribute]) -> None:
    """Print ` attributes {..}` (nothing when empty)."""
    if attrs:
        printer.print_string(" attributes ")
        printer.print_attr_dict(attrs)


def parse_attributes_keyword(parser: Parser) -> dict[str, Attribute]:
    """Parse an optional `attributes {..}`."""
    attrs = parser.parse_optional_attr_dict_with_keyword()
    return {} if attrs is None else dict(attrs.data)


def parse_flags(parser: Parser) -> StringAttr:
    """Parse `flags("None")` (IREE bit-enum flags written as a string)."""
    parser.parse_keyword("flags")
    parser.parse_punctuation("(")
    flags = parser.parse_optional_str_literal()
    if flags is None:
        flags = parser.parse_identifier("flags")
    parser.parse_punctuation(")")
    return StringAttr(flags)


def print_flags(printer: Printer, flags: StringAttr) -> None:
    printer.print_string(f' flags("{flags.data}")')


def print_operand_list(printer: Printer, values: Sequence[SSAValue]) -> None:
    printer.print_list(values, printer.print_operand)


def print_type_list(printer: Printer, values: Sequence[SSAValue | Attribute]) -> None:
    printer.print_list(
        values, lambda v: printer.print_attribute(v.type if isinstance(v, SSAValue) else v)
    )


def parse_operands_with_types(parser: Parser) -> list[SSAValue]:
    """Parse `%a, %b : T1, T2` (an empty list when no operand follows)."""
    if parser._current_token.kind != MLIRTokenKind.PERCENT_IDENT:
        return []
    pos = parser.pos
    operands = parser.parse_comma_separated_list(
        parser.Delimiter.NONE, parser.parse_unresolved_operand
    )
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    return list(parser.resolve_operands(operands, types, pos))


def print_operands_with_types(printer: Printer, values: Sequence[SSAValue]) -> None:
    if values:
        printer.print_string(" ")
        print_operand_list(printer, values)
        printer.print_string(" : ")
        print_type_list(printer, values)


class ValuesTerminator(IRDLOperation):
    """A terminator printed as `NAME %a, %b : T1, T2` (IREE's `hal.return`, `flow.return`,
    `util.return`)."""

    values = var_operand_def()
    traits = traits_def(IsTerminator())

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values])

    @classmethod
    def parse(cls, parser: Parser):
        attrs = parser.parse_optional_attr_dict()
        op = cls(parse_operands_with_types(parser))
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        print_attr_dict_if_any(printer, printed_attributes(self))
        print_operands_with_types(printer, self.values)


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


def lenient(cls: type[IRDLOperation]) -> type[IRDLOperation]:
    """Let an IREE op the project models carry properties the project does not: IREE may
    add some (and xDSL text from IREE's generic print has them). They are kept and printed
    as they are, and not checked."""
    strict = cls.verify_
    definition = cls.get_irdl_definition()
    known = set(definition.properties) | {"operandSegmentSizes", "resultSegmentSizes"}

    def verify_(self: IRDLOperation) -> None:
        extra = {k: self.properties.pop(k) for k in list(self.properties) if k not in known}
        try:
            strict(self)
        finally:
            self.properties.update(extra)

    cls.verify_ = verify_  # type: ignore[method-assign]
    return cls
