"""The project's user-facing error: `file:line:col: error: message`, with the source line
(every layer raises it; the command line prints it)."""

from __future__ import annotations

import re
from dataclasses import dataclass

INTERRUPTED = 130
"""The exit status of a command that SIGINT (Ctrl-C) ended, 128 + 2, as a shell's."""


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
        """The diagnostic as MLIR tools print it. A long source line is shown around the
        caret only, and an embedded object (`dense<[47, 47, ...]>`, a whole PTX file) is
        never printed whole."""
        head = f"{self.location}: error: " if self.location else "error: "
        text = head + shorten_literals(self.message)
        if self.location is not None and self.source is not None:
            lines = self.source.split("\n")
            if 1 <= self.location.line <= len(lines):
                line, caret = source_window(lines[self.location.line - 1], self.location.column)
                text += f"\n{line}\n{' ' * caret}^"
        return text

    def __str__(self) -> str:
        return self.render()


SOURCE_WIDTH = 1000
"""Characters of a source line shown under a diagnostic: a long line of IR whole, a line
holding an embedded object (100 KB) around the caret."""

_LONG_DENSE = re.compile(r"dense<\[((?:\s*-?[\w.+]+\s*,){8})[^\]]{64,}\]>")


def shorten_literals(text: str) -> str:
    """`text` with each long `dense<[...]>` literal cut to its first values."""
    return _LONG_DENSE.sub(lambda m: f"dense<[{m[1].rstrip(',')}, ...]>", text)


def source_window(line: str, column: int) -> tuple[str, int]:
    """The part of a source line shown under a diagnostic, and the caret's offset in it:
    the whole line when short, else `SOURCE_WIDTH` characters around `column` (1-based)."""
    if len(line) <= SOURCE_WIDTH:
        return line, column - 1
    start = max(0, min(column - 1 - SOURCE_WIDTH // 4, len(line) - SOURCE_WIDTH))
    end = start + SOURCE_WIDTH
    shown = ("..." if start else "") + line[start:end] + ("..." if end < len(line) else "")
    return shown, column - 1 - start + (3 if start else 0)
