"""Parse, verify and print modules mixing IREE and autotune ops."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from io import StringIO

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Dialect, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from autotune_dialect.autotune import Autotune
from autotune_dialect.diagnostics import DiagnosticError, SourceLocation, op_error
from autotune_dialect.flow import Flow
from autotune_dialect.hal import HAL
from autotune_dialect.iree_attrs import opaque_classes
from autotune_dialect.passthrough import Passthrough
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


class LocatingParser(Parser):
    """A parser that records every op's `file:line:col` as its location."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            name_at = self._op_name_offset(op.name, start)
            loc = SourceLocation.from_offset(
                self.lexer.input.name, self.lexer.input.content, name_at
            )
            op.location = FileLineColLoc(
                StringAttr(loc.filename), IntAttr(loc.line), IntAttr(loc.column)
            )
        return op

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
    parser = LocatingParser(ctx or make_context(), text, filename)
    try:
        module = parser.parse_module()
    except ParseError as err:
        loc = SourceLocation.from_offset(filename, text, err.span.start)
        raise DiagnosticError(err.msg, loc, text) from None
    if verify:
        verify_module(module, text)
    return module


def verify_module(module: Operation, source: str | None = None) -> None:
    """Verify every op, reporting the first failure at its location."""
    for op in module.walk():
        try:
            op.verify_()
        except VerifyException as err:
            raise op_error(op, str(err), source) from None
    try:
        module.verify()
    except VerifyException as err:
        message = str(err).split("\n", 1)[0]
        raise DiagnosticError(message, None, source) from None


def print_module(op: Operation) -> str:
    """MLIR text of an op, in the custom syntax IREE's tools read."""
    out = StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue() + "\n"
