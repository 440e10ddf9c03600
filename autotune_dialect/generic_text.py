"""xDSL ops as MLIR's generic form with locations: the text IREE reads back exactly.

Verbatim attributes and kernel modules are written as their MLIR text, and calls of
module-level groups as `autotune.call` (`group_syntax`). The writer is specialised for this
one job: lowered modules have a hundred thousand ops, and each attribute, type and
location is printed once and then reused as text.
"""

from __future__ import annotations

import re
from io import StringIO

from xdsl.dialects.builtin import (
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    UnknownLoc,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.printer import Printer

from autotune_dialect.autotune import GroupOp
from autotune_dialect.group_syntax import CALL_OF_GROUP, mlir_string
from autotune_dialect.interop import attribute, op_name
from autotune_dialect.verbatim import VerbatimAttr, VerbatimOp, VerbatimType

_BARE_KEY = re.compile(r"[A-Za-z_][\w$.]*")


class _AttributePrinter(Printer):
    """xDSL's attribute printer, writing verbatim attributes as their text."""

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, VerbatimAttr | VerbatimType):
            self.print_string(attribute.text.data)
        else:
            super().print_attribute(attribute)


class GenericWriter:
    """Writes ops in generic form; `groups` are the module-level group names (their calls
    are written as `autotune.call`)."""

    def __init__(self, groups: frozenset[str] = frozenset(), locations: bool = True):
        self.groups = groups
        self.locations = locations
        self.parts: list[str] = []
        self.names: dict[SSAValue, str] = {}
        self.labels: dict[Block, str] = {}
        self.texts: dict[tuple[Attribute, bool], str] = {}
        self.seen: dict[tuple[int, bool], tuple[Attribute, str]] = {}  # by identity: no hashing

    def text(self) -> str:
        return "".join(self.parts)

    # --- attributes --------------------------------------------------------------------

    def attribute(self, attr: Attribute, in_location: bool = False) -> str:
        if isinstance(attr, VerbatimAttr | VerbatimType):
            return attr.text.data
        if type(attr) is StringAttr:
            return mlir_string(attr.data)
        seen = self.seen.get((id(attr), in_location))
        if seen is not None and seen[0] is attr:
            return seen[1]
        key = (attr, in_location)
        text = self.texts.get(key)
        if text is None:
            out = StringIO()
            printer = _AttributePrinter(stream=out)
            printer.printing_location = in_location
            printer.print_attribute(attr)
            text = self.texts[key] = out.getvalue()
        self.seen[(id(attr), in_location)] = (attr, text)  # holds `attr`: its id stays its own
        return text

    def dictionary(self, entries: dict[str, Attribute]) -> str:
        items = []
        for key, value in entries.items():
            name = key if _BARE_KEY.fullmatch(key) else self.attribute(StringAttr(key))
            items.append(
                name if isinstance(value, UnitAttr) else f"{name} = {self.attribute(value)}"
            )
        return "{" + ", ".join(items) + "}"

    # --- values and blocks -------------------------------------------------------------

    def value(self, value: SSAValue) -> str:
        name = self.names.get(value)
        if name is None:
            name = self.names[value] = f"%{len(self.names)}"
        return name

    def label(self, block: Block) -> str:
        name = self.labels.get(block)
        if name is None:
            name = self.labels[block] = f"^bb{len(self.labels)}"
        return name

    # --- ops ------------------------------------------------------------------------------

    def op(self, op: Operation, indent: str = "") -> None:
        parts = self.parts
        parts.append(indent)
        if op.results:
            parts.append(", ".join(self.value(r) for r in op.results))
            parts.append(" = ")
        if isinstance(op, VerbatimOp):
            parts.append(op.text.data)
            if self.locations:
                parts.append(" " + self.attribute(op.location))
            parts.append("\n")
            return
        properties = dict(op.properties)
        attributes = dict(op.attributes)
        name = op_name(op)
        if isinstance(op, UnregisteredOp):
            attributes.pop("op_name__", None)
        callee = self._called_group(op, name)
        if callee is not None:
            name = CALL_OF_GROUP
            attributes = {"callee": callee, "call": StringAttr(op_name(op)), **attributes}
            properties.pop("callee", None)
            attributes.update(properties)
            properties = {}
        parts.append(f'"{name}"(')
        parts.append(", ".join(self.value(o) for o in op.operands))
        parts.append(")")
        if op.successors:
            parts.append("[" + ", ".join(self.label(b) for b in op.successors) + "]")
        if properties:
            parts.append(" <" + self.dictionary(properties) + ">")
        if op.regions:
            parts.append(" (")
            for i, region in enumerate(op.regions):
                if i:
                    parts.append(", ")
                self.region(region, indent)
            parts.append(")")
        if attributes:
            parts.append(" " + self.dictionary(attributes))
        inputs = ", ".join(self.attribute(o.type) for o in op.operands)
        outputs = ", ".join(self.attribute(r.type) for r in op.results)
        parts.append(f" : ({inputs}) -> ({outputs})")
        if self.locations:
            parts.append(" " + self.attribute(op.location))
        parts.append("\n")

    def region(self, region: Region, indent: str) -> None:
        parts = self.parts
        parts.append("{\n")
        inner = indent + "  "
        for block in region.blocks:
            args = ", ".join(self.block_argument(a) for a in block.args)
            parts.append(
                f"{indent}{self.label(block)}({args}):\n"
                if args
                else f"{indent}{self.label(block)}:\n"
            )
            for op in block.ops:
                self.op(op, inner)
        parts.append(indent + "}")

    def block_argument(self, arg: BlockArgument) -> str:
        text = f"{self.value(arg)}: {self.attribute(arg.type)}"
        if self.locations and not isinstance(arg.location, UnknownLoc):
            text += " " + self.attribute(arg.location)
        return text

    def _called_group(self, op: Operation, name: str) -> Attribute | None:
        """The callee of a `util.call` / `func.call` of a module-level group, else None."""
        if not self.groups or name not in ("util.call", "func.call"):
            return None
        callee = attribute(op, "callee")
        if isinstance(callee, SymbolRefAttr) and callee.root_reference.data in self.groups:
            return callee
        return None


def module_groups(op: Operation) -> frozenset[str]:
    """Names of the groups at the level of a module (groups of functions)."""
    if not isinstance(op, ModuleOp):
        return frozenset()
    return frozenset(g.group_name for g in op.body.ops if isinstance(g, GroupOp))


def generic_text(op: Operation, locations: bool = True) -> str:
    """The generic MLIR text of an op, with locations unless told, as IREE reads it."""
    writer = GenericWriter(module_groups(op), locations)
    writer.op(op)
    return writer.text()
