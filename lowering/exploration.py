"""The `online` policy: the committed path and the outlined exploration and validation
functions of a site."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IntegerType,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from autotune_contracts import interface
from autotune_dialect import flow, util
from autotune_dialect.mlir_text import parse_attribute_text
from lowering.committed import ChoiceGlobal, CommittedChoice
from lowering.emitter import Emitter, locate_arguments
from lowering.groups import Site, in_initializer, results_unused
from lowering.policies import PolicyLowering, stored_choice_results
from lowering.state import LoweringState
from lowering.variants import chain, result_tensors, site_result_dims, tie_shapes, tied, variant_op


class OnlineLowering(PolicyLowering):
    """`online`: explore on the real inputs until the host commits, then run the choice."""

    def lower_site(self, state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
        if in_initializer(site.op):  # runs the stored choice, as explicit groups do
            results = stored_choice_results(state, em, site)
        elif results_unused(site.op):
            results = lower_unexplored(state, em, site)
        else:
            results = lower_online(state, em, site)
        return tie_shapes(em, site, results)


def lower_online(state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
    """A committed key runs its variant through the chain, as `explicit` does; every
    other call goes to the site's exploration function, out of line, so that the
    committed path has nothing of exploration in it (no host call, no fence, no
    branch that splits IREE's stream of dispatches).

    The site reads a committed choice of its own, which its exploration function stores
    (with the group's, which sites that never explore read): sites of one group that
    read one global made branches on one condition, which IREE merges into one; its
    committed side then packed both sites' results into one buffer while the exploring
    side returned two, and every later command buffer that read them saw a size and an
    offset that depend on the branch taken, so IREE recorded it on every call instead of
    replaying it (BERT: 12 of the caller's 37 command buffers)."""
    key = [em.to_i64(w) for w in site.key]
    scope = state.site_scope(site.group)
    own = committed_choices(state, site, len(key), scope)
    choice, hit = own.load(em, key)
    state.site_choices[site.op] = own
    stores = [own, committed_choices(state, site, len(key))]
    types = [r.type for r in site.op.results]

    def committed(e: Emitter) -> list[SSAValue]:
        return chain(e, choice, site)

    def exploring(e: Emitter) -> list[SSAValue]:
        callee = exploration_function(state, site, len(key), stores)
        return e.call(callee, [*key, *site.op.operands], types)

    return em.if_(hit, types, committed, exploring)


def lower_unexplored(state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
    """An online site whose results nothing reads runs the key's committed variant, or
    the reference before the commit, and never explores: `iree-compile` cannot build a
    call of an outlined exploration function whose results it drops, and timing or
    checking results nobody reads tells nothing."""
    key = [em.to_i64(w) for w in site.key]
    choice, hit = committed_choices(state, site, len(key)).load(em, key)
    variant = em.select(hit, choice, em.i32(site.group.default_index))
    return chain(em, variant, site)


def committed_choices(
    state: LoweringState, site: Site, arity: int, scope: str = ""
) -> CommittedChoice:
    """Where a site's committed choices are: a static key's choice global; for a dynamic
    key, a table (`ChoiceTable`). The group's, or with a `scope`
    (`LoweringState.site_scope`) one site's."""
    group = site.group
    if site.static_key is not None:
        index = group.key_index(site.static_key)
        if not scope:
            return ChoiceGlobal(state.choice_global(group, index))
        return ChoiceGlobal(state.state_global(group, f"{scope}k{index}.choice", i32))
    return state.choice_table(group, f"{scope}committed", arity)


def exploration_function(
    state: LoweringState, site: Site, arity: int, stores: list[CommittedChoice]
) -> str:
    """`util.func` (never inlined) taking a site's key and operands: it asks the host
    which variant to run, times it, checks its results against the reference's while
    it is unvalidated, and stores the choice once the host commits one (in each of
    `stores`: `committed_choices`)."""

    def body(em: Emitter, inner: Site, leading: list[SSAValue], _) -> list[SSAValue]:
        results = explore(state, em, inner, leading, stores)
        return tie_shapes(em, inner, results)

    return outlined_function(state, site, "explore", [i64] * arity, [], body)


def outlined_function(
    state: LoweringState,
    site: Site,
    what: str,
    leading: list[Attribute],
    trailing: list[Attribute],
    body: Callable[[Emitter, Site, list[SSAValue], list[SSAValue]], list[SSAValue]],
) -> str:
    """A private `util.func`, never inlined, taking `leading` values, the site's
    operands and `trailing` values, and returning what `body` returns for a copy of the
    site on its arguments (the key of that copy is the last `len(site.key)` leading
    values). Its name."""
    group = site.group
    name = state.fresh(group.symbol(f"{what}{state.outlined_functions}"))
    state.outlined_functions += 1
    operand_types = [o.type for o in site.op.operands]
    block = Block(arg_types=[*leading, *operand_types, *trailing])
    first = list(block.args[: len(leading)])
    operands = block.args[len(leading) : len(leading) + len(operand_types)]
    last = list(block.args[len(leading) + len(operand_types) :])
    key = first[len(first) - len(site.key) :]
    shadow = site.op.clone(value_mapper=dict(zip(site.op.operands, operands, strict=True)))
    inner = Site(shadow, group, key, site.static_key)  # type: ignore[arg-type]
    location = group.location(f"@{name}", site.op)
    locate_arguments(block, location)
    em = Emitter(block, location=location)
    em.add(util.ReturnOp(body(em, inner, first, last)))
    shadow.erase()
    types = [r.type for r in site.op.results]
    fn = util.FuncOp(name, (block.arg_types, types), Region(block), "private")
    fn.location = location
    fn.attributes["inlining_policy"] = parse_attribute_text("#util.inline.never")
    state.exports.append(fn)
    return name


@dataclass(frozen=True)
class _Probe:
    """What the steps of one exploring call share: the group's id, the site's key, the
    variant the host chose, whether the call explores (times the variant) and validates
    (checks its results), and when its clock started (0 where it does not explore)."""

    gid: SSAValue
    key: list[SSAValue]
    variant: SSAValue
    exploring: SSAValue
    validating: SSAValue
    t0: SSAValue


def explore(
    state: LoweringState,
    em: Emitter,
    site: Site,
    key: list[SSAValue],
    stores: list[CommittedChoice],
) -> list[SSAValue]:
    """The body of a site's exploration function: the host's choice for `key` (stored in
    each of `stores` once committed), run and timed while exploring, its results checked
    against the reference's while it is unvalidated."""
    gid = em.i64(site.group.gid)
    variant, exploring, validating = _ask_host(state, em, gid, key, stores)
    t0 = _start_clock(state, em, site, exploring)
    probe = _Probe(gid, key, variant, exploring, validating, t0)
    if not result_tensors(site):
        return _timed_run(state, em, site, probe)  # tensor-less: the explored run is the only run
    if any(t >= 0 for t in tied(site)):
        return _in_place_run(state, em, site, probe)
    return _validated_run(state, em, site, probe)


def _ask_host(
    state: LoweringState,
    em: Emitter,
    gid: SSAValue,
    key: list[SSAValue],
    stores: list[CommittedChoice],
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The variant the host chooses for `key`, whether the call explores (the host has
    not committed; once it has, the choice is stored in each of `stores`) and whether it
    validates (the host asks for a check while exploring)."""
    variant, committed, check = state.host(em, interface.select(len(key)), [gid, *key])
    done = em.cmp("ne", committed, em.i32(0))

    def commit(c: Emitter) -> list[SSAValue]:
        for store in stores:
            store.store(c, key, variant)
        return []

    em.if_(done, [], commit)
    exploring = em.binary(arith.XOrIOp, done, em.const(1, IntegerType(1)))
    validating = em.binary(arith.AndIOp, exploring, em.cmp("ne", check, em.i32(0)))
    return variant, exploring, validating


def _start_clock(state: LoweringState, em: Emitter, site: Site, exploring: SSAValue) -> SSAValue:
    """The time the run starts at while exploring (0 otherwise), taken once the site's
    tensor operands are ready.

    What follows a wait reads the tensors the wait returns, never the ones it was given
    (the site's operands are replaced): IREE orders a use of those after the barrier by
    copying them first, and the copy of the operands fell inside the timed run (a 4 MiB
    operand: 1.5 ms timed against 0.2 ms for the variant's own call)."""
    tensors = list(dict.fromkeys(a for a in site.op.operands if isinstance(a.type, TensorType)))

    def start_clock(e: Emitter) -> list[SSAValue]:
        ready = e.wait_for(tensors)
        return [*state.host(e, interface.now_ns(), []), *ready]

    t0, *ready = em.if_(
        exploring,
        [i64, *(t.type for t in tensors)],
        start_clock,
        lambda e: [e.i64(0), *tensors],
    )
    waited = dict(zip(tensors, ready, strict=True))
    site.op.operands = [waited.get(o, o) for o in site.op.operands]
    return t0


def _timed_run(state: LoweringState, e: Emitter, site: Site, probe: _Probe) -> list[SSAValue]:
    """The variant, timed while exploring: its results waited for, and the time since
    `probe.t0` recorded by the host."""
    types = [r.type for r in site.op.results]
    chosen = chain(e, probe.variant, site)

    def stop_clock(f: Emitter) -> list[SSAValue]:
        indices = [i for i, r in enumerate(chosen) if isinstance(r.type, TensorType)]
        ready = dict(zip(indices, f.wait_for([chosen[i] for i in indices]), strict=True))
        (t1,) = state.host(f, interface.now_ns(), [])
        elapsed = f.binary(arith.SubiOp, t1, probe.t0)
        record = interface.record(len(probe.key))
        state.host(f, record, [probe.gid, probe.variant, elapsed, *probe.key])
        return [ready.get(i, r) for i, r in enumerate(chosen)]

    return e.if_(probe.exploring, types, stop_clock, lambda f: chosen)


def _in_place_run(state: LoweringState, em: Emitter, site: Site, probe: _Probe) -> list[SSAValue]:
    """A site that writes into an operand: the explored run is the only run.

    Its result is its operand's buffer, which the function returns as its own argument;
    IREE 3.13's IPO replaces such a pass-through result at the call with the value passed
    in, and where the result's size is dynamic it left the caller's branch yielding a value
    that no longer exists ("operation's operand is unlinked", or a crash): MobileNetV2 with
    a dynamic batch, whose convolutions write into their padded successors' input. Through
    a barrier such a result is the function's own. Not where every size is static: there
    IPO's replacement is sound, and a barrier would hide from IREE that the caller's
    branches yield one buffer (MobileNetV2 at batch 1: 55 of its function's command
    buffers then recorded on every call, against one)."""
    results = _timed_run(state, em, site, probe)
    if any(isinstance(r.type, TensorType) and not r.type.has_static_shape() for r in results):
        return hidden_from_folding(em, results)
    return results


def _validated_run(state: LoweringState, em: Emitter, site: Site, probe: _Probe) -> list[SSAValue]:
    """While a variant is unvalidated (always while exploring), its result is checked
    against the reference's on the same inputs, and the caller gets the reference's."""
    types = [r.type for r in site.op.results]

    def checked(e: Emitter, results: list[SSAValue]) -> list[SSAValue]:
        callee = validation_function(state, site, len(probe.key))
        return e.call(callee, [probe.variant, *probe.key, *site.op.operands, *results], types)

    def timed_run(e: Emitter) -> list[SSAValue]:
        return _timed_run(state, e, site, probe)

    if len(result_tensors(site)) == 1:
        # Each branch runs the variant itself. A branch that yielded results made before
        # the `scf.if` kept one result buffer alive per call; the optimization barrier
        # that released them (below) hid their size from IREE, and the caller's later
        # command buffers, which then captured a size it could not prove constant, were
        # recorded on every call instead of replayed (an 8-group chain: 1 replayed and 7
        # recorded, against 8 replayed so).
        return em.if_(probe.validating, types, lambda e: checked(e, timed_run(e)), timed_run)

    # Several results: IREE packs them into one buffer, which the exploration function
    # then returns once for all of them, and the caller's branch passes that one value
    # in several places. IREE 3.13's VM register allocation loses such a value: the
    # branch moves it into one block argument and leaves the other, which shares its
    # register, empty (`binding table slot requires a buffer but none was provided`).
    # Through the barrier each result is returned as a value of its own.
    results = timed_run(em)
    return em.if_(
        probe.validating,
        types,
        lambda e: checked(e, results),
        lambda e: hidden_from_folding(e, results),
    )


def hidden_from_folding(em: Emitter, results: list[SSAValue]) -> list[SSAValue]:
    """`results` through an optimization barrier, their dynamic dimensions (which the
    barrier hides) tied again."""
    dims = [em.dynamic_dims(r) if isinstance(r.type, TensorType) else [] for r in results]
    kept = em.add(util.OptimizationBarrierOp(results)).results
    return [
        em.value(flow.TensorTieShapeOp(k, d)) if d else k for k, d in zip(kept, dims, strict=True)
    ]


def validation_function(state: LoweringState, site: Site, arity: int) -> str:
    """`util.func` taking a variant's results and the site's operands: it runs the
    reference on the operands, has the host compare the results, and returns the
    reference's. Kept out of line (never inlined): exporting the results for the host
    inside the dispatching function kept one result buffer alive per call, even when
    the branch was not taken. It dispatches one variant, the reference, whatever the
    group's size: the chain is not repeated here (a copy of it per dispatch site made
    `iree-compile` 2.5x slower at 300 groups)."""
    group = site.group
    types = [r.type for r in site.op.results]

    def body(em: Emitter, inner: Site, leading, results) -> list[SSAValue]:
        variant, key = leading[0], leading[1:]
        gid = em.i64(group.gid)
        reference = group.variants[group.default_index]
        expected = list(em.add(variant_op(inner, reference)).results)
        compare_results(state, em, inner, variant, results, expected, key, gid)
        return expected

    return outlined_function(state, site, "validate", [i32, *([i64] * arity)], types, body)


def compare_results(
    state: LoweringState, em: Emitter, site, variant, results, expected, key, gid
) -> None:
    dims = site_result_dims(site)
    indices = result_tensors(site)
    # The host reads both results only once the device has computed them.
    ready = em.wait_for([results[i] for i in indices] + [expected[i] for i in indices])
    for position, index in enumerate(indices):
        # A dispatch states its results' dynamic dimensions; a function's results carry
        # their own (they may differ between the variant and the reference).
        got_dims = dims[index] or em.dynamic_dims(results[index])
        want_dims = dims[index] or em.dynamic_dims(expected[index])
        got = em.view(ready[position], got_dims)
        want = em.view(ready[len(indices) + position], want_dims)
        signature = interface.compare(len(key))
        state.host(em, signature, [gid, variant, em.i32(index), *key], [got, want])
