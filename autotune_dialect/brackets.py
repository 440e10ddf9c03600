"""Unbalanced brackets, found where a person would fix them.

MLIR's parser notices a missing or extra `}` only where the text stops making sense (the
end of the file, or an op it cannot read), and says "expected operation name in quotes".
When IREE fails to parse a text, `unbalanced` looks at its brackets (outside strings and
comments): a closer that closes nothing, one of the wrong kind, a region never closed.
Indentation tells which brace is the stray one: a `}` that starts its line closes the
region whose opening line is indented like it, so the first region closed by a `}`
indented differently is where the count went wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_contracts.errors import DiagnosticError, SourceLocation

_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|[()\[\]{}]')
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_WHAT = {"{": "'{'", "(": "'('", "[": "'['"}


@dataclass
class _Open:
    char: str
    offset: int
    indent: int
    region: bool
    """A `{` that ends its line: the opening of a region (or of a long dictionary)."""

    @property
    def what(self) -> str:
        return "region" if self.region else _WHAT[self.char]


def _indent(text: str, offset: int) -> int:
    """Width of the leading space of the line holding `offset`."""
    start = text.rfind("\n", 0, offset) + 1
    line = text[start:offset]
    return len(line.expandtabs(8)) - len(line.lstrip(" \t").expandtabs(8))


def _ends_line(text: str, offset: int) -> bool:
    """Whether only space or a comment follows `offset` on its line."""
    end = text.find("\n", offset)
    rest = text[offset : len(text) if end < 0 else end].strip(" \t")
    return not rest or rest.startswith("//")


def _starts_line(text: str, offset: int) -> bool:
    start = text.rfind("\n", 0, offset) + 1
    return not text[start:offset].strip(" \t")


def unbalanced(text: str, filename: str) -> DiagnosticError | None:
    """The first bracket that does not pair up, as a located error; None if all do."""

    def at(offset: int) -> SourceLocation:
        return SourceLocation.from_offset(filename, text, offset)

    def error(message: str, offset: int) -> DiagnosticError:
        return DiagnosticError(message, at(offset), text)

    stack: list[_Open] = []
    hint: DiagnosticError | None = None  # the first pairing that indentation contradicts
    for match in _TOKENS.finditer(text):
        token = match.group()
        offset = match.start()
        if token in "([{":
            region = token == "{" and _ends_line(text, offset + 1)
            stack.append(_Open(token, offset, _indent(text, offset), region))
            continue
        if token not in ")]}":
            continue  # a string or a comment
        if not stack:
            if token == "}":
                return hint or error("unexpected '}': no open region here", offset)
            return hint or error(f"unexpected '{token}': nothing open here to close", offset)
        opened = stack.pop()
        if _CLOSER[opened.char] != token:
            return hint or error(
                f"unexpected '{token}': the {opened.what} opened at "
                f"{at(opened.offset)} is not closed (expected '{_CLOSER[opened.char]}')",
                offset,
            )
        if hint is None and token == "}" and _starts_line(text, offset):
            indent = _indent(text, offset)
            if indent > opened.indent:
                hint = error(
                    f"unexpected '}}': no open region here (it would close the "
                    f"{opened.what} opened at {at(opened.offset)}, which is indented less)",
                    offset,
                )
            elif indent < opened.indent:
                hint = error(
                    f"unterminated {opened.what}: no '}}' closes this '{{' (the '}}' at "
                    f"{at(offset)} is indented like the region around it)",
                    opened.offset,
                )
    if not stack:
        return None
    if hint is not None:
        return hint
    innermost = stack[-1]
    end = len(text.rstrip())
    what = innermost.what
    more = len(stack) - 1
    return error(
        f"unexpected end of input: unterminated {what} opened at {at(innermost.offset)}"
        + (f" (expected '{_CLOSER[innermost.char]}')" if innermost.char != "{" else "")
        + (f"; {more} more open around it" if more else ""),
        end,
    )
