"""Attributes and types between MLIR text and xDSL objects, in one shared context.

Dialect attributes and types that the project does not model (`!hal.buffer_view`,
`#iree_codegen.compilation_info<...>`, ...) are xDSL's unregistered attributes, so they must
all come from one context to compare equal. That context knows the builtin dialect and
the project's attributes, and accepts every other name.
"""

from __future__ import annotations

import functools
import re
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    Builtin,
    BytesAttr,
    DenseResourceAttr,
    DictionaryAttr,
    ShapedType,
    StringAttr,
)
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.printer import Printer

from autotune_dialect.verbatim import Verbatim


@functools.cache
def shared_context() -> Context:
    """The context of attribute and type conversion (unregistered names allowed). Of the
    project's dialects only `verbatim` defines attributes and types; the others' names are
    unregistered attributes here, as they would be with those dialects loaded."""
    ctx = Context(allow_unregistered=True)
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Verbatim)
    return ctx


def attribute_text(attr: Attribute) -> str:
    """The MLIR text of an attribute or type, as xDSL prints it."""
    out = StringIO()
    Printer(stream=out).print_attribute(attr)
    return out.getvalue()


def parse_text(text: str, is_type: bool) -> Attribute | None:
    """The xDSL attribute (or type) of MLIR text, or None if xDSL cannot read it."""
    resource = None if is_type else _DENSE_RESOURCE.fullmatch(text)
    if resource is not None:
        # Not through xDSL's parser, which renames a resource handle it has seen before in
        # the process (`dense_resource<r>` read twice is `r_0` the second time).
        type_ = parse_text(resource[2], True)
        if not isinstance(type_, ShapedType):
            return None
        return DenseResourceAttr.from_params(resource[1], type_)
    parser = Parser(shared_context(), text)
    try:
        value = parser.parse_type() if is_type else parser.parse_attribute()
    except Exception:  # noqa: BLE001 - any failure means "not representable"
        return None
    if parser.pos < len(text):  # more than the one type or attribute
        return None
    return _as_strings(value)


_DENSE_RESOURCE = re.compile(r"dense_resource<([A-Za-z_][\w.$]*)> : (.+)", re.DOTALL)


def _as_strings(attr: Attribute) -> Attribute:
    """xDSL reads a string literal with escapes (MLIR writes non-ASCII text as `\\C3\\BC`)
    as bytes: text that is UTF-8 is a string, as it is for MLIR."""
    if isinstance(attr, BytesAttr):
        try:
            return StringAttr(attr.data.decode("utf-8"))
        except UnicodeDecodeError:
            return attr
    if isinstance(attr, ArrayAttr):
        return ArrayAttr([_as_strings(a) for a in attr.data])
    if isinstance(attr, DictionaryAttr):
        return DictionaryAttr({k: _as_strings(v) for k, v in attr.data.items()})
    return attr


@functools.lru_cache(maxsize=4096)
def parse_type_text(text: str) -> Attribute:
    """The xDSL type of MLIR type text (`ValueError` if xDSL cannot read it)."""
    value = parse_text(text, True)
    if value is None:
        raise ValueError(f"not a type xDSL reads: {text}")
    return value


def parse_attribute_text(text: str) -> Attribute:
    """The xDSL attribute of MLIR attribute text (`ValueError` if xDSL cannot read it)."""
    value = parse_text(text, False)
    if value is None:
        raise ValueError(f"not an attribute xDSL reads: {text}")
    return value
