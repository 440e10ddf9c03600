"""Symbol lookup from an op up to the nearest enclosing symbol table."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolTable


def _find_in(table: Operation, name: str) -> Operation | None:
    for region in table.regions:
        for op in region.ops:
            sym = op.properties.get("sym_name") or op.attributes.get("sym_name")
            if isinstance(sym, StringAttr) and sym.data == name:
                return op
    return None


def lookup_symbol(op: Operation, ref: SymbolRefAttr) -> Operation | None:
    """Resolve `@a::@b` from `op`: `@a` in the nearest enclosing symbol table, then `@b`
    inside it. Returns None when any part is missing."""
    table = op.parent_op()
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    if table is None:
        return None
    found = _find_in(table, ref.root_reference.data)
    for nested in ref.nested_references.data:
        if found is None:
            return None
        found = _find_in(found, nested.data)
    return found
