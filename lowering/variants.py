"""The ops that run a group's variants at a site: one variant, or a chain choosing one."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from autotune_dialect import flow, util
from lowering.emitter import Emitter
from lowering.groups import Site


def variant_op(
    site: Site,
    variant: str,
    arguments: Sequence[SSAValue] | None = None,
    argument_dims: Sequence[SSAValue] | None = None,
    workload: Sequence[SSAValue] | None = None,
    result_dims: Sequence[SSAValue] | None = None,
) -> Operation:
    """A dispatch or call of `variant` in place of the site's op (not yet inserted), on
    the site's operands or the ones given."""
    op = site.op
    if isinstance(op, flow.DispatchOp):
        location = site.group.location(f"variant @{variant}", op)
        if arguments is argument_dims is workload is result_dims is None:
            # The site's own operands: a copy of it with another entry point.
            return flow.DispatchOp.create(
                operands=op.operands,
                result_types=[r.type for r in op.results],
                properties={**op.properties, "entry_points": site.group.entry_points(variant)},
                attributes=op.attributes,
                location=location,
            )
        new = flow.DispatchOp(
            site.group.entry_points(variant).data[0],
            op.workload if workload is None else workload,
            op.arguments if arguments is None else arguments,
            op.argument_dims if argument_dims is None else argument_dims,
            [r.type for r in op.outputs],
            op.result_dims if result_dims is None else result_dims,
            op.tied_operand_indices(),
        )
        new.attributes.update(op.attributes)
        new.location = location
        return new
    args = list(op.operands if arguments is None else arguments)
    types = [r.type for r in op.results]
    if site.group.function_kinds[variant] == "func.func":
        call: Operation = func.CallOp(variant, args, types)
    else:
        call = util.CallOp(variant, args, types)
    call.location = site.group.location(f"variant @{variant}", op)
    return call


def chain(
    em: Emitter,
    index: SSAValue,
    site: Site,
    make: Callable[[Emitter, str], Operation] | None = None,
) -> list[SSAValue]:
    """Nested `scf.if` over the variants: branch i runs variant i when index == i (made by
    `make`, by default on the site's operands); the results."""
    variants = site.group.variants
    types = [r.type for r in site.op.results]
    if make is None:

        def make(_: Emitter, variant: str) -> Operation:
            return variant_op(site, variant)

    def branch(e: Emitter, i: int) -> list[SSAValue]:
        if i == len(variants) - 1:
            return list(e.add(make(e, variants[i])).results)
        cond = e.cmp("eq", index, e.i32(i))
        return e.if_(
            cond,
            types,
            lambda t: list(t.add(make(t, variants[i])).results),
            lambda f: branch(f, i + 1),
        )

    return branch(em, 0)


def tie_shapes(em: Emitter, site: Site, results: list[SSAValue]) -> list[SSAValue]:
    """`results` tied to the dynamic result dimensions a dispatch site states."""
    if not isinstance(site.op, flow.DispatchOp):
        return results
    dims = site.op.result_dims_of()
    return [
        em.value(flow.TensorTieShapeOp(r, d)) if d else r
        for r, d in zip(results, dims, strict=True)
    ]


def tied(site: Site) -> list[int]:
    """The operand each result of the site is tied to (in place), or -1."""
    if isinstance(site.op, flow.DispatchOp):
        return site.op.tied_operand_indices()
    return [-1] * len(site.op.results)


def result_tensors(site: Site) -> list[int]:
    """The indices of the site's tensor results."""
    return [i for i, r in enumerate(site.op.results) if isinstance(r.type, TensorType)]


def site_result_dims(site: Site) -> list[list[SSAValue]]:
    """The dynamic dimensions a dispatch site states for each result (none for a call)."""
    if isinstance(site.op, flow.DispatchOp):
        return site.op.result_dims_of()
    return [[] for _ in site.op.results]
