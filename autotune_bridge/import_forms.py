"""Which IREE ops the import makes the project's ops, and how their attributes are read
from IREE's generic print (the rest of the import: `importer`)."""

from __future__ import annotations

import functools
import re

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.irdl import IRDLOperation

from autotune_dialect.flow import Flow
from autotune_dialect.hal import HAL
from autotune_dialect.util import CallOp, Util

MODELLED: dict[str, type[IRDLOperation]] = {
    op.name: op for dialect in (Flow, Util, HAL) for op in dialect.operations
}
"""IREE ops imported as the project's ops (when their form is one the project models)."""


@functools.cache
def property_names(cls: type[IRDLOperation]) -> frozenset[str]:
    names = set(cls.get_irdl_definition().properties)
    return frozenset(names | {"operandSegmentSizes", "resultSegmentSizes"})


_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|->|[<({\[\]})>]|[A-Za-z_][\w$.-]*|[=,:]')


def generic_dictionaries(generic: str) -> tuple[dict[str, str], dict[str, str]]:
    """The property dictionary `<{...}>` and the attribute dictionary `{...}` of an op's
    generic text (printed without regions), as key -> value text (`unit` for a key with
    no value)."""
    dictionaries: list[dict[str, str]] = [{}, {}]
    target: dict[str, str] | None = None
    depth = 0
    key: str | None = None
    value_start = 0
    previous = ""

    def close_entry(end: int) -> None:
        nonlocal key
        if key is not None and target is not None:
            value = generic[value_start:end].strip() if value_start else ""
            target[key] = value or "unit"
        key = None

    for token in _TOKEN.finditer(generic, max(0, generic.find('"'))):  # from the op's name
        text = token.group()
        if target is None:
            if text == "{" and previous == "<" and depth == 1:
                target, key, value_start = dictionaries[0], None, 0
                depth = 0
            elif text == "{" and depth == 0:
                target, key, value_start = dictionaries[1], None, 0
            elif text in "([<":
                depth += 1
            elif text in ")]>":
                depth -= 1
            elif text == ":" and depth == 0:
                break
            previous = text
            continue
        if depth == 0 and text == "}":
            close_entry(token.start())
            depth = 1 if target is dictionaries[0] else 0  # the `>` of `<{...}>` follows
            target, previous = None, "}"
            continue
        if text in "<({[":
            depth += 1
        elif text in ">)}]":
            depth -= 1
        elif depth == 0 and text == ",":
            close_entry(token.start())
        elif depth == 0 and text == "=" and key is not None:
            value_start = token.end()
        elif depth == 0 and key is None:
            key, value_start = (text[1:-1] if text.startswith('"') else text), 0
    return dictionaries[0], dictionaries[1]


def call_kind(attributes: dict[str, Attribute]) -> str:
    """The op a generic call of a group stands for (its `call` attribute, removed)."""
    kind = attributes.pop("call", None)
    if isinstance(kind, StringAttr) and kind.data in ("util.call", "func.call"):
        return kind.data
    return "util.call"


def modelled_op(
    cls, operands, result_types, attributes, inherent, successors, regions
) -> Operation | None:
    """The project's op for an IREE op, or None when this instance has a form the project
    does not model: it is then kept unregistered (with the same regions)."""
    if successors:
        return None
    names = property_names(cls) | inherent
    op = None
    try:
        op = cls.create(
            operands=operands,
            result_types=result_types,
            properties={k: v for k, v in attributes.items() if k in names},
            attributes={k: v for k, v in attributes.items() if k not in names},
            regions=regions,
        )
        op.verify_()
        if isinstance(op, CallOp) and op.has_tied_results():
            raise ValueError("a form the custom syntax does not print")
    except Exception:  # noqa: BLE001 - any mismatch keeps the op as IREE wrote it
        if op is not None:
            for region in list(op.regions):
                op.detach_region(region)
            op.drop_all_references()
        return None
    return op
