"""IREE attributes and types: the few the project interprets, and a verbatim form for the rest.

`#hal.pipeline.layout` and `#hal.pipeline.binding` are parsed into fields, because group
verification compares layouts and counts bindings and push constants. Every other IREE
attribute or type is an `IREEOpaqueAttr`: its body between `<` and `>` is kept as written,
with references to aliases replaced by the aliased text so that the body stays valid when
printed without the alias definitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, IntAttr, NoneAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from autotune_dialect.iree_names import IREE_ATTRIBUTE_NAMES, IREE_TYPE_NAMES
from autotune_dialect.rawtext import ScanError, substitute_aliases

# Attributes that print a trailing `: type` (MLIR TypedAttr), keyed by full name.
_TYPED_ATTRIBUTES = frozenset(
    {
        "hal.device.alias",
        "hal.device.fallback",
        "hal.device.ordinal",
        "hal.device.promise",
        "hal.device.select",
        "hal.device.target",
        "util.byte_pattern",
        "util.composite",
        "util.null",
        "util.uninitialized",
    }
)


def attribute_text(attr: Attribute) -> str:
    """The MLIR text of an attribute or type, as xDSL prints it."""
    out = StringIO()
    Printer(stream=out).print_attribute(attr)
    return out.getvalue()


def expand_aliases(parser: AttrParser, text: str) -> str:
    """Replace alias references in raw `text` with the text of the aliased attribute."""

    def resolve(name: str) -> str | None:
        value = parser.attribute_aliases.get(name)
        return None if value is None else attribute_text(value)

    return substitute_aliases(text, resolve)


class IREEOpaqueAttr(ParametrizedAttribute):
    """An IREE attribute or type kept as text: `#dialect.name<body>` (`: type`)."""

    body: StringAttr
    """The text between the outer `<` and `>`, aliases expanded; empty when absent."""
    trailing_type: Attribute
    """The trailing type of a typed attribute, or NoneAttr."""

    TYPED: ClassVar[bool] = False

    def __init__(self, body: str | StringAttr = "", trailing_type: Attribute | None = None):
        if isinstance(body, str):
            body = StringAttr(body)
        super().__init__(body, NoneAttr() if trailing_type is None else trailing_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        body = ""
        if parser._current_token.kind == MLIRTokenKind.LESS:
            start = parser._current_token.span.start + 1
            try:
                body = parser._parse_dialect_symbol_body()
            except ScanError as err:  # pragma: no cover - raised by xDSL as ParseError
                parser.raise_error(str(err), start)
            body = expand_aliases(parser, body)
        type_: Attribute = NoneAttr()
        if cls.TYPED and parser.parse_optional_punctuation(":") is not None:
            type_ = parser.parse_type()
        return (StringAttr(body), type_)

    def print_parameters(self, printer: Printer) -> None:
        if self.body.data:
            printer.print_string(f"<{self.body.data}>")
        if not isinstance(self.trailing_type, NoneAttr):
            printer.print_string(" : ")
            printer.print_attribute(self.trailing_type)


class IREEOpaqueType(IREEOpaqueAttr, TypeAttribute):
    """An IREE type kept as text: `!dialect.name<body>`."""


_OPAQUE_CLASSES: dict[tuple[str, bool], type[IREEOpaqueAttr]] = {}


def opaque_class(full_name: str, is_type: bool) -> type[IREEOpaqueAttr]:
    """The verbatim attribute (or type) class registered under `full_name`."""
    key = (full_name, is_type)
    if key not in _OPAQUE_CLASSES:
        base = IREEOpaqueType if is_type else IREEOpaqueAttr
        cls = type(
            "IREE_" + full_name.replace(".", "_"),
            (base,),
            {"name": full_name, "TYPED": full_name in _TYPED_ATTRIBUTES, "__module__": __name__},
        )
        _OPAQUE_CLASSES[key] = irdl_attr_definition(cls)
    return _OPAQUE_CLASSES[key]


def opaque_classes(dialect: str, exclude: Sequence[str] = ()) -> list[type[Attribute]]:
    """Every verbatim attribute and type class of an IREE dialect, less `exclude`d names."""
    attrs = [
        opaque_class(f"{dialect}.{n}", False)
        for n in IREE_ATTRIBUTE_NAMES.get(dialect, ())
        if n not in exclude
    ]
    types = [
        opaque_class(f"{dialect}.{n}", True)
        for n in IREE_TYPE_NAMES.get(dialect, ())
        if n not in exclude
    ]
    return [*attrs, *types]


def _opaque_type(full_name: str) -> type[IREEOpaqueAttr]:
    return opaque_class(full_name, True)


DeviceType = _opaque_type("hal.device")
FenceType = _opaque_type("hal.fence")
BufferViewType = _opaque_type("hal.buffer_view")
DispatchTensorType = _opaque_type("iree_tensor_ext.dispatch.tensor")


def device_type() -> TypeAttribute:
    """`!hal.device`."""
    return DeviceType()  # type: ignore[return-value]


def fence_type() -> TypeAttribute:
    """`!hal.fence`."""
    return FenceType()  # type: ignore[return-value]


@irdl_attr_definition
class PipelineBindingAttr(ParametrizedAttribute):
    """`#hal.pipeline.binding<storage_buffer, ReadOnly>`: one binding of a pipeline layout."""

    name = "hal.pipeline.binding"

    descriptor_type: StringAttr
    flags: StringAttr
    """`|`-separated flags such as `ReadOnly|Indirect`, or empty."""

    def __init__(self, descriptor_type: str, flags: str = ""):
        super().__init__(StringAttr(descriptor_type), StringAttr(flags))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        kind = parser.parse_identifier("descriptor type (e.g. storage_buffer)")
        flags = ""
        if parser.parse_optional_punctuation(",") is not None:
            flags = parser.parse_optional_str_literal() or parser.parse_identifier("binding flags")
        parser.parse_punctuation(">")
        return (StringAttr(kind), StringAttr(flags))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.descriptor_type.data}")
        flags = self.flags.data
        if flags:
            printer.print_string(f', "{flags}"' if "|" in flags else f", {flags}")
        printer.print_string(">")


@irdl_attr_definition
class PipelineLayoutAttr(ParametrizedAttribute):
    """`#hal.pipeline.layout<constants = N, bindings = [...], flags = F>`.

    The interface of an export: N 32-bit push constants and the ordered bindings.
    """

    name = "hal.pipeline.layout"

    constants: IntAttr
    bindings: ArrayAttr[PipelineBindingAttr]
    flags: StringAttr

    def __init__(self, constants: int, bindings: Sequence[PipelineBindingAttr], flags: str = ""):
        super().__init__(IntAttr(constants), ArrayAttr(bindings), StringAttr(flags))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        constants = 0
        bindings: list[PipelineBindingAttr] = []
        flags = ""
        seen: set[str] = set()

        def parse_entry() -> None:
            nonlocal constants, bindings, flags
            key = parser.parse_identifier("'constants', 'bindings' or 'flags'")
            if key in seen:
                parser.raise_error(f"duplicate '{key}' in #hal.pipeline.layout")
            seen.add(key)
            parser.parse_punctuation("=")
            if key == "constants":
                constants = parser.parse_integer(allow_boolean=False, allow_negative=False)
            elif key == "bindings":
                items = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_attribute
                )
                for item in items:
                    if not isinstance(item, PipelineBindingAttr):
                        parser.raise_error("expected #hal.pipeline.binding<...>")
                bindings = items  # type: ignore[assignment]
            elif key == "flags":
                flags = parser.parse_optional_str_literal() or parser.parse_identifier(
                    "layout flags"
                )
            else:
                parser.raise_error(f"unknown #hal.pipeline.layout parameter '{key}'")

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_entry)
        if "bindings" not in seen:
            parser.raise_error("#hal.pipeline.layout requires 'bindings'", start, parser.pos)
        return (IntAttr(constants), ArrayAttr(bindings), StringAttr(flags))

    def print_parameters(self, printer: Printer) -> None:
        parts = []
        if self.constants.data:
            parts.append(f"constants = {self.constants.data}")
        parts.append("bindings = [" + ", ".join(attribute_text(b) for b in self.bindings) + "]")
        if self.flags.data:
            flags = self.flags.data
            parts.append(f'flags = "{flags}"' if "|" in flags else f"flags = {flags}")
        printer.print_string("<" + ", ".join(parts) + ">")

    def verify(self) -> None:
        if self.constants.data < 0:
            raise VerifyException("#hal.pipeline.layout constants must be >= 0")
