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

A site with a dynamic workload key takes the fast path too where the function computes
the key from its arguments alone, in its entry block (`arith` ops and the dimensions of
its tensors or buffer views, as a model exported with a dynamic batch has): the new entry
block computes the key again; an online site counts as choosing its expected variant when
its table of committed keys (`committed.ChoiceTable`) holds this key, committed to that
variant (a key not yet committed runs the lowered body, which explores it), an explicit
or init site when its stored choice for the key is that variant. Without this, the
committed sites of a dynamic model each ended an execution region: MobileNetV2 with a
dynamic batch, 38 online sites committed to their expected variants, took 1.34-1.39x the
time of its static build on a 2-core `local-task`; 1.02x with it.

Sites whose choice differs from the expected one (another device, another machine load,
a variant set by hand) run as before through the lowered function: the fast path is an
optimization of the common case, the decisions are the runtime's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import cf
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from autotune_contracts.policy import Policy
from autotune_dialect import util
from autotune_dialect.interop import op_name
from autotune_dialect.mlir_text import parse_attribute_text
from lowering.emitter import Emitter, locate_arguments
from lowering.groups import Site, generated_location, in_initializer, results_unused
from lowering.policies import stored_variant
from lowering.state import LoweringState
from lowering.variants import tie_shapes, variant_op


@dataclass
class FastPath:
    """A function with a fast path: its sites, and the copy that runs their expected
    variants (inserted once the function is lowered)."""

    function: util.FuncOp
    sites: list[Site]
    fast: util.FuncOp
    key_ops: dict[Operation, list[Operation]]
    """Per site with a dynamic key (by its op), the ops of the function's first block that
    compute that key (`_key_computation`), to be computed again at the new entry."""


def _function_of(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, util.FuncOp):
        parent = parent.parent_op()
    return parent


_POLICIES = (Policy.ONLINE, Policy.EXPLICIT, Policy.INIT)
"""The policies whose sites choose at run time, from a global, and so can take a fast path."""


_KEY_OPS = ("tensor.dim", "hal.buffer_view.dim", "hal.buffer_view.rank")
"""Besides `arith` ops, what a dynamic key may be computed with to be read at the entry."""


def _key_computation(key: list[SSAValue], block: Block) -> list[Operation] | None:
    """The ops of `block` that compute `key` from its arguments, in order, when every one
    is an `arith` op or in `_KEY_OPS` (side-effect free, without regions) and lies in
    `block` itself; None otherwise."""
    ops: list[Operation] = []
    seen: set[Operation] = set()

    def computed(value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            return value.block is block
        op = value.owner
        assert isinstance(op, Operation)
        if op in seen:
            return True
        name = op_name(op)
        if op.parent_block() is not block or op.regions:
            return False
        if not (name.startswith("arith.") or name in _KEY_OPS):
            return False
        if not all(computed(operand) for operand in op.operands):
            return False
        seen.add(op)
        ops.append(op)
        return True

    return ops if all(computed(value) for value in key) else None


def _takes_fast_path(site: Site) -> bool:
    """Whether a site may take part (its key aside: `_key_computation`)."""
    group = site.group
    return (
        group.policy in _POLICIES
        and group.expected_index is not None
        and not in_initializer(site.op)
        and not results_unused(site.op)
    )


def _key_ops(sites: list[Site], entry: Block) -> dict[Operation, list[Operation]] | None:
    """Per site with a dynamic key (by its op), the ops of `entry` computing it
    (`_key_computation`); None when one of them is computed otherwise."""
    found = {}
    for site in sites:
        if site.static_key is None:
            ops = _key_computation(site.key, entry)
            if ops is None:
                return None
            found[site.op] = ops
    return found


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
        entry = function.body.first_block
        if entry is None or not all(_takes_fast_path(s) for s in own):
            continue
        key_ops = _key_ops(own, entry)
        if key_ops is None:
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
        plans.append(FastPath(function, own, fast, key_ops))
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
        # the lowered body's values that the entry block computes again (dynamic keys)
        again: dict[SSAValue, SSAValue] = dict(zip(lowered.args, entry.args, strict=True))
        conditions = []
        for site in plan.sites:
            group = site.group
            expected = em.i32(group.expected_index)  # type: ignore[arg-type]
            key = site.key
            if site.static_key is None:
                key = _computed_again(em, plan.key_ops[site.op], key, again)
            if group.policy == Policy.ONLINE and site.static_key is None:
                # the key committed, in the site's table, to the expected variant
                held = [em.to_i64(value) for value in key]
                choice, hit = state.site_choices[site.op].load(em, held)
                conditions.append(em.all_of([hit, em.cmp("eq", choice, expected)]))
                continue
            if group.policy == Policy.ONLINE:  # the key's committed choice
                choice, _ = state.site_choices[site.op].load(em, [])
            else:  # the key's stored choice; unset (negative) runs the reference
                choice = stored_variant(state, em, site, key)
            conditions.append(em.cmp("eq", choice, expected))
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


def _computed_again(
    em: Emitter, ops: list[Operation], values: list[SSAValue], again: dict[SSAValue, SSAValue]
) -> list[SSAValue]:
    """`values`, computed by `ops` of the lowered body's first block, computed again at the
    entry (`again`: that block's values and their copies so far, extended with the new
    ones)."""
    for op in ops:
        if op.results and op.results[0] in again:
            continue
        copy = op.clone(value_mapper=again)
        em.add(copy)
        again.update(zip(op.results, copy.results, strict=True))
    return [again[value] for value in values]
