"""IREE's side of the bridge, in IREE's Python bindings: the one context that reads IREE's
text, IREE's print of an op as the project keeps it, locations, and function signatures.
Kept text (`verbatim`) and the import both read IREE's IR through here."""

from __future__ import annotations

import functools
import re

from iree.compiler import ir

from autotune_contracts.errors import SourceLocation
from autotune_dialect.group_syntax import mlir_string

FUNCTIONS = ("util.func", "func.func")
"""IREE's function ops (what a module-level group's variants may be)."""


def iree_context() -> ir.Context:
    """A context with IREE's dialects that accepts the autotune ops (IREE knows nothing of
    them; the import refuses any other unknown op).

    Single-threaded: an error that IREE's verifier reports from a worker thread waits for
    the Python diagnostic handler, which waits for the thread that holds the interpreter
    lock (the parsing one): a deadlock, seen on an undefined `fallback` entry point."""
    context = ir.Context()
    context.allow_unregistered_dialects = True
    context.enable_multithreading(False)
    return context


def repair_iree_print(text: str) -> str:
    """IREE 3.13 prints an executable object without a path as
    `#hal.executable.object<{, data = ...}>`, which its own parser refuses; this writes it
    as `#hal.executable.object<{data = ...}>`. Every text taken from IREE's printer goes
    through here."""
    return text.replace("#hal.executable.object<{, data = ", "#hal.executable.object<{data = ")


STDIN_NAME = "-"
"""The file name IREE gives to the locations of text parsed from a string."""

_FILE_LOCATION = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


@functools.cache
def _file_locations(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(mlir_string(name)) + r"(?=:\d+:\d+)")


@functools.cache
def _iree_string(text: str) -> str:
    """`text` as IREE prints a string (`"` as `\\22`, bytes beyond ASCII as `\\C3`...)."""
    with ir.Context():
        return str(ir.StringAttr.get(text))


def renamed_locations(
    text: str, filename: str, read_as: str = STDIN_NAME, as_iree_prints: bool = False
) -> str:
    """MLIR text whose `file:line:col` locations in `read_as` (the name IREE gives to
    text it reads from a string, or iree-compile to its input stream) name `filename`,
    quoted as IREE prints it when `as_iree_prints` (for text that is not read again)."""
    quoted = _iree_string(filename) if as_iree_prints else mlir_string(filename)
    return _file_locations(read_as).sub(lambda _: quoted, text)


def mlir_location(loc: ir.Location) -> SourceLocation | None:
    """The first `file:line:col` inside an MLIR location, if any."""
    if isinstance(loc, ir.FileLineColLoc):
        return SourceLocation(loc.filename, loc.start_line, loc.start_col)
    match = _FILE_LOCATION.search(str(loc))
    if match is None:
        return None
    name = bytes(match.group(1), "utf-8").decode("unicode_escape", errors="replace")
    return SourceLocation(name, int(match.group(2)), int(match.group(3)))


def kernel_text(op: ir.Operation, filename: str) -> str:
    """IREE's print of an op with inline locations (in `filename`), less the op's own
    trailing location."""
    text = repair_iree_print(op.get_asm(enable_debug_info=True, use_local_scope=True))
    resources = text.find("\n{-#")
    if resources >= 0:  # blobs are kept once for the whole module (`resources`)
        text = text[:resources]
    end = text.rfind("}")
    if end >= 0 and text[end + 1 :].strip().startswith("loc("):
        text = text[: end + 1]
    return renamed_locations(text, filename)


def function_arities(module: ir.Operation) -> dict[str, int]:
    """Argument count of each function (`func.func`, `util.func`) directly in an IREE
    module."""
    return {name: len(inputs) for name, (inputs, _) in function_signatures(module).items()}


def function_signatures(module: ir.Operation) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """(argument types, result types) as MLIR text of each function (`func.func`,
    `util.func`) directly in an IREE module."""
    signatures: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for view in module.regions[0].blocks[0].operations:
        op = view.operation
        if op.name in FUNCTIONS:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            type_ = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            signatures.setdefault(
                name, (tuple(map(str, type_.inputs)), tuple(map(str, type_.results)))
            )
    return signatures
