"""Scanning of MLIR text kept verbatim (`verbatim.op`): where an op with a region ends,
and re-indenting a captured block so that it nests in its new position."""

from __future__ import annotations

from collections.abc import Iterator

_OPENERS = {"{": "}", "(": ")", "[": "]", "<": ">"}


class ScanError(ValueError):
    """Unbalanced or unterminated text; `pos` is the offending offset."""

    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.pos = pos


def _skip_string(text: str, pos: int) -> int:
    """`pos` is just after an opening quote; return the offset after the closing one."""
    start = pos - 1
    while pos < len(text):
        ch = text[pos]
        pos += 1
        if ch == "\\":
            pos += 1
        elif ch == '"':
            return pos
    raise ScanError("unterminated string literal", start)


def _skip_comment(text: str, pos: int) -> int:
    """`pos` is at `//`; return the offset of the end of the line."""
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def tokens_outside_literals(text: str, pos: int = 0) -> Iterator[tuple[int, str]]:
    """Yield (offset, char) from `pos` on, outside string literals and `//` comments."""
    while pos < len(text):
        ch = text[pos]
        if ch == '"':
            pos = _skip_string(text, pos + 1)
            continue
        if ch == "/" and text.startswith("//", pos):
            pos = _skip_comment(text, pos)
            continue
        yield pos, ch
        pos += 1


def find_region_op_end(text: str, start: int) -> int:
    """Offset just past the op that starts at `start` and ends with a `{...}` region.

    Brace groups are followed while one follows another (`attributes {..} {..}`); the op
    ends after the first brace group that is not followed by another `{`.
    """
    depth = 0
    for pos, ch in tokens_outside_literals(text, start):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise ScanError("unbalanced '}'", pos)
            if depth == 0:
                nxt = _next_significant(text, pos + 1)
                if nxt >= len(text) or text[nxt] != "{":
                    return pos + 1
    raise ScanError("unexpected end of input inside a region", start)


def _next_significant(text: str, pos: int) -> int:
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
        elif text.startswith("//", pos):
            pos = _skip_comment(text, pos)
        else:
            return pos
    return pos


def dedent_block(text: str) -> list[str]:
    """Split `text` into lines and remove the indentation common to lines after the first."""
    lines = text.split("\n")
    rest = [line for line in lines[1:] if line.strip()]
    indent = min((len(line) - len(line.lstrip(" "))) for line in rest) if rest else 0
    # The closing brace of a captured block sits at the block's own indentation.
    return [lines[0].strip()] + [line[indent:].rstrip() for line in lines[1:]]
