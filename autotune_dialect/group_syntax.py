"""Groups and calls of groups in text that IREE's parser and printer handle.

MLIR cannot read the custom syntax of an op whose dialect it does not know, and IREE's
verifier refuses a `util.call` or `func.call` whose callee is not a function. Before IREE
reads a text,

- every `autotune.group @g variants([@a, @b]) {...}` is rewritten in MLIR's generic form,
  `"autotune.group"() <{sym_name = "g", variants = [@a, @b], ...}> : () -> ()`, with the
  group's own `file:line:col` as its location;
- every call of a group, `%r = util.call @g(%x) : (T) -> R` (or `func.call`, `call`), is
  rewritten as `%r = "autotune.call"(%x) {callee = @g, call = "util.call"} : (T) -> R`.

Line numbers of the rest of the text do not change, and what is copied (variant lists,
attributes, a call's operands and types) keeps its place in an `OffsetMap`, so that an
error IREE finds in the rewritten text is reported where the user wrote it. After IREE
prints a module, each generic group and call is written back in its custom syntax.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from autotune_contracts.errors import DiagnosticError, SourceLocation

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


def _matches(pattern: re.Pattern[str], word: str, prefixes: tuple[str, ...], text: str):
    """`pattern.finditer(text)` for a pattern whose matches contain `word` after one of
    `prefixes` (or none): `str.find` goes to each `word`, where the pattern is tried, which
    is many times faster on megabytes than the pattern's own scan (it cannot skip ahead
    past its leading look-behind and optional prefix)."""
    pos = text.find(word)
    end = 0
    while pos >= 0:
        for prefix in (*prefixes, ""):
            start = pos - len(prefix)
            if start >= end and text.startswith(prefix, start):
                match = pattern.match(text, start)
                if match is not None:
                    yield match
                    end = match.end()
                    break
        pos = text.find(word, pos + 1)


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


class OffsetMap:
    """Where each offset of a rewritten text was in the original: copied spans map one to
    one, written spans to the place of what they stand for."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._pieces: list[tuple[int, bool]] = []  # (original offset, copied)
        self._earlier: OffsetMap | None = None

    def add(self, start: int, original: int, copied: bool) -> None:
        if self._starts and self._starts[-1] == start:
            self._starts.pop()
            self._pieces.pop()
        self._starts.append(start)
        self._pieces.append((original, copied))

    def original(self, offset: int) -> int:
        index = bisect.bisect_right(self._starts, offset) - 1
        if index >= 0:
            original, copied = self._pieces[index]
            offset = original + (offset - self._starts[index]) if copied else original
        return offset if self._earlier is None else self._earlier.original(offset)

    def then(self, earlier: OffsetMap) -> OffsetMap:
        """This map followed by `earlier`, the map of the text that this one's rewrote."""
        assert self._earlier is None
        self._earlier = earlier
        return self


class _Writer:
    """Builds a rewritten text from copied spans of the original and written text."""

    def __init__(self, text: str):
        self.text = text
        self.parts: list[str] = []
        self.length = 0
        self.newlines = 0
        self.map = OffsetMap()

    def copy(self, start: int, end: int, same_length: str | None = None) -> None:
        """Copy `text[start:end]`, or `same_length` in its place (a text of that length)."""
        if end > start:
            self.map.add(self.length, start, True)
            self.parts.append(self.text[start:end] if same_length is None else same_length)
            self.length += end - start
            self.newlines += self.parts[-1].count("\n")

    def write(self, text: str, original: int) -> None:
        if text:
            self.map.add(self.length, original, False)
            self.parts.append(text)
            self.length += len(text)
            self.newlines += text.count("\n")

    def result(self) -> tuple[str, OffsetMap]:
        return "".join(self.parts), self.map


class _Lines:
    """Line and column of offsets in a text (its line starts are found once)."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def _without_comments(text: str) -> str:
    """`text` with its `//` comments blanked (same length: columns do not move), so that
    text written after it on the same line is not commented out."""
    return _GENERIC_GROUP.sub(
        lambda m: " " * len(m.group()) if m.group().startswith("//") else m.group(), text
    )


def _rewrite_one(
    text: str, filename: str, start: int, lines: _Lines, out: _Writer
) -> tuple[int, str]:
    """Write the generic form of the custom group at `start` to `out`; return the offset
    where the group ends, and the group's symbol."""
    scan = _Scanner(text, filename, start + len(KEYWORD))
    scan.skip_space()
    name = _SYMBOL.match(text, scan.pos)
    if name is None:
        raise scan.error("expected the group's name (@name) after 'autotune.group'")
    scan.pos = name.end()
    scan.expect("variants", "'variants([@a, @b, ...])' after the group's name")
    scan.expect("(", "'(' after 'variants'")
    variants_at = _SPACE.match(text, scan.pos).end()  # type: ignore[union-attr]
    variants = scan.balanced("the list of variants [@a, @b, ...]")
    if not variants.startswith("["):
        raise scan.error("expected a list of variant symbols: [@a, @b, ...]")
    scan.expect(")", "')' after the list of variants")
    end = scan.pos
    body: tuple[int, int] | None = None
    if scan.peek("{"):
        body_at = scan.pos
        inner = scan.balanced("the group's attributes {...}")[1:-1]
        if inner.strip():
            body = (body_at + 1, body_at + 1 + len(inner))
        end = scan.pos
    location: tuple[int, int] | None = None
    if scan.peek("loc("):
        location_at = scan.pos
        scan.pos += 3
        scan.balanced("the location")
        location = (location_at, scan.pos)
        end = scan.pos
    newlines = out.newlines
    out.write(f'"{KEYWORD}"() <{{sym_name = ', start)
    out.write(_symbol_string(name.group()), name.start())
    out.write(", variants = ", variants_at)
    out.copy(variants_at, variants_at + len(variants))
    if body is not None:
        out.write(", ", body[0])
        out.copy(*body, _without_comments(text[body[0] : body[1]]))
    out.write("}> : () -> () ", end)
    if location is not None:
        out.copy(*location)
    else:
        line, column = lines.position(start)
        out.write(f"loc({mlir_string(filename)}:{line}:{column})", start)
    # The group's line breaks that were not copied (the rest of the text keeps its lines).
    missing = text.count("\n", start, end) - (out.newlines - newlines)
    out.write("\n" * missing, end)
    return end, name.group()


def _rewrite_groups(text: str, filename: str) -> tuple[str, OffsetMap, set[str]]:
    """`text` with custom groups in generic form, where its offsets were, and the names
    of all groups."""
    names: set[str] = set()
    out = _Writer(text)
    last = 0
    lines: _Lines | None = None
    for match in _matches(_GROUP_KEYWORD, KEYWORD, ('"',), text):
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
        out.copy(last, match.start())
        end, name = _rewrite_one(text, filename, match.start(), lines, out)
        names.add(_symbol_key(name[1:]))
        last = end
    out.copy(last, len(text))
    generic, offsets = out.result()
    return generic, offsets, names


def _symbol_key(spelling: str) -> str:
    """One spelling per symbol name: `name` for `name` and `"name"`, the quoted literal
    for names that need quotes."""
    if spelling.startswith('"') and _BARE_NAME.fullmatch(spelling[1:-1]):
        return spelling[1:-1]
    return spelling


def _rewrite_call(text: str, filename: str, match: re.Match[str], out: _Writer) -> int:
    """Write the generic `autotune.call` of the call of a group at `match` to `out`;
    return where the call ends (`DiagnosticError`, writing nothing, if it is malformed)."""
    scan = _Scanner(text, filename, match.end())
    args_at = _SPACE.match(text, scan.pos).end()  # type: ignore[union-attr]
    args = scan.balanced("the call's arguments")
    attrs: tuple[int, int] | None = None
    if scan.peek("{"):
        at = scan.pos
        inner = scan.balanced("the call's attributes")[1:-1]
        if inner.strip():
            attrs = (at + 1, at + 1 + len(inner))
    scan.expect(":", "':' and the call's function type")
    inputs_at = _SPACE.match(text, scan.pos).end()  # type: ignore[union-attr]
    inputs = scan.balanced("the call's argument types")
    scan.expect("->", "'->' and the call's result types")
    results_at = _SPACE.match(text, scan.pos).end()  # type: ignore[union-attr]
    if scan.peek("("):
        results_end = results_at + len(scan.balanced("the call's result types"))
    else:
        line_end = text.find("\n", scan.pos)
        line_end = len(text) if line_end < 0 else line_end
        rest = text[scan.pos : line_end]
        cut = min((i for i in (rest.find(" loc("), rest.find("//")) if i >= 0), default=len(rest))
        results = rest[:cut].strip()
        scan.pos += len(rest[:cut])
        if results.startswith("%"):
            raise scan.error("a call of a group cannot tie results to its arguments")
        results_end = results_at + len(results)
    kind = match.group("op")
    kind = "func.call" if kind == "call" else kind
    start = match.start("op")
    newlines = out.newlines
    out.write(f'"{CALL_OF_GROUP}"', start)
    out.copy(args_at, args_at + len(args))
    out.write(f' {{callee = {match.group("callee")}, call = "{kind}"', match.start("callee"))
    if attrs is not None:
        out.write(", ", attrs[0])
        out.copy(*attrs, _without_comments(text[attrs[0] : attrs[1]]))
    out.write("} : ", inputs_at)
    out.copy(inputs_at, inputs_at + len(inputs))
    out.write(" -> ", results_at)
    out.copy(results_at, results_end)
    out.write("\n" * (text.count("\n", start, scan.pos) - (out.newlines - newlines)), scan.pos)
    return scan.pos


def _rewrite_calls(text: str, filename: str, groups: set[str]) -> tuple[str, OffsetMap]:
    out = _Writer(text)
    last = 0
    for match in _matches(_CALL, "call", ("util.", "func."), text):
        callee = match.group("callee")
        if _symbol_key(callee[1:]) not in groups or _in_literal(text, match.start()):
            continue
        if match.start("op") < last:
            continue
        try:
            _rewrite_call(text, filename, match, _Writer(text))  # a dry run: is it well formed?
        except DiagnosticError:
            continue  # malformed: IREE's parser reports it where it is
        out.copy(last, match.start("op"))
        last = _rewrite_call(text, filename, match, out)
    out.copy(last, len(text))
    return out.result()


def to_generic(text: str, filename: str) -> str:
    """`text` with every custom-syntax group, and every call of a group, in generic form
    (raises `DiagnosticError` on a malformed group)."""
    return to_generic_with_offsets(text, filename)[0]


def to_generic_with_offsets(text: str, filename: str) -> tuple[str, OffsetMap]:
    """`to_generic`, and where each offset of its result was in `text`."""
    if KEYWORD not in text:
        identity = OffsetMap()
        identity.add(0, 0, True)
        return text, identity
    generic, offsets, groups = _rewrite_groups(text, filename)
    if not groups:
        return generic, offsets
    generic, call_offsets = _rewrite_calls(generic, filename, groups)
    return generic, call_offsets.then(offsets)


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
