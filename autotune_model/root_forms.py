"""Kernels rewritten so that their root op has the form IREE configures.

A flow-phase kernel can hold its root op with unit dimensions folded away (a batch of 1:
a depthwise convolution over `16x34x34`), while IREE's code generation expands it again
before it picks a configuration (over `1x16x34x34`: one loop more). A `compilation_info`
on the folded op is lost when IREE rebuilds it, and its tile lists would not fit anyway.
`configured_forms` puts the root op of such a kernel in IREE's form (the maps and loops of
IREE's configured op, reached through `tensor.expand_shape` of its operands and a
`tensor.collapse_shape` of its results). IREE builds that kernel as it builds the folded
one, and a `compilation_info` on it now reaches the code generator. The module is then
built from its flow phase (IREE's global optimizations would fold the dimensions again).

Where the op IREE configures is not the one `root_op` takes by its kind (a softmax: IREE
configures its last reduction), it is marked as the kernel's root (`ROOT_MARK`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from iree.compiler import ir
from iree.compiler.passmanager import PassManager

from autotune_bridge.iree_configs import ROOT_MARK, linalg_ops, root_op
from autotune_dialect.iree_ir import iree_context
from lowering.dispatch_configs import DispatchConfig, RootForm


def unit_expansion(source: Sequence[int], target: Sequence[int]) -> list[list[int]] | None:
    """The reassociation of a `tensor.expand_shape` from `source` to `target` where
    `target` is `source` with unit dimensions inserted (None: it is not)."""
    if len(target) < len(source) or not source:
        return None
    groups: list[list[int]] = []
    pending: list[int] = []
    at = 0
    for index, size in enumerate(target):
        if at < len(source) and size == source[at]:
            groups.append([*pending, index])
            pending = []
            at += 1
        elif size == 1:
            pending.append(index)
        else:
            return None
    if at != len(source):
        return None
    groups[-1].extend(pending)
    return groups


def configured_forms(
    flow_text: str, configs: dict[str, DispatchConfig], exports: Iterable[str]
) -> tuple[str, dict[str, str]]:
    """The flow-phase module with the op that IREE configures in each kernel of `exports`
    as IREE has it: marked as the kernel's root op (`ROOT_MARK`) where `root_op` would
    take another, and in IREE's form where a unit dimension was folded away. Also, for
    each export whose configured op could not be found or given that form, why."""
    wanted = {e for e in exports if e in configs and configs[e].root_form is not None}
    refused: dict[str, str] = {}
    changed = False
    with iree_context():
        module = ir.Module.parse(flow_text)
        kernels: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.func":
                if ir.StringAttr(op.attributes["sym_name"]).value in wanted:
                    kernels.append(op)
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for kernel in kernels:
            name = ir.StringAttr(kernel.attributes["sym_name"]).value
            form = configs[name].root_form
            chosen = root_op(kernel)
            found, formed = _configured_op(kernel, chosen, form)
            if found is None and _decompose(kernel):
                changed = True
                chosen = root_op(kernel)
                found, formed = _configured_op(kernel, chosen, form)
            if found is None:
                made = sorted({op.name for op in linalg_ops(kernel)})
                refused[name] = (
                    f"IREE configures a {form.op_name} over {', '.join(form.operand_types)} "
                    f"that its code generation makes from the kernel's {', '.join(made)}; a "
                    "configuration given before code generation does not reach it"
                )
                continue
            if found != chosen:
                found.attributes[ROOT_MARK] = ir.UnitAttr.get()
                changed = True
            if not formed:
                why = _reform(found, form)
                if why is None:
                    changed = True
                else:
                    refused[name] = (
                        "IREE configures its root op with unit dimensions (such as a batch "
                        f"of 1) that the flow phase folded away, and {why}"
                    )
        # (A local scope would drop the module's resources: the weights of torch models.)
        text = module.operation.get_asm(enable_debug_info=True) if changed else flow_text
    return text, refused


_DECOMPOSITIONS = {"linalg.softmax": "iree-codegen-decompose-softmax"}
"""Ops that IREE's code generation decomposes before it configures a kernel, and IREE's
pass that does it."""


def _decompose(kernel: ir.Operation) -> bool:
    """Decompose the kernel's ops as IREE's code generation does; whether any was."""
    passes = {_DECOMPOSITIONS[op.name] for op in linalg_ops(kernel) if op.name in _DECOMPOSITIONS}
    if not passes:
        return False
    manager = PassManager.parse(f"func.func({','.join(sorted(passes))})", kernel.context)
    manager.run(kernel)
    return True


def _configured_op(
    kernel: ir.Operation, chosen: ir.Operation | None, form: RootForm
) -> tuple[ir.Operation | None, bool]:
    """The kernel's op that IREE configures (`chosen` first among equals), and whether it
    already has IREE's form (its maps and its operands' shapes)."""
    ops = linalg_ops(kernel)
    if chosen is not None:
        ops.sort(key=lambda op: op != chosen)
    for op in ops:
        if op.name == form.op_name and _same_form(op, form):
            return op, True
    for op in ops:
        if op.name == form.op_name and _expands_to(op, form):
            return op, False
    for op in ops:  # a named op that IREE generalizes first (GPU pipelines: a matmul)
        if form.op_name == "linalg.generic" != op.name and _same_shapes(op, form):
            return op, True
    return None, False


def _same_shapes(op: ir.Operation, form: RootForm) -> bool:
    return _shapes(v.type for v in op.operands) == _shapes(
        ir.Type.parse(t) for t in form.operand_types
    )


def _shapes(types: Iterable[ir.Type]) -> list[list[int] | None]:
    return [
        ir.RankedTensorType(t).shape if t.typeid == ir.RankedTensorType.static_typeid else None
        for t in types
    ]


def _same_form(op: ir.Operation, form: RootForm) -> bool:
    """Same maps and operand shapes (element types may differ: IREE stores i1 as i8)."""
    if "indexing_maps" not in op.attributes:
        return False
    return str(op.attributes["indexing_maps"]) == form.indexing_maps and _same_shapes(op, form)


def _expands_to(op: ir.Operation, form: RootForm) -> bool:
    """Whether IREE's op is `op` with unit dimensions inserted in its operands."""
    wanted = _shapes(ir.Type.parse(t) for t in form.operand_types)
    have = _shapes(v.type for v in op.operands)
    return (
        len(op.results) == form.result_count
        and len(have) == len(wanted)
        and all(
            h is not None and w is not None and unit_expansion(h, w) is not None
            for h, w in zip(have, wanted, strict=True)
        )
        and any(h != w for h, w in zip(have, wanted, strict=True))
    )


def _reform(root: ir.Operation, form: RootForm) -> str | None:
    """Replace `root` by an op of IREE's configured form; None when done, else why not."""
    if root.name != "linalg.generic" or form.op_name != "linalg.generic":
        return f"the kernel's {root.name} is not rebuilt in that form"
    if _uses_loop_indices(root):
        return "its body reads loop indices (linalg.index), which the unit loops would shift"
    operands = list(root.operands)
    if len(operands) != len(form.operand_types) or len(root.results) != form.result_count:
        return "IREE's op has other operands than the kernel's"
    with root.context, root.location:
        types = [ir.Type.parse(t) for t in form.operand_types]
        plans = []
        for value, wanted in zip(operands, types, strict=True):
            have = ir.RankedTensorType(value.type)
            want = ir.RankedTensorType(wanted)
            groups = unit_expansion(have.shape, want.shape)
            if groups is None or have.element_type != want.element_type:
                return f"IREE's operand {want} is not the kernel's {have} with unit dimensions"
            plans.append((value, want, groups))
        point = ir.InsertionPoint(root)
        expanded = [
            value if list(_shape(value)) == want.shape else _expand(value, want, groups, point)
            for value, want, groups in plans
        ]
        outputs = plans[len(plans) - form.result_count :]
        attributes = {name: root.attributes[name] for name in root.attributes}
        attributes["indexing_maps"] = ir.Attribute.parse(form.indexing_maps)
        attributes["iterator_types"] = ir.Attribute.parse(form.iterator_types)
        generic = ir.Operation.create(
            "linalg.generic",
            results=[want for _, want, _ in outputs],
            operands=expanded,
            attributes=attributes,
            regions=1,
            ip=point,
        )
        _move_body(root, generic)
        for old, new, (_, _, groups) in zip(root.results, generic.results, outputs, strict=True):
            collapsed = ir.Operation.create(
                "tensor.collapse_shape",
                results=[old.type],
                operands=[new],
                attributes={"reassociation": _reassociation(groups)},
                ip=point,
            )
            old.replace_all_uses_with(collapsed.result)
        root.erase()
    return None


def _shape(value: ir.Value) -> list[int]:
    return ir.RankedTensorType(value.type).shape


def _expand(value, want, groups, point) -> ir.Value:
    return ir.Operation.create(
        "tensor.expand_shape",
        results=[want],
        operands=[value],
        attributes={
            "reassociation": _reassociation(groups),
            "static_output_shape": ir.DenseI64ArrayAttr.get(want.shape),
        },
        ip=point,
    ).result


def _reassociation(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in group]) for group in groups]
    )


def _move_body(old: ir.Operation, new: ir.Operation) -> None:
    body = old.regions[0].blocks[0]
    arguments = list(body.arguments)
    block = new.regions[0].blocks.append(*[a.type for a in arguments])
    for before, after in zip(arguments, block.arguments, strict=True):
        before.replace_all_uses_with(after)
    for op in list(body.operations):
        block.append(op)


def _uses_loop_indices(root: ir.Operation) -> bool:
    found: list[bool] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.index":
            found.append(True)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return bool(found)
