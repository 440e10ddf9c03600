"""Symbol lookup from an op up to the nearest enclosing symbol table.

Lookups scan the table's ops. Inside `symbol_index()` (used while the IR does not change:
verification, collecting the uses of groups) each table is indexed once instead, so that
resolving every dispatch of a large module stays linear.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr, UnregisteredOp
from xdsl.ir import Operation
from xdsl.traits import SymbolTable

_INDEX: ContextVar[dict[int, dict[str, Operation]] | None] = ContextVar("_INDEX", default=None)


@contextmanager
def symbol_index() -> Iterator[None]:
    """Index symbol tables on first use until the block ends (the IR must not change)."""
    token = _INDEX.set({})
    try:
        yield
    finally:
        _INDEX.reset(token)


def _symbols(table: Operation) -> Iterator[tuple[str, Operation]]:
    for region in table.regions:
        for op in (op for block in region.blocks for op in block.ops):
            sym = op.properties.get("sym_name") or op.attributes.get("sym_name")
            if isinstance(sym, StringAttr):
                yield sym.data, op


def _find_in(table: Operation, name: str) -> Operation | None:
    index = _INDEX.get()
    if index is None:
        return next((op for sym, op in _symbols(table) if sym == name), None)
    if id(table) not in index:
        symbols: dict[str, Operation] = {}
        for sym, op in _symbols(table):
            symbols.setdefault(sym, op)
        index[id(table)] = symbols
    return index[id(table)].get(name)


SYMBOL_TABLES = frozenset(
    {
        "flow.executable",
        "hal.executable",
        "hal.executable.source",
        "hal.executable.variant",
        "stream.executable",
    }
)
"""IREE ops that are symbol tables (unregistered in xDSL, so without the trait)."""


def _is_symbol_table(op: Operation) -> bool:
    if isinstance(op, UnregisteredOp):
        return op.op_name.data in SYMBOL_TABLES
    return op.has_trait(SymbolTable)


def symbol_tables(root: Operation) -> Iterator[Operation]:
    """`root` and every symbol table inside it, outer ones first."""
    for op in root.walk():
        if _is_symbol_table(op):
            yield op


def duplicate_symbols(table: Operation) -> Iterator[tuple[Operation, Operation]]:
    """(first definition, redefinition) for each symbol that a table defines again."""
    first: dict[str, Operation] = {}
    for sym, op in _symbols(table):
        if sym in first:
            yield first[sym], op
        else:
            first[sym] = op


def lookup_symbol(op: Operation, ref: SymbolRefAttr) -> Operation | None:
    """Resolve `@a::@b` from `op`: `@a` in the nearest enclosing symbol table, then `@b`
    inside it. Returns None when any part is missing."""
    table = op.parent_op()
    while table is not None and not _is_symbol_table(table):
        table = table.parent_op()
    if table is None:
        return None
    found = _find_in(table, ref.root_reference.data)
    for nested in ref.nested_references.data:
        if found is None:
            return None
        found = _find_in(found, nested.data)
    return found
