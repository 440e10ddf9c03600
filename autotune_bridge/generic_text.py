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
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    ModuleOp,
    NameLoc,
    NoneAttr,
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
    are written as `autotune.call`). Given a `kept` list, each op that stands for an op
    IREE holds (`VerbatimOp.deferred`) is written as a stand-in `"verbatim.kept"() {index =
    N}` and appended to the list, for the reader to put IREE's op back."""

    def __init__(
        self,
        groups: frozenset[str] = frozenset(),
        locations: bool = True,
        kept: list[VerbatimOp] | None = None,
    ):
        self.groups = groups
        self.locations = locations
        self.kept = kept
        self.parts: list[str] = []
        self.names: dict[int, str] = {}  # by the value's identity (values outlive the writer)
        self.labels: dict[Block, str] = {}
        self.texts: dict[tuple[Attribute, bool], str] = {}
        self.seen: dict[int, tuple[Attribute, str]] = {}  # by identity: no hashing
        self.seen_in_location: dict[int, tuple[Attribute, str]] = {}

    def text(self) -> str:
        return "".join(self.parts)

    # --- attributes --------------------------------------------------------------------

    def attribute(self, attr: Attribute, in_location: bool = False) -> str:
        seen = self.seen_in_location if in_location else self.seen
        known = seen.get(id(attr))
        if known is not None and known[0] is attr:
            return known[1]
        key = (attr, in_location)
        text = self.texts.get(key)
        if text is None:
            text = self.texts[key] = self._attribute_text(attr, in_location)
        seen[id(attr)] = (attr, text)  # holds `attr`: its id stays its own
        return text

    def _attribute_text(self, attr: Attribute, in_location: bool) -> str:
        # Written here for the kinds lowered modules hold by the thousand (locations, and
        # the metadata's long strings in dictionaries), xDSL's printer for the rest.
        kind = type(attr)
        if kind is StringAttr:
            return mlir_string(attr.data)  # type: ignore[attr-defined]
        if kind is VerbatimAttr or kind is VerbatimType:
            return attr.text.data  # type: ignore[attr-defined]
        if kind is FileLineColLoc or kind is NameLoc:
            text = self.location(attr)
            return text if in_location else f"loc({text})"
        if kind is ArrayAttr:
            return "[" + ", ".join(self.attribute(a) for a in attr.data) + "]"  # type: ignore[attr-defined]
        if kind is DictionaryAttr:
            return self.dictionary(attr.data)  # type: ignore[attr-defined]
        out = StringIO()
        printer = _AttributePrinter(stream=out)
        printer.printing_location = in_location
        printer.print_attribute(attr)
        return out.getvalue()

    def location(self, loc: Attribute) -> str:
        """A location's text inside `loc(...)`."""
        if type(loc) is FileLineColLoc:
            return f"{mlir_string(loc.filename.data)}:{loc.line.data}:{loc.column.data}"
        if type(loc) is NameLoc:
            child = loc.location
            if isinstance(child, NoneAttr):
                return mlir_string(loc.desc.data)
            return f"{mlir_string(loc.desc.data)}({self.attribute(child, True)})"
        return self.attribute(loc, True)

    def dictionary(self, entries: dict[str, Attribute]) -> str:
        items = []
        for key, value in entries.items():
            name = key if _BARE_KEY.fullmatch(key) else mlir_string(key)
            items.append(name if type(value) is UnitAttr else f"{name} = {self.attribute(value)}")
        return "{" + ", ".join(items) + "}"

    # --- values and blocks -------------------------------------------------------------

    def value(self, value: SSAValue) -> str:
        name = self.names.get(id(value))
        if name is None:
            name = self.names[id(value)] = f"%{len(self.names)}"
        return name

    def label(self, block: Block) -> str:
        name = self.labels.get(block)
        if name is None:
            name = self.labels[block] = f"^bb{len(self.labels)}"
        return name

    # --- ops ------------------------------------------------------------------------------

    def op(self, op: Operation, indent: str = "") -> None:
        append = self.parts.append
        attribute = self.attribute
        append(indent)
        results = op.results
        if results:
            value = self.value
            append(", ".join([value(r) for r in results]))
            append(" = ")
        if type(op) is VerbatimOp:
            if self.kept is not None and op.kept_iree_op() is not None:
                append(f'"verbatim.kept"() {{index = {len(self.kept)} : i64}} : () -> ()\n')
                self.kept.append(op)
                return
            append(op.text.data)
            if self.locations:
                append(" " + attribute(op.location))
            append("\n")
            return
        properties = op.properties
        attributes = op.attributes
        name = op_name(op)
        if isinstance(op, UnregisteredOp):
            attributes = {k: v for k, v in attributes.items() if k != "op_name__"}
        callee = self._called_group(op, name) if self.groups else None
        if callee is not None:
            name = CALL_OF_GROUP
            attributes = {"callee": callee, "call": StringAttr(op_name(op)), **attributes}
            attributes.update((k, v) for k, v in properties.items() if k != "callee")
            properties = {}
        operands = op.operands
        value = self.value
        append(f'"{name}"(')
        append(", ".join([value(o) for o in operands]))
        append(")")
        if op.successors:
            append("[" + ", ".join(self.label(b) for b in op.successors) + "]")
        if properties:
            append(" <" + self.dictionary(properties) + ">")
        if op.regions:
            append(" (")
            for i, region in enumerate(op.regions):
                if i:
                    append(", ")
                self.region(region, indent)
            append(")")
        if attributes:
            append(" " + self.dictionary(attributes))
        inputs = ", ".join([attribute(o.type) for o in operands])
        outputs = ", ".join([attribute(r.type) for r in results])
        if self.locations:
            append(f" : ({inputs}) -> ({outputs}) {attribute(op.location)}\n")
        else:
            append(f" : ({inputs}) -> ({outputs})\n")

    def region(self, region: Region, indent: str) -> None:
        parts = self.parts
        parts.append("{\n")
        inner = indent + "  "
        op = self.op
        for block in region.blocks:
            args = ", ".join(self.block_argument(a) for a in block.args)
            parts.append(
                f"{indent}{self.label(block)}({args}):\n"
                if args
                else f"{indent}{self.label(block)}:\n"
            )
            for inner_op in block.ops:
                op(inner_op, inner)
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


def generic_text(
    op: Operation, locations: bool = True, kept: list[VerbatimOp] | None = None
) -> str:
    """The generic MLIR text of an op, with locations unless told, as IREE reads it
    (`kept`: see `GenericWriter`)."""
    writer = GenericWriter(module_groups(op), locations, kept)
    writer.op(op)
    return writer.text()
