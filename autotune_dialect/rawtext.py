"""Scanning of MLIR text that is kept verbatim: balanced spans, alias expansion, re-indentation.

Kernel modules and IREE attributes that the project does not interpret are stored as the
text the user wrote. These helpers find where such text ends, replace references to
attribute/type aliases (whose definitions are not printed again) by their values, and
re-indent a captured block so that it nests in its new position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

_OPENERS = {"{": "}", "(": ")", "[": "]", "<": ">"}
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")


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


def substitute_aliases(text: str, resolve: Callable[[str], str | None]) -> str:
    """Replace `#name` / `!name` alias references (no `.` in name, not followed by `<`).

    `resolve` gets the reference with its sigil and returns replacement text, or None to
    keep the reference as written. Strings and comments are left alone.
    """
    out: list[str] = []
    last = 0
    n = len(text)
    for pos, ch in tokens_outside_literals(text):
        if pos < last or ch not in "#!" or (pos and text[pos - 1] in _IDENT_CHARS):
            continue
        end = pos + 1
        while end < n and text[end] in _IDENT_CHARS:
            end += 1
        name = text[pos:end]
        if len(name) > 1 and "." not in name and (end >= n or text[end] != "<"):
            replacement = resolve(name)
            if replacement is not None:
                out.append(text[last:pos])
                out.append(replacement)
                last = end
    out.append(text[last:])
    return "".join(out)


def dedent_block(text: str) -> list[str]:
    """Split `text` into lines and remove the indentation common to lines after the first."""
    lines = text.split("\n")
    rest = [line for line in lines[1:] if line.strip()]
    indent = min((len(line) - len(line.lstrip(" "))) for line in rest) if rest else 0
    # The closing brace of a captured block sits at the block's own indentation.
    return [lines[0].strip()] + [line[indent:].rstrip() for line in lines[1:]]
