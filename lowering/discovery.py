"""What the lowering finds in a module before it changes anything: the groups, their
sites (dispatches and calls), and the uses of groups it refuses."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from autotune_contracts import interface
from autotune_contracts.policy import Policy
from autotune_dialect import flow, interop
from autotune_dialect.autotune import GroupOp
from autotune_dialect.diagnostics import op_error
from autotune_dialect.interop import attribute, op_name, symbol_name
from autotune_dialect.symbols import lookup_symbol
from lowering.emitter import Emitter
from lowering.groups import Group, Site, constant_int


def collect_groups(module: ModuleOp, default_policy: Policy) -> dict[GroupOp, Group]:
    """The module's groups, numbered in order; a group naming no policy has `default_policy`."""
    groups: dict[GroupOp, Group] = {}
    for op in module.walk():
        if not isinstance(op, GroupOp):
            continue
        container = op.parent_op()
        assert container is not None
        container_name = None
        if interop.is_executable(container):
            container_name = symbol_name(container)
        group = Group(
            op,
            len(groups),
            container,
            container_name,
            op.policy_or(default_policy),
            op.variant_names,
        )
        if container_name is None:
            group.function_kinds = {
                name: op_name(variant)
                for name, variant in zip(group.variants, op.resolve_variants(), strict=True)
            }
        groups[op] = group
    return groups


def collect_sites(module: ModuleOp, groups: dict[GroupOp, Group]) -> list[Site]:
    """The dispatches and calls of the groups, in order."""
    sites: list[Site] = []
    for op in module.walk():
        if isinstance(op, flow.DispatchOp):
            target = lookup_symbol(op, op.entry_point)
            if isinstance(target, GroupOp):
                sites.append(make_site(op, groups[target], list(op.workload)))
        elif op_name(op) in ("util.call", "func.call"):
            callee = attribute(op, "callee")
            target = lookup_symbol(op, callee) if isinstance(callee, SymbolRefAttr) else None
            if isinstance(target, GroupOp):
                sites.append(make_site(op, groups[target], None))
    return sites


def check_other_uses(module: ModuleOp, site_ops: set[Operation]) -> None:
    """Only the dispatches and calls in `site_ops` may refer to a group: any other
    reference would be left dangling when the groups are erased."""
    for op in module.walk():
        if op in site_ops or isinstance(op, GroupOp):
            continue
        for attr in (*op.properties.values(), *op.attributes.values()):
            for ref in _symbol_refs(attr):
                if isinstance(lookup_symbol(op, ref), GroupOp):
                    raise op_error(
                        op,
                        f"refers to group {ref}; a group can only be dispatched with "
                        "flow.dispatch or called with util.call",
                    )


def make_site(op: Operation, group: Group, workload: list[SSAValue] | None) -> Site:
    """The site of a dispatch (its `workload`) or call (None: the key is the dynamic
    dimensions of its tensor operands); its group's workload keys grow by a static one."""
    if workload is None:  # a function group: dynamic dimensions of tensor operands
        workload = []
        em = Emitter(op.parent_block(), op, group.location("workload", op))
        for arg in op.operands:
            if isinstance(arg.type, TensorType):
                workload.extend(em.dynamic_dims(arg))
    if group.arity is None:
        group.arity = len(workload)
    elif group.arity != len(workload):
        raise op_error(op, f"uses of group @{group.op.group_name} differ in workload count")
    if len(workload) > interface.MAX_WORKLOAD_ARITY:
        raise op_error(
            op,
            f"workload of {len(workload)} values exceeds the supported "
            f"{interface.MAX_WORKLOAD_ARITY}",
        )
    constants = [constant_int(w) for w in workload]
    static_key = None if None in constants else tuple(constants)  # type: ignore[arg-type]
    if static_key is not None:
        group.key_index(static_key)
    return Site(op, group, workload, static_key)


def check_call_cycles(module: ModuleOp, groups: Iterable[Group]) -> None:
    """Refuse recursion through a group of functions (a variant calling its own group,
    or groups calling each other): `iree-compile` never finishes on recursive calls."""
    by_name = {g.op.group_name: g for g in groups if g.container_name is None}
    if not by_name:
        return
    calls: dict[str, list[str]] = {name: list(g.variants) for name, g in by_name.items()}
    call_ops: dict[tuple[str, str], Operation] = {}  # the first call of each edge
    for op in module.body.ops:
        name = symbol_name(op)
        if name is None or not interop.is_function(op):
            continue
        callees = calls.setdefault(name, [])
        for inner in op.walk():
            callee = attribute(inner, "callee")
            if op_name(inner) in ("util.call", "func.call") and isinstance(callee, SymbolRefAttr):
                callees.append(callee.root_reference.data)
                call_ops.setdefault((name, callee.root_reference.data), inner)
    for start, group in by_name.items():
        path = _cycle_from(start, calls)
        if path is not None:
            # At the call that closes the cycle (a group's edges to its variants are
            # no calls).
            closing = call_ops.get((path[-2], path[-1]), group.op)
            raise op_error(
                closing,
                f"calls group @{start}, which its own variants reach ("
                + " -> ".join(f"@{n}" for n in path)
                + "); recursion through a group cannot be built by iree-compile",
            )


def _cycle_from(start: str, calls: dict[str, list[str]]) -> list[str] | None:
    """A call path from `start` back to `start`, if there is one (depth first, iterative)."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        name, path = stack.pop()
        for callee in calls.get(name, ()):
            if callee == start:
                return [*path, start]
            if callee not in seen:
                seen.add(callee)
                stack.append((callee, [*path, callee]))
    return None


def _symbol_refs(attr: Attribute) -> Iterator[SymbolRefAttr]:
    """The symbol references in an attribute, nested arrays and dictionaries included."""
    if isinstance(attr, SymbolRefAttr):
        yield attr
    elif isinstance(attr, ArrayAttr):
        for item in attr.data:
            yield from _symbol_refs(item)
    elif isinstance(attr, DictionaryAttr):
        for item in attr.data.values():
            yield from _symbol_refs(item)
