"""Parse, verify and print modules of IREE IR with autotune groups (docs/interop.md).

IREE reads and prints the text (`bridge`); xDSL holds the module in between, with the
project's ops for what the lowering reads or rewrites and IREE's other ops kept as they are.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from io import StringIO

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnregisteredOp
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from autotune_bridge.bridge import iree_text, read_module
from autotune_contracts.errors import DiagnosticError
from autotune_dialect.autotune import Autotune, GroupOp
from autotune_dialect.diagnostics import op_error, op_location
from autotune_dialect.flow import Flow
from autotune_dialect.hal import HAL
from autotune_dialect.interop import (
    attribute,
    is_executable,
    kernel_arity_in,
    kernel_function_name,
    kernel_modules,
    missing_kernel_function,
    op_name,
    symbol_name,
)
from autotune_dialect.symbols import duplicate_symbols, lookup_symbol, symbol_index, symbol_tables
from autotune_dialect.util import Util
from autotune_dialect.verbatim import AffineMapText, Verbatim, VerbatimOp, is_semi_affine


def project_dialects() -> dict[str, Callable[[], Dialect]]:
    """Loaders for the autotune dialect and the IREE ops the project models, by name."""
    return {
        "autotune": lambda: Autotune,
        "verbatim": lambda: Verbatim,
        "hal": lambda: HAL,
        "flow": lambda: Flow,
        "util": lambda: Util,
    }


def make_context(allow_unregistered: bool = True) -> Context:
    """A context with xDSL's dialects and the project's, for reading xDSL text (IREE's
    other ops appear in it as unregistered ops, hence allowed by default)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, loader in {**get_all_dialects(), **project_dialects()}.items():
        ctx.register_dialect(name, loader)
    return ctx


RECURSION_LIMIT = 20_000
"""Python frames that deep IR needs: the import, walks and printing recurse a few frames
per level of nesting, and `bridge.MAX_NESTING` levels are read."""


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Let Python recurse as deep as the IR the project reads (restored afterwards)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def parse_module(
    text: str,
    filename: str = "<input>",
    verify: bool = True,
    keep_plain_executables: bool = False,
) -> ModuleOp:
    """Parse MLIR text (anything IREE reads, plus groups); raise `DiagnosticError`
    (file:line:col) on bad input. `keep_plain_executables`: see `read_module`."""
    with deep_recursion():
        module = read_module(text, filename, keep_plain_executables)
        checked = module.__dict__.pop("checked_at_import", frozenset())
        if verify:
            verify_module(module, text, checked)
    return module


def verify_module(
    module: Operation, source: str | None = None, checked: AbstractSet[Operation] = frozenset()
) -> None:
    """Verify the project's ops (IREE verified its own when it read them) and every use of
    a group, reporting the first failure at its location. The ops in `checked` (which the
    import verified as it built them, `Importer.checked`) are not verified again; their
    uses of groups are."""
    check_unique_symbols(module, source)
    with symbol_index():
        # Groups first: a group whose variants disagree is the cause of what would fail
        # at its dispatches and calls.
        for op in module.walk():
            if isinstance(op, GroupOp):
                _checked(op, lambda o: o.verify(verify_nested_ops=False), source)
            elif isinstance(op, UnregisteredOp) and op_name(op).startswith("autotune."):
                raise op_error(op, _unregistered_autotune_op(op_name(op)), source)
        for op in module.walk():
            if isinstance(op, GroupOp):
                continue
            if isinstance(op, VerbatimOp) and (problem := op.kept_problem()) is not None:
                raise problem
            if isinstance(op, UnregisteredOp | VerbatimOp):
                if op_name(op) in _CHECKED_IREE_OPS:
                    _checked(op, check_references, source)
                continue
            if op in checked:
                _checked(op, check_references, source)
            else:
                _checked(
                    op, lambda o: (o.verify(verify_nested_ops=False), check_references(o)), source
                )


def _unregistered_autotune_op(name: str) -> str:
    """What is wrong with an unregistered op of the `autotune` dialect (built as
    `UnregisteredOp`, or read by a context without the dialect): the lowering would not
    see it as a group, and IREE would meet its uses as calls of nothing."""
    if name == GroupOp.name:
        return (
            "is an unregistered op, not the autotune dialect's group; build it with "
            "autotune_bridge.GroupOp, or read the text with a context that has the "
            "autotune dialect (autotune_bridge.ir.make_context)"
        )
    return f"is not an op of the autotune dialect, whose one op is '{GroupOp.name}'"


def check_unique_symbols(module: Operation, source: str | None = None) -> None:
    """No symbol table defines a name twice. IREE checks its own ops when it reads them,
    but a group is no symbol to IREE: a group named like a function or like another group
    is reported here, at the second definition."""
    for table in symbol_tables(module):
        for first, again in duplicate_symbols(table):
            name = symbol_name(again)
            where = op_location(first)
            raise DiagnosticError(
                f"duplicate symbol @{name}" + (f"; first defined at {where}" if where else ""),
                op_location(again),
                source,
            )


def _checked(op: Operation, check, source: str | None) -> None:
    try:
        check(op)
    except VerifyException as err:
        raise op_error(op, str(err).split("\n", 1)[0], source) from None


_CHECKED_IREE_OPS = frozenset({"func.call", "flow.executable.export", "hal.executable.export"})


def check_references(op: Operation) -> None:
    """What IREE cannot check about a dispatch or call of a group, and what crashes
    `iree-compile` instead of being reported: a dispatch of an export that its executable
    lacks, an export whose kernel function its executable lacks; and a call of nothing,
    in a module that IREE has not read (built in xDSL, or read by `xdsl-opt`)."""
    name = op_name(op)
    if name in ("flow.executable.export", "hal.executable.export"):
        check_kernel_function(op)
        return
    if name == "flow.dispatch":
        entries = attribute(op, "entry_points")
        for entry in getattr(entries, "data", ()):
            if not isinstance(entry, SymbolRefAttr):
                continue
            outer = lookup_symbol(op, SymbolRefAttr(entry.root_reference))
            exported = outer.kept_export_names() if isinstance(outer, VerbatimOp) else None
            if exported is not None:  # an executable IREE holds (`VerbatimOp.deferred`)
                nested = entry.nested_references.data
                if len(nested) != 1 or nested[0].data not in exported:
                    raise VerifyException(f"entry point {entry} not found")
                continue
            if entry.nested_references.data and not is_executable(outer):
                continue  # defined elsewhere, or not an executable the project reads
            target = lookup_symbol(op, entry)
            if target is None and entry.nested_references.data:
                raise VerifyException(f"entry point {entry} not found")
            if isinstance(target, GroupOp):
                target.verify_dispatch(op)
    elif name in ("util.call", "func.call"):
        callee = attribute(op, "callee")
        if isinstance(callee, SymbolRefAttr):
            target = lookup_symbol(op, callee)
            if target is None:  # IREE's reader says so; a module built in xDSL is not read
                raise VerifyException(f"undefined callee {callee}")
            if isinstance(target, GroupOp):
                target.verify_call(op)


def xdsl_text(op: Operation, locations: bool = False) -> str:
    """An op in xDSL's syntax: the project's ops in their custom syntax, IREE's other ops
    in generic form, kept text as `verbatim` ops and attributes. The stock `xdsl-opt`
    reads it with `--allow-unregistered-dialect`. With `locations`, each op names its
    place in the source (`loc(...)`), so that errors of passes name it too."""
    out = StringIO()
    with deep_recursion():
        _XDSLPrinter(stream=out, print_debuginfo=locations).print_op(op)
    resources = getattr(op, "resources", "")  # the blobs of `dense_resource`s, as read
    return out.getvalue() + "\n" + (f"\n{resources}\n" if resources else "")


class _XDSLPrinter(Printer):
    """xDSL's printer, writing the affine maps that xDSL's parser cannot read in a syntax
    that it reads (`verbatim.AffineMapText`)."""

    def print_attribute(self, attribute: Attribute) -> None:
        if is_semi_affine(attribute):
            AffineMapText.print_map(self, attribute)  # type: ignore[arg-type]
        else:
            super().print_attribute(attribute)


def check_kernel_function(export: Operation) -> None:
    """An export of an executable with kernel modules must name one of their functions."""
    executable = export.parent_op()
    kernel = kernel_function_name(export)
    if not is_executable(executable) or kernel is None:
        return
    assert executable is not None
    modules = kernel_modules(executable)
    if modules and all(kernel_arity_in(module, kernel) is None for module in modules):
        raise VerifyException(missing_kernel_function(kernel))


def print_module(op: Operation, locations: bool = False) -> str:
    """MLIR text of a module as IREE prints it (groups in their custom syntax); with
    `locations`, each op names its place in the source. Other ops print in xDSL's syntax."""
    if isinstance(op, ModuleOp):
        with deep_recursion():
            return iree_text(op, locations)
    return xdsl_text(op)
