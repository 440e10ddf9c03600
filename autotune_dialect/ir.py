"""Parse, verify and print modules mixing IREE and autotune ops."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable
from io import StringIO

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind

from autotune_dialect.autotune import Autotune
from autotune_dialect.diagnostics import DiagnosticError, SourceLocation, op_error
from autotune_dialect.flow import Flow
from autotune_dialect.hal import HAL
from autotune_dialect.iree_attrs import opaque_classes
from autotune_dialect.passthrough import Passthrough
from autotune_dialect.symbols import symbol_index
from autotune_dialect.tensor_ext import TensorExt
from autotune_dialect.util import Util

# IREE dialects whose attributes and types can appear outside kernels; the project
# defines no ops of theirs, so they carry only verbatim attributes.
_ATTRIBUTE_ONLY = (
    "iree_codegen",
    "iree_cpu",
    "iree_gpu",
    "iree_encoding",
    "iree_linalg_ext",
    "iree_vector_ext",
    "iree_map",
    "pcf",
    "rocm",
    "stream",
    "vm",
)


def _attribute_only_dialect(name: str) -> Dialect:
    return Dialect(name, [], opaque_classes(name))


def project_dialects() -> dict[str, Callable[[], Dialect]]:
    """Loaders for the autotune dialect and the IREE interop dialects, by name."""
    loaders: dict[str, Callable[[], Dialect]] = {
        "autotune": lambda: Autotune,
        "hal": lambda: HAL,
        "flow": lambda: Flow,
        "util": lambda: Util,
        "passthrough": lambda: Passthrough,
        "iree_tensor_ext": lambda: TensorExt,
    }
    for name in _ATTRIBUTE_ONLY:
        loaders[name] = lambda name=name: _attribute_only_dialect(name)
    return loaders


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with xDSL's dialects, the IREE interop dialects and `autotune`."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, loader in {**get_all_dialects(), **project_dialects()}.items():
        ctx.register_dialect(name, loader)
    return ctx


class _Lexer(MLIRLexer):
    # xDSL's pattern nests `+` inside `*`: an unterminated string literal on a long line
    # backtracks exponentially. This one accepts the same literals in linear time.
    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')

    def _lex_string_literal(self, start_pos: int) -> MLIRToken:
        if self._unescaped_characters_regex.match(self.input.content, start_pos) is None:
            span = Span(start_pos, start_pos + 1, self.input)
            raise ParseError(span, "unterminated string literal")
        return super()._lex_string_literal(start_pos)


class LocatingParser(Parser):
    """A parser that records every op's `file:line:col` as its location.

    Errors that xDSL raises other than as `ParseError` while reading (values checked by
    attribute and op constructors, token kinds it asserts) become located `ParseError`s.
    """

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>"):
        super().__init__(ctx, "", name)
        self._line_starts: list[int] | None = None
        self._first_uses: dict[str, Span] = {}  # values used before any definition
        self._parser_state = ParserState(_Lexer(Input(text, name)))

    def _consume_token(self, expected_kind: MLIRTokenKind | None = None):
        if expected_kind is not None and self._current_token.kind != expected_kind:
            spelling = expected_kind.value
            what = f"'{spelling}'" if isinstance(spelling, str) else expected_kind.name.lower()
            self.raise_error(f"expected {what}")
        return super()._consume_token(expected_kind)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind == MLIRTokenKind.EOF:
            self.raise_error("the input is empty; expected a module")
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as err:
            if err.msg.startswith("values used but not defined"):
                self._raise_undefined_value()
            raise

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        if operand.operand_name not in self.ssa_values:
            self._first_uses.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def _raise_undefined_value(self) -> None:
        """xDSL reports values that are used but never defined at the end of the input:
        report the first such use instead, as MLIR does."""
        undefined = [n for n in self.forward_ssa_references if n in self._first_uses]
        if undefined:
            name = min(undefined, key=lambda n: self._first_uses[n].start)
            self.raise_error(f"use of undefined value %{name}", self._first_uses[name])

    def _parse_block(self) -> Block:
        # Reached in a region when what follows is neither an op nor its closing brace.
        if self._current_token.kind != MLIRTokenKind.CARET_IDENT:
            token = self._current_token
            found = "end of input" if token.kind == MLIRTokenKind.EOF else f"'{token.text}'"
            self.raise_error(f"expected an operation or '}}' in region, found {found}")
        self._check_block_label()
        return super()._parse_block()

    def parse_optional_successor(self) -> Block | None:
        self._check_block_label()
        return super().parse_optional_successor()

    def _check_block_label(self) -> None:
        """xDSL cannot name a block `^0` (MLIR can): say so instead of its ValueError."""
        token = self._current_token
        name = token.text[1:]
        if token.kind == MLIRTokenKind.CARET_IDENT and not Block.is_valid_name(name):
            self.raise_error(f"unsupported block label '{token.text}'; start it with a letter")

    def _parse_alias_def(self) -> None:
        start = self._current_token.span.start
        try:
            super()._parse_alias_def()
        except VerifyException as err:
            self.raise_error(str(err).split("\n", 1)[0], start)

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            op = super().parse_operation()
        except VerifyException as err:
            self.raise_error(str(err).split("\n", 1)[0], start)
        if not isinstance(op.location, FileLineColLoc):
            name_at = self._op_name_offset(op.name, start)
            loc = self._location(name_at)
            op.location = FileLineColLoc(
                StringAttr(loc.filename), IntAttr(loc.line), IntAttr(loc.column)
            )
        return op

    def _location(self, offset: int) -> SourceLocation:
        """Line and column of an offset, from an index of line starts built once."""
        if self._line_starts is None:
            content = self.lexer.input.content
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", content)]
        line = bisect.bisect_right(self._line_starts, offset)
        column = offset - self._line_starts[line - 1] + 1
        return SourceLocation(self.lexer.input.name, line, column)

    def _op_name_offset(self, name: str, start: int) -> int:
        """MLIR locates an op at its name, after any `%results =`."""
        match = _op_name_pattern(name).search(self.lexer.input.content, start, self.pos)
        return match.start() if match else start


@functools.cache
def _op_name_pattern(name: str) -> re.Pattern[str]:
    short = name.split(".", 1)[-1]
    return re.compile(r'(?<![\w%.$])"?(' + re.escape(name) + "|" + re.escape(short) + r")\b")


def parse_module(
    text: str,
    filename: str = "<input>",
    ctx: Context | None = None,
    verify: bool = True,
) -> ModuleOp:
    """Parse MLIR text; raise `DiagnosticError` (file:line:col) on bad input."""
    try:
        module = LocatingParser(ctx or make_context(), text, filename).parse_module()
    except ParseError as err:
        loc = SourceLocation.from_offset(filename, text, err.span.start)
        raise DiagnosticError(err.msg, loc, text) from None
    if verify:
        verify_module(module, text)
    return module


def verify_module(module: Operation, source: str | None = None) -> None:
    """Verify every op once, reporting the first failure at its location."""
    verify_ops(module.walk(), source)


def verify_ops(ops: Iterable[Operation], source: str | None = None) -> None:
    """Verify each of `ops` (not what it nests), reporting the first failure at its
    location."""
    with symbol_index():
        for op in ops:
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as err:
                raise op_error(op, str(err).split("\n", 1)[0], source) from None


def print_module(op: Operation) -> str:
    """MLIR text of an op, in the custom syntax IREE's tools read."""
    out = StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue() + "\n"
