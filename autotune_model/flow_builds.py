"""Modules built in two steps, so that their kernels reach code generation as given.

Built from the start, IREE runs its global optimizations again on every op of a module,
the kernels of its executables included: it folds the unit dimensions of a root op that
was given the form IREE configures (`root_forms`), and the op's `compilation_info` is
lost. So a module is first brought to the flow phase (IREE's calling convention, its host
code as IREE would have it), each executable then gets its kernels back as they were
given (under the names IREE gave them), and the module is built from the flow phase.
"""

from __future__ import annotations

from iree.compiler import ir
from xdsl.dialects.builtin import ModuleOp

from autotune_dialect.interop import op_name
from autotune_dialect.iree_ir import iree_context

FROM_FLOW = ["--compile-from=flow"]
"""The flags that build a module from the flow phase."""

TO_FLOW = ["--compile-to=flow"]
"""The flags that bring a module to the flow phase."""


def without_shape_ties(module: ModuleOp) -> None:
    """Remove the `flow.tensor.tie_shape` ops of a flow phase that is to be built from
    there (`FROM_FLOW`), each result replaced by its operand. IREE's flow
    pipeline folds them away before its stream conversion, which refuses them (`failed to
    legalize operation 'flow.tensor.tie_shape'`: a group of a dynamic-shaped dispatch in a
    flow phase built with data tiling, whose sites tie their results' sizes); every op of
    a flow phase states the dynamic sizes of its tensors, so they add nothing there."""
    ties = [op for op in module.walk() if op_name(op) == "flow.tensor.tie_shape"]
    for op in ties:
        op.results[0].replace_all_uses_with(op.operands[0])
        op.detach()
        op.erase()


def kernels_as_given(built: str, given: str) -> tuple[str, dict[str, str]]:
    """`built` (IREE's flow phase of `given`) with the kernels of each executable as
    `given` has them, and the names IREE gave the kernels (given name -> IREE's). An
    executable whose kernels IREE changed in kind (another count, other signatures) keeps
    IREE's."""
    renamed: dict[str, str] = {}
    with iree_context():
        given_module = ir.Module.parse(given)  # (kept alive while its ops move)
        built_module = ir.Module.parse(built)
        given_executables = {_symbol(op): op for op in _executables(given_module)}
        for executable in _executables(built_module):
            source = given_executables.get(_symbol(executable))
            if source is None:
                continue
            theirs, ours = _inner_module(executable), _inner_module(source)
            if theirs is None or ours is None:
                continue
            pairs = list(zip(_functions(ours), _functions(theirs), strict=False))
            if len(_functions(ours)) != len(_functions(theirs)) or any(
                str(a.attributes["function_type"]) != str(b.attributes["function_type"])
                for a, b in pairs
            ):
                continue
            for mine, iree in pairs:
                renamed[_symbol(mine)] = _symbol(iree)
                mine.attributes["sym_name"] = ir.StringAttr.get(_symbol(iree))
            ours.move_before(theirs)
            theirs.erase()
        text = built_module.operation.get_asm(enable_debug_info=True)
    return text, renamed


def _symbol(op: ir.OpView | ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _executables(module: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in module.body.operations if op.operation.name == "flow.executable"]


def _inner_module(executable: ir.Operation) -> ir.Operation | None:
    inner = [
        op.operation
        for op in executable.regions[0].blocks[0].operations
        if op.operation.name == "builtin.module"
    ]
    return inner[0] if len(inner) == 1 else None


def _functions(inner: ir.Operation) -> list[ir.Operation]:
    return [
        op.operation
        for op in inner.regions[0].blocks[0].operations
        if op.operation.name == "func.func"
    ]
