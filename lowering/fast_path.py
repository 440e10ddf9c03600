"""The fast path of a function whose groups name the variant each is `expected` to
settle on (offline tuning's winner).

A committed online site, like an `explicit` or `init` site once its choice is stored,
still selects its variant on every call: an `scf.if` on its choice global, where IREE
ends one execution region and starts another. Each boundary is a queue submission of its
own, waited on by the next: about 2 µs on `local-sync`, and 20-30 µs on a 2-core
`local-task`, where each one hands the work from thread to thread (an 8-site chain:
411 µs against 189 µs static). A function none of whose sites can be left out of the fast
path (every one a site of an online, explicit or init group with `expected`, a static
workload key, its results read, outside an initializer) gets a copy of itself that runs
each site's expected variant directly, straight-line: one execution region, as a static
build. The function itself then branches once, in a new entry block: when every site's
chosen variant (an explicit or init site's stored choice, the reference while none is
stored) is its expected one it calls that copy (inlined by IREE), else it goes on to the
lowered body.

Sites whose choice differs from the expected one (another device, another machine load,
a variant set by hand) run as before through the lowered function: the fast path is an
optimization of the common case, the decisions are the runtime's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import cf
from xdsl.dialects.builtin import i32
from xdsl.ir import Block, Operation, Region
from xdsl.rewriter import Rewriter

from autotune_contracts.policy import Policy
from autotune_dialect import util
from autotune_dialect.mlir_text import parse_attribute_text
from lowering.emitter import Emitter, locate_arguments
from lowering.groups import Site, generated_location, in_initializer, results_unused
from lowering.state import LoweringState
from lowering.variants import tie_shapes, variant_op


@dataclass
class FastPath:
    """A function with a fast path: its sites, and the copy that runs their expected
    variants (inserted once the function is lowered)."""

    function: util.FuncOp
    sites: list[Site]
    fast: util.FuncOp


def _function_of(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, util.FuncOp):
        parent = parent.parent_op()
    return parent


_POLICIES = (Policy.ONLINE, Policy.EXPLICIT, Policy.INIT)
"""The policies whose sites choose at run time, from a global, and so can take a fast path."""


def _takes_fast_path(site: Site) -> bool:
    group = site.group
    return (
        group.policy in _POLICIES
        and group.expected_index is not None
        and site.static_key is not None
        and not in_initializer(site.op)
        and not results_unused(site.op)
    )


def plan_fast_paths(state: LoweringState, sites: list[Site]) -> list[FastPath]:
    """Before the sites are lowered: each function whose sites all take the fast path,
    with its copy that runs every site's expected variant."""
    by_function: dict[Operation, list[Site]] = {}
    for site in sites:
        function = _function_of(site.op)
        if function is not None:
            by_function.setdefault(function, []).append(site)
    plans = []
    for function, own in by_function.items():
        if not all(_takes_fast_path(s) for s in own) or len(function.body.blocks) == 0:
            continue
        assert isinstance(function, util.FuncOp)
        copy = function.clone()
        copies = dict(zip(function.walk(), copy.walk(), strict=True))
        for site in own:
            shadow = Site(copies[site.op], site.group, site.key, site.static_key)
            expected = site.group.variants[site.group.expected_index]  # type: ignore[index]
            block = shadow.op.parent_block()
            assert block is not None
            em = Emitter(block, shadow.op, site.group.location("expected variant", site.op))
            results = tie_shapes(em, shadow, list(em.add(variant_op(shadow, expected)).results))
            Rewriter.replace_op(shadow.op, [], results)
        name = state.fresh(f"{function.sym_name.data}__autotune_expected")
        fast = util.FuncOp(name, function.function_type, Region(), "private")
        for block in list(copy.body.blocks):
            copy.body.detach_block(block)
            fast.body.add_block(block)
        fast.location = generated_location(name, own[0].group)
        plans.append(FastPath(function, own, fast))
    return plans


def finish_fast_paths(state: LoweringState, plans: list[FastPath]) -> None:
    """Once the sites are lowered: each function starts with a block that branches to a
    block calling the fast copy, or to the lowered body, unchanged (a branch of blocks, not
    an `scf.if` around the body: IREE 3.13 then converted the exploration functions to
    its asynchronous calling convention and left their calls, two `scf.if`s deep, in the
    synchronous one)."""
    for plan in plans:
        function = plan.function
        body = function.body
        inputs = list(function.function_type.inputs.data)
        types = list(function.function_type.outputs.data)
        location = plan.sites[0].group.location("fast path", function)
        entry, fast = Block(arg_types=inputs), Block(arg_types=inputs)
        lowered = body.first_block
        assert lowered is not None
        body.insert_block_before(entry, lowered)
        body.insert_block_after(fast, entry)
        for block in (entry, fast):
            locate_arguments(block, location)
        em = Emitter(entry, location=location)
        conditions = []
        for site in plan.sites:
            group = site.group
            if group.policy == Policy.ONLINE:
                choice = em.value(util.GlobalLoadOp(state.site_choices[site.op], i32))
            else:  # the key's stored choice; unset (negative) runs the reference
                key = group.key_index(site.static_key)  # type: ignore[arg-type]
                stored = em.value(util.GlobalLoadOp(state.choice_global(group, key), i32))
                valid = em.cmp("sge", stored, em.i32(0))
                choice = em.select(valid, stored, em.i32(group.default_index))
            conditions.append(em.cmp("eq", choice, em.i32(group.expected_index)))  # type: ignore[arg-type]
        em.add(
            cf.ConditionalBranchOp(
                em.all_of(conditions), fast, list(entry.args), lowered, list(entry.args)
            )
        )
        calling = Emitter(fast, location=location)
        results = calling.call(plan.fast.sym_name.data, list(fast.args), types)
        calling.add(util.ReturnOp(results))
        # inlined, whatever its size
        plan.fast.attributes["inlining_policy"] = parse_attribute_text("#util.inline.always")
        state.exports.append(plan.fast)
