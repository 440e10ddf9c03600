"""Diagnostics about xDSL ops: an op's place in the source and errors phrased as MLIR's."""

from __future__ import annotations

import re

from xdsl.dialects.builtin import FileLineColLoc, NameLoc, UnregisteredOp
from xdsl.ir import Operation

from autotune_contracts.errors import DiagnosticError, SourceLocation

UNDECLARED_VALUE = "use of undeclared SSA value name"
_VALUE_NAME = re.compile(r"%[\w$.\-]+(?:#\d+)?")


def named_value(message: str, location: SourceLocation | None, source: str | None) -> str:
    """MLIR's `use of undeclared SSA value name` with the name it points at (`%w`)."""
    if message != UNDECLARED_VALUE or location is None or source is None:
        return message
    lines = source.split("\n")
    if not 1 <= location.line <= len(lines):
        return message
    name = _VALUE_NAME.match(lines[location.line - 1], location.column - 1)
    return f"use of undeclared SSA value {name.group()}" if name else message


def op_location(op: Operation) -> SourceLocation | None:
    """Where an op was parsed, from its `FileLineColLoc` (or its nearest ancestor's)."""
    current: Operation | None = op
    while current is not None:
        loc = current.location
        while isinstance(loc, NameLoc):
            loc = loc.location
        if isinstance(loc, FileLineColLoc):
            return SourceLocation(loc.filename.data, loc.line.data, loc.column.data)
        current = current.parent_op()
    return None


def op_error(op: Operation, message: str, source: str | None = None) -> DiagnosticError:
    """An error about `op`, phrased as MLIR does: `'name' op message`."""
    name = op.op_name.data if isinstance(op, UnregisteredOp) else op.name
    return DiagnosticError(f"'{name}' op {message}", op_location(op), source)
