"""Module-level output of the lowering: metadata for the runtime, host imports, globals."""

from __future__ import annotations

import json

from xdsl.dialects.builtin import (
    DictionaryAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from autotune_contracts import interface
from autotune_contracts.policy import Policy
from autotune_contracts.stop_rule import GROUP_SETTINGS
from autotune_dialect import hal, util
from autotune_dialect.autotune import GroupOp
from autotune_dialect.diagnostics import op_error
from autotune_dialect.interop import symbol_name
from lowering.emitter import Emitter
from lowering.groups import generated_location
from lowering.state import LoweringState


def metadata(state: LoweringState) -> list[dict]:
    """The groups' entries of the metadata the runtime reads (`params`: the stop rule's
    parameters the group sets, `GROUP_SETTINGS`, from which the runtime builds its rule)."""
    entries = []
    for group in state.groups.values():
        op = group.op
        params = {k: op.properties[k] for k in GROUP_SETTINGS if k in op.properties}
        entry = {
            "id": group.gid,
            "name": op.group_name,
            "fingerprint": group.fingerprint(state.base_dir),
            "container": group.container_name,
            "variants": group.variants,
            "reference": group.default_index,
            "policy": group.policy,
            "workload_arity": group.arity or 0,
            "keys": [list(k) for k in group.keys],
            "params": {k: v.value.data for k, v in params.items()},  # type: ignore
        }
        if group.expected_index is not None:
            entry["expected"] = group.expected_index
        if group.gid in state.accessors:
            entry["setter"], entry["getter"] = state.accessors[group.gid]
        entries.append(entry)
    return entries


def check_import_name(module: ModuleOp, name: str) -> None:
    """Host imports keep their names (the VM binds `@autotune.NAME` to the function
    NAME of the host module): a symbol of the user's with such a name is an error."""
    for op in module.body.ops:
        if symbol_name(op) == name and not isinstance(op, GroupOp):
            raise op_error(
                op,
                f"@{name} is the name of a function of the `{interface.HOST_MODULE}` host "
                "module, which the lowered module imports; rename this symbol",
            )


def finish_module(state: LoweringState) -> None:
    """Add the host imports, state globals, metadata and functions made; erase the groups."""
    body = state.module.body.block
    new_ops: list[Operation] = []
    for name, signature in sorted(state.imports.items()):
        check_import_name(state.module, f"{interface.HOST_MODULE}.{name}")
        declaration = util.FuncOp.declaration(
            f"{interface.HOST_MODULE}.{name}",
            [i64] * signature.num_args + [hal.buffer_view_type()] * signature.num_views,
            [{"i": i32, "I": i64}[k] for k in signature.results],
        )
        first_use = state.import_locations.get(name)
        if first_use is not None:
            while isinstance(first_use, NameLoc):
                first_use = first_use.location
            declaration.location = NameLoc(
                StringAttr(f"host import @{interface.HOST_MODULE}.{name}"), first_use
            )
        new_ops.append(declaration)
    new_ops += state.globals.values()
    new_ops += state.initializers
    if any(g.policy != Policy.STATIC for g in state.groups.values()):
        name = state.fresh(interface.METADATA_FUNCTION)
        meta = util.FuncOp(name, ([], []), None, "public")
        meta.location = generated_location(name, next(iter(state.groups.values())))
        Emitter(meta.body.block, location=meta.location).add(util.ReturnOp())
        meta.attributes["iree.reflection"] = DictionaryAttr(
            {interface.METADATA_KEY: StringAttr(json.dumps(metadata(state)))}
        )
        new_ops.append(meta)
    Rewriter.insert_op(new_ops, InsertPoint.at_start(body))
    Rewriter.insert_op(state.exports, InsertPoint.at_end(body))
    for group in state.groups:
        Rewriter.erase_op(group)
