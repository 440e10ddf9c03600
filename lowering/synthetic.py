"""The `explicit` and `init` policies: tuning on synthetic inputs, setters and getters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, complex, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    ComplexType,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from autotune_contracts import interface
from autotune_contracts.policy import Policy
from autotune_dialect import flow, util
from autotune_dialect.diagnostics import op_error
from lowering.emitter import Emitter, locate_arguments
from lowering.groups import Group, Site, constant_int, generated_location, split_by_rank
from lowering.policies import StoredLowering
from lowering.state import LoweringState
from lowering.variants import chain, result_tensors, variant_op


class ExplicitLowering(StoredLowering):
    """`explicit`: an exported `__autotune` tunes every key; exported setters and getters
    of each group's choice."""

    def finish(self, state: LoweringState, sites: list[Site]) -> None:
        tune_function(state, sites)


class InitLowering(StoredLowering):
    """`init`: an exported `__autotune_init`, called at load, measures every undecided key."""

    def finish(self, state: LoweringState, sites: list[Site]) -> None:
        init_tuning(state, sites)


@dataclass
class SyntheticRun:
    """Synthetic inputs made for a site at one workload."""

    make: Callable[[Emitter, str], Operation]
    """Makes a dispatch or call of a variant on the inputs."""
    inputs: list[SSAValue]
    """The input tensors (to wait for before the clock starts)."""
    result_dims: list[list[SSAValue]]
    """The dynamic dimensions of each result."""


def synthetic_run(em: Emitter, site: Site, key: tuple[int, ...]) -> SyntheticRun:
    """Create synthetic inputs for `site` at workload `key`."""
    known = dict(zip(site.key, key, strict=True))

    def resolve(value: SSAValue, what: str) -> int:
        constant = constant_int(value, known)
        if constant is None:
            raise op_error(
                site.op,
                f"cannot create synthetic inputs for tuning group "
                f"@{site.group.op.group_name}: {what} is neither a constant nor a "
                "workload value",
            )
        return constant

    op = site.op
    arguments: list[SSAValue] = []
    argument_dims: list[SSAValue] = []
    dims_of = op.argument_dims_of() if isinstance(op, flow.DispatchOp) else None
    call_args = op.arguments if isinstance(op, flow.DispatchOp) else op.operands
    dim_cursor = 0
    for i, arg in enumerate(call_args):
        if isinstance(arg.type, TensorType):
            shape = arg.type.get_shape()
            dyn: list[SSAValue] = []
            if dims_of is not None:
                for d in dims_of[i]:
                    dyn.append(em.const(resolve(d, "a dynamic dimension"), IndexType()))
            else:
                for _ in [s for s in shape if s < 0]:
                    dyn.append(em.const(key[dim_cursor], IndexType()))
                    dim_cursor += 1
            argument_dims.extend(dyn)
            fill = synthetic_value(arg.type.get_element_type(), i)
            if fill is None:
                raise op_error(
                    site.op,
                    f"cannot create synthetic inputs for tuning group "
                    f"@{site.group.op.group_name}: operand #{i} has element type "
                    f"{arg.type.get_element_type()}, of which none can be made",
                )
            arguments.append(synthetic_tensor(em, arg.type, dyn, fill))
        else:
            arguments.append(em.const(resolve(arg, f"operand #{i}"), arg.type))
    workload = [em.const(k, IndexType()) for k in key] if isinstance(op, flow.DispatchOp) else None
    result_dims = None
    per_result: list[list[SSAValue]] = [[] for _ in op.results]
    if isinstance(op, flow.DispatchOp):
        result_dims = [
            em.const(resolve(d, "a result dimension"), IndexType()) for d in op.result_dims
        ]
        per_result = split_by_rank([r.type for r in op.outputs], result_dims)
    elif any(
        isinstance(r.type, TensorType) and any(d < 0 for d in r.type.get_shape())
        for r in op.results
    ):
        raise op_error(
            op,
            f"cannot tune function group @{site.group.op.group_name} on synthetic inputs: "
            "its results have dynamic shapes",
        )

    def make(e: Emitter, variant: str) -> Operation:
        return variant_op(site, variant, arguments, argument_dims, workload, result_dims)

    inputs = [a for a in arguments if isinstance(a.type, TensorType)]
    return SyntheticRun(make, inputs, per_result)


def synthetic_value(element: Attribute, seed: int) -> IntegerAttr | FloatAttr | ArrayAttr | None:
    """A valid value of `element` that `seed` picks: an integer from 1 to 7 within the
    type's range (1 for an i1, as a mask's "keep"), an index from 1 to 7, a float from
    0.5 to 1.5, a complex number of two such floats or integers (`complex.constant`'s
    [real, imaginary]); None for a type the inputs cannot be made of."""
    if isinstance(element, ComplexType):
        part = element.element_type
        real, imaginary = synthetic_value(part, seed), synthetic_value(part, seed + 1)
        return None if real is None or imaginary is None else ArrayAttr([real, imaginary])
    if isinstance(element, IntegerType):
        width = element.width.data
        largest = 2 ** (width - 1) - 1 if width > 1 else 1
        return IntegerAttr(seed % min(7, largest) + 1, element)
    if isinstance(element, IndexType):
        return IntegerAttr(seed % 7 + 1, element)
    if isinstance(element, AnyFloat):
        return FloatAttr(0.5 + 0.25 * (seed % 5), element)
    return None


def synthetic_tensor(
    em: Emitter, type_: TensorType, dims: list[SSAValue], fill: IntegerAttr | FloatAttr | ArrayAttr
) -> SSAValue:
    """A tensor of `type_` filled with `fill`, behind a barrier."""
    if isinstance(fill, ArrayAttr):
        value = em.value(complex.ConstantOp(fill, type_.get_element_type()))
    else:
        value = em.value(arith.ConstantOp(fill))
    filled = em.value(flow.TensorSplatOp(value, dims, type_))
    return em.add(util.OptimizationBarrierOp([filled])).results[0]


def groups_with_a_site(
    state: LoweringState, policy: Policy, sites: list[Site]
) -> list[tuple[Group, Site]]:
    """The groups of `policy` that are used, each with one of its sites (whose operand
    types the synthetic inputs follow)."""
    out = []
    for group in state.groups.values():
        site = next((s for s in sites if s.group is group), None)
        if group.policy == policy and site is not None:
            out.append((group, site))
    return out


def tune_function(state: LoweringState, sites: list[Site]) -> None:
    """Exported `__autotune`: tune every explicit group's keys until the host commits;
    each group's setter and getter."""
    tuned = tuning_entry(
        state, sites, Policy.EXPLICIT, interface.TUNE_FUNCTION, interface.TUNE_ENTRY
    )
    for group, _ in tuned:
        setter_getter(state, group)


def init_tuning(state: LoweringState, sites: list[Site]) -> None:
    """Exported `__autotune_init`, which the runtime calls at load: every init group's
    keys tuned as `__autotune` tunes an explicit group's (a key whose decision the tuning
    cache holds runs nothing: `select` answers committed at once).

    Not a `util.initializer`: IREE 3.13 crashes (OutlineMemoizeRegions) on an
    initializer with dispatches in a loop or under an `scf.if`."""
    tuning_entry(state, sites, Policy.INIT, interface.INIT_FUNCTION, interface.INIT_ENTRY)


def tuning_entry(
    state: LoweringState, sites: list[Site], policy: Policy, function: str, entry: str
) -> list[tuple[Group, Site]]:
    """An exported `function` (reflected as `entry`) that tunes every key of the used
    groups of `policy` on synthetic inputs until the host commits. Returns those groups,
    each with the site whose operand types the inputs follow (none: no function)."""
    tuned = groups_with_a_site(state, policy, sites)
    if not tuned:
        return tuned
    body = Block()
    for group, site in tuned:
        em = Emitter(body, location=group.location(f"@{function}"))
        for key, index in list(group.keys.items()):
            tune_key_until_committed(state, em, site, key, index)
    name = state.fresh(function)
    Emitter(body, location=generated_location(name, tuned[0][0])).add(util.ReturnOp())
    fn = util.FuncOp(name, ([], []), Region(body), "public")
    fn.location = generated_location(name, tuned[0][0])
    fn.attributes["iree.reflection"] = DictionaryAttr({interface.ENTRY_KEY: StringAttr(entry)})
    state.exports.append(fn)
    return tuned


def tune_key_until_committed(
    state: LoweringState, em: Emitter, site: Site, key, index: int
) -> None:
    """Time the variants the host selects for `key` until it commits; store the choice."""
    group = site.group
    before = Block()
    b = Emitter(before)
    gid = b.i64(group.gid)
    key_values = [b.i64(k) for k in key]
    variant, committed, _ = state.host(b, interface.select(len(key)), [gid, *key_values])
    unsettled = b.cmp("eq", committed, b.i32(0))
    before.add_op(scf.ConditionOp(unsettled, variant))
    after = Block(arg_types=[i32])
    a = Emitter(after)
    timed(state, a, site, after.args[0], synthetic_run(a, site, key), key)
    after.add_op(scf.YieldOp())
    loop = em.add(scf.WhileOp([], [i32], Region(before), Region(after)))
    em.add(util.GlobalStoreOp(loop.results[0], state.choice_global(group, index)))


def timed(
    state: LoweringState,
    em: Emitter,
    site: Site,
    variant: SSAValue,
    run: SyntheticRun,
    key: tuple[int, ...],
) -> None:
    """One timed run of the variant whose index is `variant` (choosing through the chain)
    on the synthetic inputs, recorded and its results checked by the host."""
    group = site.group
    em.wait_for(run.inputs)
    (t0,) = state.host(em, interface.now_ns(), [])
    results = chain(em, variant, site, run.make)
    tensors = result_tensors(site)
    ready = dict(zip(tensors, em.wait_for([results[i] for i in tensors]), strict=True))
    (t1,) = state.host(em, interface.now_ns(), [])
    elapsed = em.binary(arith.SubiOp, t1, t0)
    key_values = [em.i64(k) for k in key]
    gid = em.i64(group.gid)
    state.host(em, interface.record(len(key)), [gid, variant, elapsed, *key_values])
    for index in tensors:
        view = em.view(ready[index], run.result_dims[index])
        state.host(
            em,
            interface.check(len(key)),
            [gid, variant, em.i32(index), *key_values],
            [view],
        )


def setter_getter(state: LoweringState, group: Group) -> None:
    """Exported `__autotune_set_*` and `__autotune_get_*` of a group's choice."""
    suffix = group.display_name.replace("::", "_")
    setter_name = state.fresh(f"__autotune_set_{suffix}")
    getter_name = state.fresh(f"__autotune_get_{suffix}")
    state.accessors[group.gid] = (setter_name, getter_name)
    names = [state.choice_global(group, i) for i in group.keys.values()]
    setter = Block(arg_types=[i32])
    em = Emitter(setter, location=group.location(f"@{setter_name}"))
    locate_arguments(setter, em.location)
    for name in names:
        em.add(util.GlobalStoreOp(setter.args[0], name))
    em.add(util.ReturnOp())
    fn = util.FuncOp(setter_name, ([i32], []), Region(setter), "public")
    fn.location = em.location
    state.exports.append(fn)
    getter = Block()
    em = Emitter(getter, location=group.location(f"@{getter_name}"))
    value = em.i32(-1)
    if names:  # unset choices are negative; the getter says -1 for all of them
        stored = em.value(util.GlobalLoadOp(names[0], i32))
        value = em.select(em.cmp("sge", stored, em.i32(0)), stored, value)
    em.add(util.ReturnOp([value]))
    fn = util.FuncOp(getter_name, ([], [i32]), Region(getter), "public")
    fn.location = em.location
    state.exports.append(fn)
