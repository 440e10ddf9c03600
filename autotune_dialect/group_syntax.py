"""Groups and calls of groups in text that IREE's parser and printer handle.

MLIR cannot read the custom syntax of an op whose dialect it does not know, and IREE's
verifier refuses a `util.call` or `func.call` whose callee is not a function. Before IREE
reads a text,

- every `autotune.group @g variants([@a, @b]) {...}` is rewritten in MLIR's generic form,
  `"autotune.group"() <{sym_name = "g", variants = [@a, @b], ...}> : () -> ()`, with the
  group's own `file:line:col` as its location;
- every call of a group, `%r = util.call @g(%x) : (T) -> R` (or `func.call`, `call`), is
  rewritten as `%r = "autotune.call"(%x) {callee = @g, call = "util.call"} : (T) -> R`.

Line numbers of the rest of the text do not change. After IREE prints a module, each
generic group and call is written back in its custom syntax.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from autotune_dialect.diagnostics import DiagnosticError, SourceLocation

KEYWORD = "autotune.group"
CALL_OF_GROUP = "autotune.call"
"""The generic op that stands for a call of a group while IREE holds the text."""

# Strings and comments are matched (and skipped) so that the keyword is found only in code.
_GROUP_KEYWORD = re.compile(r'(?<![\w.$%@#!^])"?autotune\.group\b"?')
_GENERIC_GROUP = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')
_SYMBOL = re.compile(r'@(?:[A-Za-z_][\w$.]*|"(?:[^"\\\n]|\\.)*")')
_BARE_NAME = re.compile(r"[A-Za-z_][\w$.]*")
_GENERIC_NAME = re.compile(r'\(\)\s*<\{[^}]*?\bsym_name\s*=\s*("(?:[^"\\\n]|\\.)*")')
_CALL = re.compile(
    r'(?<![\w.$"%@#!^])(?P<op>util\.call|func\.call|call)\s+'
    r'(?P<callee>@(?:[A-Za-z_][\w$.]*|"(?:[^"\\\n]|\\.)*"))\s*(?=\()'
)


def _in_literal(text: str, pos: int) -> bool:
    """Whether `pos` is inside a string literal or a `//` comment (neither spans lines)."""
    start = text.rfind("\n", 0, pos) + 1
    for match in _GENERIC_GROUP.finditer(text, start, pos):
        if match.end() > pos or match.group().startswith("//"):
            return True
    quote = text.find('"', max(start, _last_literal_end(text, start, pos)), pos)
    return quote >= 0  # an unterminated string before `pos` on its line


def _last_literal_end(text: str, start: int, pos: int) -> int:
    end = start
    for match in _GENERIC_GROUP.finditer(text, start, pos):
        end = match.end()
    return end


_SPACE = re.compile(r"(?:[\s\x00]|//[^\n]*)*")  # MLIR reads NUL as space
_PAIRS = {"(": ")", "[": "]", "{": "}"}


_PLAIN = re.compile(r'[^"\\\x00-\x1f\x7f]*')
_SPECIAL = re.compile(r'["\\\x00-\x1f\x7f]')
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}


def mlir_string(value: str) -> str:
    """`value` as an MLIR string literal."""
    if _PLAIN.fullmatch(value):
        return f'"{value}"'
    escaped = _SPECIAL.sub(lambda m: _ESCAPES.get(m.group(), f"\\{ord(m.group()):02X}"), value)
    return f'"{escaped}"'


class _Scanner:
    """Reads one custom-syntax group from `text`, reporting errors at their offset."""

    def __init__(self, text: str, filename: str, pos: int):
        self.text = text
        self.filename = filename
        self.pos = pos

    def error(self, message: str, pos: int | None = None) -> DiagnosticError:
        at = self.pos if pos is None else pos
        return DiagnosticError(
            message, SourceLocation.from_offset(self.filename, self.text, at), self.text
        )

    def skip_space(self) -> None:
        self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self, token: str) -> bool:
        self.skip_space()
        return self.text.startswith(token, self.pos)

    def expect(self, token: str, what: str) -> None:
        if not self.peek(token):
            raise self.error(f"expected {what}")
        self.pos += len(token)

    def balanced(self, what: str) -> str:
        """The bracketed text at the current position (strings and comments respected)."""
        self.skip_space()
        start = self.pos
        opener = self.text[start : start + 1]
        if opener not in _PAIRS:
            raise self.error(f"expected {what}")
        stack: list[str] = []
        pos = start
        while pos < len(self.text):
            ch = self.text[pos]
            if ch == '"' or self.text.startswith("//", pos):
                match = _GENERIC_GROUP.match(self.text, pos)
                if match is None:  # an unterminated string
                    raise self.error("unterminated string literal", pos)
                pos = match.end()
                continue
            if ch in "([{":
                stack.append(_PAIRS[ch])
            elif ch in ")]}":
                if not stack or stack.pop() != ch:
                    raise self.error(f"unbalanced '{ch}' in {what}", pos)
                if not stack:
                    self.pos = pos + 1
                    return self.text[start : self.pos]
            pos += 1
        raise self.error(f"unexpected end of input in {what}", start)


def _symbol_string(symbol: str) -> str:
    """`@name` or `@"name"` as the string literal of `sym_name`."""
    body = symbol[1:]
    return body if body.startswith('"') else f'"{body}"'


class _Lines:
    """Line and column of offsets in a text (its line starts are found once)."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def _rewrite_one(text: str, filename: str, start: int, lines: _Lines) -> tuple[str, int, str]:
    """The generic form of the custom group at `start`, the offset where it ends, and the
    group's symbol."""
    scan = _Scanner(text, filename, start + len(KEYWORD))
    scan.skip_space()
    name = _SYMBOL.match(text, scan.pos)
    if name is None:
        raise scan.error("expected the group's name (@name) after 'autotune.group'")
    scan.pos = name.end()
    scan.expect("variants", "'variants([@a, @b, ...])' after the group's name")
    scan.expect("(", "'(' after 'variants'")
    variants = scan.balanced("the list of variants [@a, @b, ...]")
    if not variants.startswith("["):
        raise scan.error("expected a list of variant symbols: [@a, @b, ...]")
    scan.expect(")", "')' after the list of variants")
    properties = [f"sym_name = {_symbol_string(name.group())}", f"variants = {variants}"]
    end = scan.pos
    if scan.peek("{"):
        body = scan.balanced("the group's attributes {...}")[1:-1].strip()
        if body:
            properties.append(body)
        end = scan.pos
    location = None
    if scan.peek("loc("):
        scan.pos += 3
        location = "loc" + scan.balanced("the location")
        end = scan.pos
    if location is None:
        line, column = lines.position(start)
        location = f"loc({mlir_string(filename)}:{line}:{column})"
    generic = '"autotune.group"() <{' + ", ".join(properties) + "}> : () -> () " + location
    return generic + "\n" * text.count("\n", start, end), end, name.group()


def _rewrite_groups(text: str, filename: str) -> tuple[str, set[str]]:
    """`text` with custom groups in generic form, and the names of all groups."""
    names: set[str] = set()
    out: list[str] = []
    last = 0
    lines: _Lines | None = None
    for match in _GROUP_KEYWORD.finditer(text):
        token = match.group()
        if token == f'"{KEYWORD}"':  # the generic form: IREE reads it as it is
            if not _in_literal(text, match.start()):
                props = _GENERIC_NAME.match(text, match.end())
                if props is not None:
                    names.add(_symbol_key(props.group(1)))
            continue
        if token != KEYWORD or match.start() < last or _in_literal(text, match.start()):
            continue
        if lines is None:
            lines = _Lines(text)
        generic, end, name = _rewrite_one(text, filename, match.start(), lines)
        names.add(_symbol_key(name[1:]))
        out.append(text[last : match.start()])
        out.append(generic)
        last = end
    out.append(text[last:])
    return "".join(out), names


def _symbol_key(spelling: str) -> str:
    """One spelling per symbol name: `name` for `name` and `"name"`, the quoted literal
    for names that need quotes."""
    if spelling.startswith('"') and _BARE_NAME.fullmatch(spelling[1:-1]):
        return spelling[1:-1]
    return spelling


def _rewrite_call(text: str, filename: str, match: re.Match[str]) -> tuple[str, int]:
    """The generic `autotune.call` of the call of a group at `match`, and where it ends."""
    scan = _Scanner(text, filename, match.end())
    args = scan.balanced("the call's arguments")
    attrs = ""
    if scan.peek("{"):
        attrs = scan.balanced("the call's attributes")[1:-1].strip()
    scan.expect(":", "':' and the call's function type")
    inputs = scan.balanced("the call's argument types")
    scan.expect("->", "'->' and the call's result types")
    if scan.peek("("):
        results = scan.balanced("the call's result types")
    else:
        line_end = text.find("\n", scan.pos)
        line_end = len(text) if line_end < 0 else line_end
        rest = text[scan.pos : line_end]
        cut = min((i for i in (rest.find(" loc("), rest.find("//")) if i >= 0), default=len(rest))
        results = rest[:cut].strip()
        scan.pos += len(rest[:cut])
        if results.startswith("%"):
            raise scan.error("a call of a group cannot tie results to its arguments")
    kind = match.group("op")
    kind = "func.call" if kind == "call" else kind
    extra = [f"callee = {match.group('callee')}", f'call = "{kind}"'] + ([attrs] if attrs else [])
    generic = f'"autotune.call"{args} {{{", ".join(extra)}}} : {inputs} -> {results}'
    return generic + "\n" * text.count("\n", match.start(), scan.pos), scan.pos


def _rewrite_calls(text: str, filename: str, groups: set[str]) -> str:
    out: list[str] = []
    last = 0
    for match in _CALL.finditer(text):
        callee = match.group("callee")
        if _symbol_key(callee[1:]) not in groups or _in_literal(text, match.start()):
            continue
        try:
            generic, end = _rewrite_call(text, filename, match)
        except DiagnosticError:
            continue  # malformed: IREE's parser reports it where it is
        if match.start("op") < last:
            continue
        out.append(text[last : match.start("op")])
        out.append(generic)
        last = end
    out.append(text[last:])
    return "".join(out)


def to_generic(text: str, filename: str) -> str:
    """`text` with every custom-syntax group, and every call of a group, in generic form
    (raises `DiagnosticError` on a malformed group)."""
    if KEYWORD not in text:
        return text
    text, groups = _rewrite_groups(text, filename)
    return _rewrite_calls(text, filename, groups) if groups else text


_PRINTED_GROUP = re.compile(r'"autotune\.group"\(\) <\{')
_PRINTED_CALL = re.compile(
    r'"autotune\.call"\((?P<args>[^()]*)\) '
    r'\{call = "(?P<kind>[\w.]+)", callee = (?P<callee>@[^,}]+)(?:, (?P<rest>[^{}]*))?\} : '
)


def _custom_call(match: re.Match[str]) -> str:
    rest = match.group("rest")
    attrs = f" {{{rest}}}" if rest else ""
    return f"{match.group('kind')} {match.group('callee')}({match.group('args')}){attrs} : "


def to_custom(text: str, groups: Sequence[str]) -> str:
    """IREE's print with calls of groups in custom syntax, and its generic groups
    replaced, in order, by `groups` (their custom syntax; they stay generic when the
    counts differ)."""
    text = _PRINTED_CALL.sub(_custom_call, text)
    spans: list[tuple[int, int]] = []
    for match in _PRINTED_GROUP.finditer(text):
        scan = _Scanner(text, "<printed>", match.end() - 1)
        try:
            scan.balanced("properties")
            scan.expect(">", "'>'")
            scan.expect(":", "':'")
            scan.expect("()", "'()'")
            scan.expect("->", "'->'")
            scan.expect("()", "'()'")
        except DiagnosticError:
            return text
        spans.append((match.start(), scan.pos))
    if len(spans) != len(groups):
        return text
    out: list[str] = []
    last = 0
    for (start, end), custom in zip(spans, groups, strict=True):
        out.append(text[last:start])
        out.append(custom)
        last = end
    out.append(text[last:])
    return "".join(out)
