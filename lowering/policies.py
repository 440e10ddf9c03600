"""The interface every policy's lowering implements, and the `static` policy's and the
stored choice's (`explicit` and `init`) lowerings."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from autotune_contracts.workloads import key_distance
from autotune_dialect import util
from autotune_dialect.diagnostics import op_error
from lowering.emitter import Emitter
from lowering.groups import Group, Site
from lowering.state import LoweringState
from lowering.variants import chain, tie_shapes, variant_op


class PolicyLowering:
    """How the groups of one policy are lowered: `prepare` each group before any site is
    lowered, `lower_site` each dispatch or call, then `finish` with what the policy adds
    to the module once."""

    def prepare(self, state: LoweringState, group: Group) -> None:
        """Before any site is lowered (nothing by default)."""

    def lower_site(self, state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
        """Emit, at `em` (before the site's op), what replaces the site; its results."""
        raise NotImplementedError

    def finish(self, state: LoweringState, sites: list[Site]) -> None:
        """Once every site is lowered (nothing by default)."""


class StaticLowering(PolicyLowering):
    """`static`: the site runs the chosen variant directly; no imports, no globals. A site
    whose sizes are known at run time only, decided for several workloads with different
    variants, runs the variant decided for the nearest decided workload (compared at run
    time; of a workload of several sizes, the one decided for it, else the first
    decision's): a table fixed at build time, with no host call."""

    def lower_site(self, state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
        decisions = state.static_decisions.get(site.group.gid, [])
        if _selects_at_run_time(site, decisions):
            return tie_shapes(em, site, chain(em, _decided_index(em, site, decisions), site))
        return list(em.add(variant_op(site, static_choice(state, site))).results)


def _selects_at_run_time(site: Site, decisions: list[dict]) -> bool:
    """Whether a `static` site chooses among its decisions by its workload at run time."""
    return (
        site.group.op.choice is None
        and site.static_key is None
        and len({d["variant"] for d in decisions}) > 1
        and all(len(d["workload"]) == len(site.key) for d in decisions)
    )


def _decided_index(em: Emitter, site: Site, decisions: list[dict]) -> SSAValue:
    """The index of the variant decided for the site's workload: of one size, the nearest
    decided size's (as `key_distance` measures, in log2: at or above the geometric mean
    of two neighbours, the larger's); of several, the decision for that workload, else the
    first decision's."""
    variants = site.group.variants
    key = [em.to_i64(w) for w in site.key]
    if len(key) == 1:
        ordered = sorted(decisions, key=lambda d: d["workload"][0])
        size = key[0]
        square = em.binary(arith.MuliOp, size, size)
        index = em.i32(variants.index(ordered[0]["variant"]))
        for below, above in zip(ordered, ordered[1:], strict=False):
            product = em.i64(below["workload"][0] * above["workload"][0])
            nearer = em.cmp("sge", square, product)
            index = em.select(nearer, em.i32(variants.index(above["variant"])), index)
        return index
    index = em.i32(variants.index(decisions[0]["variant"]))
    for decision in reversed(decisions[1:]):
        same = em.key_is(key, decision["workload"])
        index = em.select(same, em.i32(variants.index(decision["variant"])), index)
    return index


def static_choice(state: LoweringState, site: Site) -> str:
    """The variant a `static` site runs: `decided_variant` of the group's decisions."""
    return decided_variant(site, state.static_decisions.get(site.group.gid, []))


def decided_variant(site: Site, decisions: list[dict]) -> str:
    """The group's `choice`, else the decision for the site's workload, else the
    decision of the nearest decided workload, else the first variant."""
    group = site.group
    if group.op.choice is not None:
        return group.op.choice.root_reference.data
    if not decisions:
        return group.variants[0]
    key = site.static_key
    if key is None or any(len(d["workload"]) != len(key) for d in decisions):
        return decisions[0]["variant"]
    nearest = min(decisions, key=lambda d: key_distance(tuple(d["workload"]), key))
    return nearest["variant"]


class StoredLowering(PolicyLowering):
    """`explicit` and `init`: the site runs the key's stored choice, else the reference;
    the group's sample workloads are keys too."""

    def prepare(self, state: LoweringState, group: Group) -> None:
        for sample in group.op.sample_workloads():
            if group.arity is not None and len(sample) != group.arity:
                raise op_error(
                    group.op,
                    f"sample workloads have {len(sample)} values but the uses of "
                    f"@{group.op.group_name} have {group.arity} (for a group of "
                    "functions: the dynamic dimensions of its tensor arguments)",
                )
            group.key_index(tuple(sample))

    def lower_site(self, state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
        return tie_shapes(em, site, stored_choice_results(state, em, site))


def stored_choice_results(state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
    """Run the stored choice for the site's key, else the reference; the results."""
    variant = stored_variant(state, em, site, site.key)
    return chain(em, variant, site)


def stored_variant(state: LoweringState, em: Emitter, site: Site, key: list[SSAValue]) -> SSAValue:
    """The variant an `explicit` or `init` site runs at `key` (the site's key values, or
    the same computed elsewhere): the choice stored for it, else the group's default (the
    reference)."""
    group = site.group
    if site.static_key is not None:
        choice = em.value(
            util.GlobalLoadOp(state.choice_global(group, group.key_index(site.static_key)), i32)
        )
    else:
        choice = em.i32(-1)
        key = [em.to_i64(w) for w in key]
        for sample, index in list(group.keys.items()):
            if len(sample) != len(key):
                continue
            stored = em.value(util.GlobalLoadOp(state.choice_global(group, index), i32))
            same = em.key_is(key, sample)
            choice = em.select(same, stored, choice)
    valid = em.cmp("sge", choice, em.i32(0))
    return em.select(valid, choice, em.i32(group.default_index))
