"""IREE's parser, verifier and printer for text, xDSL for what the project rewrites.

- `read_module(text, filename)`: IREE parses and verifies the text (groups in custom
  syntax are first written in generic form, `group_syntax`), then the module is imported
  into xDSL (`importer`). Every error names the user's `file:line:col`.
- `to_iree(module)`: xDSL prints the module in generic form with its locations (verbatim
  attributes and kernel modules as their text); IREE parses and verifies it.
- `iree_text(module, locations)`: IREE's own print of the module, groups in custom syntax.

docs/interop.md explains why the work is split so.
"""

from __future__ import annotations

import re
from io import StringIO

from iree.compiler import ir
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

from autotune_dialect.autotune import GroupOp
from autotune_dialect.diagnostics import DiagnosticError, SourceLocation
from autotune_dialect.group_syntax import CALL_OF_GROUP, mlir_string, to_custom, to_generic
from autotune_dialect.importer import STDIN_NAME, Importer, mlir_location
from autotune_dialect.interop import attribute, op_name
from autotune_dialect.mlir_text import repair_iree_print
from autotune_dialect.verbatim import VerbatimAttr, VerbatimOp, VerbatimType


def iree_context() -> ir.Context:
    """A context with IREE's dialects that accepts the autotune ops (IREE knows nothing of
    them; the import refuses any other unknown op).

    Single-threaded: an error that IREE's verifier reports from a worker thread waits for
    the Python diagnostic handler, which waits for the thread that holds the interpreter
    lock (the parsing one): a deadlock, seen on an undefined `fallback` entry point."""
    context = ir.Context()
    context.allow_unregistered_dialects = True
    context.enable_multithreading(False)
    return context


def diagnostic(err: ir.MLIRError, filename: str, source: str | None) -> DiagnosticError:
    """The first error of an IREE diagnostic report, at its `file:line:col`."""
    errors = err.error_diagnostics
    if not errors:
        return DiagnosticError(str(err).split("\n", 1)[0])
    first = errors[0]
    where = mlir_location(first.location)
    if where is not None and where.filename == STDIN_NAME:
        where = SourceLocation(filename, where.line, where.column)
    if where is not None and where.line == 0:  # the whole buffer
        where = None
    shown = source if where is not None and where.filename == filename else None
    return DiagnosticError(first.message, where, shown)


def parse_iree(text: str, filename: str, context: ir.Context) -> ir.Operation:
    """IREE's module of `text` (parsed and verified), locations under `filename`."""
    generic = to_generic(text, filename)
    with context:
        try:
            module = ir.Module.parse(generic)
        except ir.MLIRError as err:
            raise diagnostic(err, filename, text) from None
    return module.operation


_RESOURCES = re.compile(r"^\{-#.*?^#-\}", re.MULTILINE | re.DOTALL)


def read_module(text: str, filename: str = "<input>") -> ModuleOp:
    """Parse MLIR text with IREE and import it into xDSL (`DiagnosticError` on bad input).

    The file's resource blobs (`{-# dialect_resources: ... #-}`, which `dense_resource`
    constants refer to) are kept with the module as text and written back with it."""
    context = iree_context()
    iree_module = parse_iree(text, filename, context)
    with context:
        module = Importer(context, text, filename).module(iree_module)
    if "{-#" in text:
        module.resources = "\n".join(m.group() for m in _RESOURCES.finditer(text))
    return module


class IREEPrinter(Printer):
    """xDSL's generic printer with locations, writing verbatim attributes and kernel
    modules as their MLIR text, and calls of the `groups` (module-level group names) as
    `autotune.call`: the form IREE reads back exactly."""

    def __init__(self, stream: StringIO, groups: frozenset[str] = frozenset()):
        super().__init__(stream=stream, print_generic_format=True, print_debuginfo=True)
        self.groups = groups

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, VerbatimAttr | VerbatimType):
            self.print_string(attribute.text.data)
        else:
            super().print_attribute(attribute)

    def print_op(self, op: Operation) -> None:
        if isinstance(op, VerbatimOp):
            self.print_string(op.text.data)
            self.print_string(" ")
            self.print_attribute(op.location)
        elif self.groups and (callee := _called_group(op, self.groups)) is not None:
            self._print_call_of_group(op, callee)
        else:
            super().print_op(op)

    def _print_call_of_group(self, op: Operation, callee: Attribute) -> None:
        self._print_results(op)
        self.print_string(f'"{CALL_OF_GROUP}"(')
        self.print_list(op.operands, self.print_operand)
        self.print_string(") ")
        attrs = {"callee": callee, "call": StringAttr(op_name(op))}
        attrs.update((k, v) for k, v in op.attributes.items() if k != "callee")
        self.print_attr_dict(attrs)
        self.print_string(" : ")
        self.print_operation_type(op)


def _called_group(op: Operation, groups: frozenset[str]) -> Attribute | None:
    """The callee of a `util.call` / `func.call` of one of `groups`, else None."""
    if op_name(op) not in ("util.call", "func.call"):
        return None
    callee = attribute(op, "callee")
    if isinstance(callee, SymbolRefAttr) and callee.root_reference.data in groups:
        return callee
    return None


def module_groups(module: Operation) -> frozenset[str]:
    """Names of the groups at module level (groups of functions)."""
    return frozenset(
        op.group_name for region in module.regions for op in region.ops if isinstance(op, GroupOp)
    )


def generic_text(op: Operation) -> str:
    """The generic MLIR text of an op, with locations, as IREE reads it."""
    out = StringIO()
    IREEPrinter(out, module_groups(op)).print_op(op)
    return out.getvalue()


def to_iree(module: ModuleOp, context: ir.Context, source: str | None = None) -> ir.Operation:
    """IREE's module of an xDSL module, verified by IREE.

    IREE rejecting it is a defect of the project (the import keeps what IREE accepted),
    reported as an internal error at the location IREE names."""
    text = generic_text(module) + "\n" + getattr(module, "resources", "")
    with context:
        try:
            return ir.Module.parse(text).operation
        except ir.MLIRError as err:
            report = diagnostic(err, STDIN_NAME, None)
            report.message = f"internal error: IREE rejects the rewritten module: {report.message}"
            if report.location is not None and source is not None:
                report.source = source
            raise report from None


def iree_text(module: ModuleOp, locations: bool = False, source: str | None = None) -> str:
    """IREE's print of an xDSL module (groups in their custom syntax); with `locations`,
    every op names its place in the user's file (`loc(...)`)."""
    context = iree_context()
    iree_module = to_iree(module, context, source)
    text = repair_iree_print(iree_module.get_asm(enable_debug_info=locations, assume_verified=True))
    groups = [op for op in module.walk() if isinstance(op, GroupOp)]
    if groups:
        text = to_custom(text, [_custom_group_text(g) for g in groups])
    return text


def _custom_group_text(group: GroupOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(group)
    return out.getvalue()


__all__ = [
    "IREEPrinter",
    "diagnostic",
    "generic_text",
    "iree_context",
    "iree_text",
    "mlir_string",
    "parse_iree",
    "read_module",
    "to_iree",
]
