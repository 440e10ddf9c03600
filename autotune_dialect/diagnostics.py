"""MLIR-style diagnostics: `file:line:col: error: message`, with the source line."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import FileLineColLoc, NameLoc, UnregisteredOp
from xdsl.ir import Operation


@dataclass(frozen=True)
class SourceLocation:
    """A 1-based line and column in a named file."""

    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"

    @staticmethod
    def from_offset(filename: str, text: str, offset: int) -> SourceLocation:
        offset = max(0, min(offset, len(text)))
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        return SourceLocation(filename, line, column)


class DiagnosticError(Exception):
    """A user-facing error at a place in the input."""

    def __init__(
        self, message: str, location: SourceLocation | None = None, source: str | None = None
    ):
        super().__init__(message)
        self.message = message
        self.location = location
        self.source = source

    def render(self) -> str:
        """The diagnostic as MLIR tools print it."""
        head = f"{self.location}: error: " if self.location else "error: "
        text = head + self.message
        if self.location is not None and self.source is not None:
            lines = self.source.split("\n")
            if 1 <= self.location.line <= len(lines):
                line = lines[self.location.line - 1]
                text += f"\n{line}\n{' ' * (self.location.column - 1)}^"
        return text

    def __str__(self) -> str:
        return self.render()


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
