"""Build groups from Python, as a frontend does: put a group in an executable or module,
and turn one dispatch into a group of tile-size variants of its kernel.

```python
module = parse_module(open("model.flow.mlir").read(), "model.flow.mlir")
dispatch = dispatches(module)[0]
group = tile_variants(module, dispatch, {"t16": CONFIG_16, "t64": CONFIG_64})
lowered = lower_module(module)
```

A variant is a copy of the dispatched export whose kernel function is a copy of the
export's with another `compilation_info` on its root op (the contraction, convolution or
reduction the kernel is built around). The kernel module is edited by IREE's own
bindings; the export and the group are xDSL ops.
"""

from __future__ import annotations

from collections.abc import Mapping

from iree.compiler import ir
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation

import autotune_dialect.interop as interop
from autotune_bridge.iree_configs import check_loop_count, root_op
from autotune_contracts.errors import DiagnosticError
from autotune_dialect.autotune import GroupOp
from autotune_dialect.diagnostics import op_error
from autotune_dialect.flow import DispatchOp
from autotune_dialect.interop import op_name, symbol_name
from autotune_dialect.symbols import lookup_symbol
from autotune_dialect.verbatim import VerbatimOp


def dispatches(module: ModuleOp) -> list[DispatchOp]:
    """The `flow.dispatch` ops of a module, in order."""
    return [op for op in module.walk() if isinstance(op, DispatchOp)]


def add_group(container: Operation, group: GroupOp) -> GroupOp:
    """Put `group` in an executable or a module: after its last op, before the
    executable's terminator."""
    block = container.regions[0].blocks[0]
    last = block.last_op
    if last is not None and op_name(last).endswith("_end"):
        block.insert_op_before(group, last)
    else:
        block.add_op(group)
    return group


def _name_locations(function: ir.Operation, name: str) -> None:
    """Wrap the location of every op of a copied kernel in `name`, so that iree-compile's
    errors in the copy (e.g. a config it cannot build) say which variant it is."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        op.location = ir.Location.name(name, childLoc=op.location)
        return ir.WalkResult.ADVANCE

    function.walk(visit)


def _find_function(kernel: ir.Operation, name: str) -> ir.Operation | None:
    for view in kernel.regions[0].blocks[0].operations:
        op = view.operation
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    return None


def kernel_with_variants(
    text: str, function: str, configs: Mapping[str, str], names: Mapping[str, str]
) -> str:
    """A kept kernel module's text with, for each config, a copy of `function` named
    `names[key]` whose root op has `compilation_info = configs[key]`."""
    from autotune_dialect.iree_ir import iree_context, kernel_text

    with iree_context():
        kernel = ir.Operation.parse(text).operation
        original = _find_function(kernel, function)
        if original is None:
            raise ValueError(f"the kernel module has no function @{function}")
        after = original
        for key, config in configs.items():
            try:
                info = ir.Attribute.parse(config)
            except ir.MLIRError as err:
                raise ValueError(f"config {key!r} is not an attribute: {err}") from None
            copy = original.clone(ip=ir.InsertionPoint.after(after))
            after = copy.operation
            after.attributes["sym_name"] = ir.StringAttr.get(names[key])
            _name_locations(after, f"kernel of variant @{names[key]}")
            root = root_op(after)
            if root is None:
                raise ValueError(f"@{function} has no linalg op to give a compilation_info")
            check_loop_count(root, config, key)
            root.attributes["compilation_info"] = info
        return kernel_text(kernel, "-")


def check_joined_group(
    group: GroupOp,
    executable: Operation,
    export_name: str | None,
    group_name: str | None,
    params: Mapping[str, object],
) -> None:
    """An existing group that variants of `@export_name` of `executable` may join."""
    if group.parent_op() is not executable:
        raise op_error(group, f"is not in @{symbol_name(executable)}, the dispatched executable")
    if export_name not in group.variant_names:
        raise op_error(group, f"does not have @{export_name}, whose variants would join it")
    if group_name is not None or params:
        given = ", ".join([*(["group_name"] if group_name else []), *params])
        raise DiagnosticError(f"tile_variants: {given} cannot be given with group= (it exists)")


def tile_variants(
    module: ModuleOp,
    dispatch: DispatchOp,
    configs: Mapping[str, str],
    group_name: str | None = None,
    group: GroupOp | None = None,
    **params,
) -> GroupOp:
    """Make `dispatch` (of `@exe::@export`) run a group of variants of its export: the
    export itself (first, and the reference) and one copy per config (`suffix ->
    #iree_codegen.compilation_info<...>` text), named `<export>__<suffix>`. Returns the
    group (named `group_name`, default `<export>__tuned`; `params` are its attributes,
    e.g. `policy="explicit"`). With `group`, an existing group of the same executable
    that already has the export as a variant, the copies join it instead (`group_name`
    and `params` are then refused); a dispatch of that group makes variants of the
    group's reference (else its first variant)."""
    entry = dispatch.entry_point
    if not entry.nested_references.data:
        raise op_error(dispatch, f"entry point {entry} does not name an export")
    if group is not None and entry.nested_references.data[-1].data == group.group_name:
        base = group.reference or group.variants.data[0]
        entry = SymbolRefAttr(entry.root_reference, [base.root_reference])
    executable = lookup_symbol(dispatch, SymbolRefAttr(entry.root_reference))
    export = lookup_symbol(dispatch, entry)
    if not interop.is_executable(executable) or export is None or not interop.is_export(export):
        raise op_error(dispatch, f"entry point {entry} is not an export of this module")
    assert executable is not None
    export_name = symbol_name(export)
    function = interop.kernel_function_name(export)
    kernels = [k for k in interop.kernel_modules(executable) if isinstance(k, VerbatimOp)]
    kernel = next((k for k in kernels if function in k.function_arities()), None)
    if kernel is None or export_name is None or function is None:
        raise op_error(executable, f"has no kernel function for @{export_name}")
    if group is not None:
        check_joined_group(group, executable, export_name, group_name, params)
    taken = {symbol_name(op) for op in executable.regions[0].block.ops}
    names = {key: f"{export_name}__{key}" for key in configs}
    new_group = [] if group is not None else [group_name or f"{export_name}__tuned"]
    for name in [*names.values(), *new_group]:
        if name in taken:
            raise op_error(executable, f"already has a symbol @{name}")
    functions = {key: f"{function}__{key}" for key in configs}
    try:
        text = kernel_with_variants(kernel.text.data, function, configs, functions)
    except ValueError as err:
        raise DiagnosticError(str(err)) from None
    replacement = VerbatimOp(text)
    replacement.location = kernel.location
    kernel.parent_block().insert_op_before(replacement, kernel)  # type: ignore[union-attr]
    kernel.detach()
    kernel.erase()
    previous = export
    for key, name in names.items():
        copy = export.clone()
        copy.properties["sym_name"] = StringAttr(name)
        if interop.attribute(export, "function_ref") is not None:
            copy.properties["function_ref"] = SymbolRefAttr(functions[key])
        previous.parent_block().insert_op_after(copy, previous)  # type: ignore[union-attr]
        previous = copy
    if group is not None:
        variants = [*group.variant_names, *names.values()]
        group.properties["variants"] = ArrayAttr([SymbolRefAttr(n) for n in variants])
    else:
        group = GroupOp(
            group_name or f"{export_name}__tuned",
            [export_name, *names.values()],
            reference=export_name,
            **params,
        )
        group.location = dispatch.location
        add_group(executable, group)
    dispatch.properties["entry_points"] = ArrayAttr(
        [SymbolRefAttr(entry.root_reference, [StringAttr(group.group_name)])]
    )
    return group
