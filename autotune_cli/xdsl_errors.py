"""Errors of the stock `xdsl-opt` as diagnostics: `file:line:col: error: message`, exit
status 1, no Python traceback.

`xdsl-opt` prints a diagnostic alone only with `--verify-diagnostics` (and then exits 0);
otherwise every exception leaves its `run` as a traceback: a parse error, a verifier error
(it verifies the module before each pass, then prints the whole module in generic form),
a pass's `PassFailedException`, and a project error of the `-t iree` target. The plug-in
(`universe.py`) installs `report_xdsl_opt_errors` as Python's hook for uncaught
exceptions: an error of the input that leaves `xDSLOptMain.run` is printed as a diagnostic;
anything else (a fault of the code) keeps its traceback.
"""

from __future__ import annotations

import sys
from types import TracebackType

from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from autotune_contracts.errors import DiagnosticError, SourceLocation
from autotune_dialect.diagnostics import op_error

CONVERSION_NOTE = (
    "note: xdsl-opt reads xDSL's syntax, in which IREE's ops have no custom form; write "
    "IREE's text in it first: iree-autotune xdsl FILE.mlir -o FILE.xdsl.mlir (docs/interop.md)"
)
"""Said under a parse error at an op that xDSL cannot read in custom form: most often an
IREE file given to `xdsl-opt` without the conversion step."""


def report_xdsl_opt_errors() -> None:
    """Make uncaught errors of `xdsl-opt`'s input print as diagnostics (installed once per
    process; other exceptions go to the hook installed before)."""
    previous = sys.excepthook
    if getattr(previous, "reports_xdsl_opt_errors", False):
        return

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        message = diagnostic(error, tb) if _left_xdsl_opt(tb) else None
        if message is None:
            previous(kind, error, tb)
        else:
            sys.stderr.write(message + "\n")

    hook.reports_xdsl_opt_errors = True  # type: ignore[attr-defined]
    sys.excepthook = hook


def _left_xdsl_opt(tb: TracebackType | None) -> bool:
    """Whether the traceback passes through `xDSLOptMain.run`."""
    run = xDSLOptMain.run.__code__
    while tb is not None:
        if tb.tb_frame.f_code is run:
            return True
        tb = tb.tb_next
    return False


def diagnostic(error: BaseException, tb: TracebackType | None) -> str | None:
    """`error` as a diagnostic, or None for an error that is not one of the input."""
    if isinstance(error, DiagnosticError):
        return error.render()
    if isinstance(error, ParseError):
        return _parse_diagnostic(error)
    if isinstance(error, VerifyException):
        op = _failing_op(tb)
        if op is not None:
            return op_error(op, str(error)).render()
    if isinstance(error, DiagnosticException):
        text = str(error)
        located = text.startswith("error: ") or ": error: " in text.split("\n", 1)[0]
        return text if located else f"error: {text}"
    return None


def _parse_diagnostic(error: ParseError) -> str:
    where = error.span.get_location()
    content = error.span.input.content
    source = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    location = SourceLocation(where.file, where.line, where.col)
    text = DiagnosticError(error.msg, location, source).render()
    if "does not have a custom format" in error.msg:
        text += "\n" + CONVERSION_NOTE
    return text


def _failing_op(tb: TracebackType | None) -> Operation | None:
    """The op that xDSL's verifier reported (`Operation.emit_error`'s, else the innermost
    op whose method raised): xDSL's `VerifyException` does not hold it."""
    emit_error = Operation.emit_error.__code__
    found: Operation | None = None
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, Operation):
            if tb.tb_frame.f_code is emit_error:
                return owner
            found = owner
        tb = tb.tb_next
    return found
