"""`autotune-to-iree`: expand every group and every dispatch or call of it into IREE input IR.

Per policy (docs/lowering.md has the emitted IR):

- `static`: the dispatch names the chosen variant directly; no imports, no globals.
- `online`: selection state in `util.global`s; while a workload key is unsettled each call
  asks the host (`select`), runs that one variant on the real inputs between two clock
  reads with a fence wait, and reports the time (`record`); once the host commits, the
  choice is stored and later calls load it and branch, with no host call and no fence.
- `explicit`: an exported `__autotune` function tunes every key on synthetic inputs
  (static shapes, or the group's sample `workloads`); dispatches use the stored choice, or
  the reference variant before tuning. Exported `__autotune_set_*` / `__autotune_get_*`
  set and read a group's choice.
- `init`: the same measurements, unrolled in an exported `__autotune_init` function that
  the runtime calls when it loads the module; keys the tuning cache has decided are not
  measured again.

The variants are selected with a nested `scf.if` chain (one branch per variant, any count).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from autotune_contracts import interface
from autotune_contracts.errors import DiagnosticError
from autotune_dialect import flow, interop, util
from autotune_dialect.autotune import POLICIES, GroupOp
from autotune_dialect.bridge import iree_text
from autotune_dialect.diagnostics import op_error, op_location
from autotune_dialect.interop import attribute, op_name, symbol_name
from autotune_dialect.ir import deep_recursion, parse_module, verify_module
from autotune_dialect.symbols import lookup_symbol, symbol_index
from lowering.decisions import load_decisions
from lowering.emitter import Emitter
from lowering.exploration import Exploration
from lowering.groups import (
    Group,
    Site,
    constant_int,
    in_initializer,
    results_unused,
)
from lowering.module_output import ModuleOutput
from lowering.synthetic import SyntheticTuning
from lowering.target_checks import check_buildable


class Lowering(Exploration, SyntheticTuning, ModuleOutput):
    """One run of the pass over a module."""

    def __init__(
        self,
        module: ModuleOp,
        policy: str,
        decisions: list[dict] | None,
        base_dir: Path | None = None,
        decisions_from: str = "the tuning cache file",
    ):
        if policy not in POLICIES:
            raise DiagnosticError(
                f'unknown policy "{policy}"; expected one of ' + ", ".join(POLICIES)
            )
        self.module = module
        self.base_dir = base_dir
        self.default_policy = policy
        self.decisions = decisions or []
        self.decisions_from = decisions_from
        self.static_decisions: dict[int, list[dict]] = {}  # gid -> decisions for the group
        self.groups: dict[GroupOp, Group] = {}
        self.imports: dict[str, interface.ImportSignature] = {}
        self.import_locations: dict[str, Attribute | None] = {}  # name -> its first caller's
        self.globals: dict[tuple[int, str], util.GlobalOp] = {}
        self.taken = {name for op in module.body.ops if (name := symbol_name(op)) is not None}
        self.accessors: dict[int, tuple[str, str]] = {}  # gid -> (setter, getter) names
        self.exports: list[Operation] = []
        self.outlined_functions = 0  # made so far, numbering their names

    # --- discovery ------------------------------------------------------------------

    def collect_groups(self) -> None:
        for op in self.module.walk():
            if not isinstance(op, GroupOp):
                continue
            container = op.parent_op()
            assert container is not None
            container_name = None
            if interop.is_executable(container):
                container_name = symbol_name(container)
            group = Group(
                op,
                len(self.groups),
                container,
                container_name,
                op.policy_or(self.default_policy),
                op.variant_names,
            )
            if container_name is None:
                group.function_kinds = {
                    name: op_name(variant)
                    for name, variant in zip(group.variants, op.resolve_variants(), strict=True)
                }
            self.groups[op] = group

    def collect_sites(self) -> list[Site]:
        sites: list[Site] = []
        for op in self.module.walk():
            if isinstance(op, flow.DispatchOp):
                target = lookup_symbol(op, op.entry_point)
                if isinstance(target, GroupOp):
                    sites.append(self._site(op, self.groups[target], list(op.workload)))
            elif op_name(op) in ("util.call", "func.call"):
                callee = attribute(op, "callee")
                target = lookup_symbol(op, callee) if isinstance(callee, SymbolRefAttr) else None
                if isinstance(target, GroupOp):
                    sites.append(self._site(op, self.groups[target], None))
        return sites

    def check_other_uses(self, site_ops: set[Operation]) -> None:
        """Only the dispatches and calls in `site_ops` may refer to a group: any other
        reference would be left dangling when the groups are erased."""
        for op in self.module.walk():
            if op in site_ops or isinstance(op, GroupOp):
                continue
            for attr in (*op.properties.values(), *op.attributes.values()):
                for ref in _symbol_refs(attr):
                    if isinstance(lookup_symbol(op, ref), GroupOp):
                        raise op_error(
                            op,
                            f"refers to group {ref}; a group can only be dispatched with "
                            "flow.dispatch or called with util.call",
                        )

    def _site(self, op, group: Group, workload: list[SSAValue] | None) -> Site:
        if workload is None:  # a function group: dynamic dimensions of tensor operands
            workload = []
            em = Emitter(op.parent_block(), op, group.location("workload", op))
            for arg in op.operands:
                if isinstance(arg.type, TensorType):
                    workload.extend(em.dynamic_dims(arg))
        if group.arity is None:
            group.arity = len(workload)
        elif group.arity != len(workload):
            raise op_error(op, f"uses of group @{group.op.group_name} differ in workload count")
        if len(workload) > interface.MAX_WORKLOAD_ARITY:
            raise op_error(
                op,
                f"workload of {len(workload)} values exceeds the supported "
                f"{interface.MAX_WORKLOAD_ARITY}",
            )
        constants = [constant_int(w) for w in workload]
        static_key = None if None in constants else tuple(constants)  # type: ignore[arg-type]
        if static_key is not None:
            group.key_index(static_key)
        return Site(op, group, workload, static_key)

    # --- variant ops ----------------------------------------------------------------

    def variant_op(
        self,
        site: Site,
        variant: str,
        arguments: Sequence[SSAValue] | None = None,
        argument_dims: Sequence[SSAValue] | None = None,
        workload: Sequence[SSAValue] | None = None,
        result_dims: Sequence[SSAValue] | None = None,
    ) -> Operation:
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
        self,
        em: Emitter,
        index: SSAValue,
        site: Site,
        make: Callable[[Emitter, str], Operation],
    ) -> list[SSAValue]:
        """Nested `scf.if` over the variants: branch i runs variant i when index == i."""
        variants = site.group.variants
        types = [r.type for r in site.op.results]

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

    def tie_shapes(self, em: Emitter, site: Site, results: list[SSAValue]) -> list[SSAValue]:
        if not isinstance(site.op, flow.DispatchOp):
            return results
        dims = site.op.result_dims_of()
        return [
            em.value(flow.TensorTieShapeOp(r, d)) if d else r
            for r, d in zip(results, dims, strict=True)
        ]

    # --- state ----------------------------------------------------------------------

    def fresh(self, name: str) -> str:
        """`name`, or `name_N`: a module-level symbol name no other symbol has."""
        candidate, n = name, 0
        while candidate in self.taken:
            n += 1
            candidate = f"{name}_{n}"
        self.taken.add(candidate)
        return candidate

    def state_global(self, group: Group, suffix: str, type_: Attribute) -> str:
        """A mutable global of a group's state (made on first use); its name. It starts
        unset: negative (no variant index, workload or size is), and unlike any other
        state global's start. IREE's FuseGlobals merges globals whose stores it sees
        storing one value, and it sees only stores at the top level of a function: with
        one start value, the initializer's stores were all it saw of every choice, and it
        merged all of a module's choices into one (one group's commit then chose for all,
        and a committed branch ran with another group's choice)."""
        key = (group.gid, suffix)
        if key not in self.globals:
            name = self.fresh(group.symbol(suffix))
            unset = IntegerAttr(-1 - len(self.globals), type_)
            self.globals[key] = util.GlobalOp(name, type_, unset, True)
            self.globals[key].location = group.location(f"@{name}")
        return self.globals[key].sym_name.data

    def choice_global(self, group: Group, key_index: int) -> str:
        """The global holding a key's chosen variant, negative until one is chosen."""
        return self.state_global(group, f"k{key_index}.choice", i32)

    def host(
        self, em: Emitter, signature: interface.ImportSignature, args, views=()
    ) -> list[SSAValue]:
        self.imports[signature.name] = signature
        self.import_locations.setdefault(signature.name, em.location)
        return em.host(signature, args, views)

    # --- per-policy site lowering ---------------------------------------------------

    def lower_site(self, site: Site) -> None:
        op = site.op
        block = op.parent_block()
        assert block is not None
        em = Emitter(block, op, site.group.location("selection", op))
        policy = site.group.policy
        if policy == "static":
            new = em.add(self.variant_op(site, self.static_choice(site)))
            results = list(new.results)
        elif policy == "online" and not in_initializer(op) and not results_unused(op):
            results = self.tie_shapes(em, site, self.lower_online(em, site))
        elif policy == "online" and not in_initializer(op):
            results = self.tie_shapes(em, site, self.lower_unexplored(em, site))
        else:  # explicit, init, and online groups used while the module loads
            results = self.tie_shapes(em, site, self.lower_stored(em, site))
        for old, new_value in zip(op.results, results, strict=True):
            old.replace_all_uses_with(new_value)
        op.detach()
        op.erase()

    def static_choice(self, site: Site) -> str:
        """The group's `choice`, else the decision for the site's workload, else the
        decision of the nearest decided workload, else the first variant."""
        group = site.group
        if group.op.choice is not None:
            return group.op.choice.root_reference.data
        matching = self.static_decisions.get(group.gid, [])
        if not matching:
            return group.variants[0]
        if site.static_key is None or any(
            len(d["workload"]) != len(site.static_key) for d in matching
        ):
            return matching[0]["variant"]
        from autotune_runtime.tuner import key_distance  # the runtime's rule; heavy to import

        nearest = min(matching, key=lambda d: key_distance(tuple(d["workload"]), site.static_key))
        return nearest["variant"]

    def match_decisions(self) -> None:
        """Assign the cache's decisions to the groups they name (`executable::group`, or
        `group` alone where one group of the module has that name). A decision naming a
        variant its group lacks is refused; decisions naming no group of the module are
        refused when none names one (the file is for another module), else listed."""
        if not self.decisions or all(g.policy != "static" for g in self.groups.values()):
            return
        by_name: dict[str, list[Group]] = {}
        for group in self.groups.values():
            by_name.setdefault(group.display_name, []).append(group)
            if group.container_name is not None:
                by_name.setdefault(group.op.group_name, []).append(group)
        unmatched: list[str] = []
        for index, decision in enumerate(self.decisions):
            name = decision["group"]
            if decision.get("container") and "::" not in name:
                name = f"{decision['container']}::{name}"
            candidates = [g for g in by_name.get(name, []) if g.display_name == name]
            candidates = candidates or by_name.get(name, [])
            if len(candidates) != 1:
                unmatched.append(
                    f"#{index} ({decision['group']}"
                    + (", which names several groups" if candidates else "")
                    + ")"
                )
                continue
            group = candidates[0]
            if decision["variant"] not in group.variants:
                problem = (
                    f"decision #{index} of {self.decisions_from} chooses "
                    f"@{decision['variant']}, which is not a variant of the group ("
                    + ", ".join(f"@{v}" for v in group.variants)
                    + ")"
                )
                place = getattr(self.decisions, "place", lambda _: None)(index)
                if place is None:
                    raise op_error(group.op, problem)
                group_at = op_location(group.op)
                raise DiagnosticError(
                    problem + (f"; the group is at {group_at}" if group_at else ""),
                    place,
                    self.decisions.text,
                )
            self.static_decisions.setdefault(group.gid, []).append(decision)
        if not unmatched:
            return
        groups = ", ".join(sorted(g.display_name for g in self.groups.values()))
        listed = ", ".join(unmatched[:5]) + (", ..." if len(unmatched) > 5 else "")
        if not self.static_decisions:
            raise DiagnosticError(
                f"no decision of {self.decisions_from} names a group of this module: "
                f"decisions {listed}; the module's groups are {groups}"
            )
        sys.stderr.write(
            f"warning: {len(unmatched)} decision(s) of {self.decisions_from} name no single "
            f"group of this module and are not used: {listed} (groups: {groups})\n"
        )

    def lower_stored(self, em: Emitter, site: Site) -> list[SSAValue]:
        """`explicit` / `init`: run the stored choice for the key, else the reference."""
        group = site.group
        default = em.i32(group.default_index)
        if site.static_key is not None:
            choice = em.value(
                util.GlobalLoadOp(self.choice_global(group, group.key_index(site.static_key)), i32)
            )
        else:
            choice = em.i32(-1)
            key = [em.to_i64(w) for w in site.key]
            for sample, index in list(group.keys.items()):
                if len(sample) != len(key):
                    continue
                stored = em.value(util.GlobalLoadOp(self.choice_global(group, index), i32))
                same = em.all_of(
                    [em.cmp("eq", k, em.i64(s)) for k, s in zip(key, sample, strict=True)]
                )
                choice = em.select(same, stored, choice)
        valid = em.cmp("sge", choice, em.i32(0))
        variant = em.select(valid, choice, default)
        return self.chain(em, variant, site, lambda e, v: self.variant_op(site, v))

    def check_call_cycles(self) -> None:
        """Refuse recursion through a group of functions (a variant calling its own group,
        or groups calling each other): `iree-compile` never finishes on recursive calls."""
        groups = {g.op.group_name: g for g in self.groups.values() if g.container_name is None}
        if not groups:
            return
        calls: dict[str, list[str]] = {name: list(g.variants) for name, g in groups.items()}
        call_ops: dict[tuple[str, str], Operation] = {}  # the first call of each edge
        for op in self.module.body.ops:
            name = symbol_name(op)
            if name is None or not interop.is_function(op):
                continue
            callees = calls.setdefault(name, [])
            for inner in op.walk():
                callee = attribute(inner, "callee")
                if op_name(inner) in ("util.call", "func.call") and isinstance(
                    callee, SymbolRefAttr
                ):
                    callees.append(callee.root_reference.data)
                    call_ops.setdefault((name, callee.root_reference.data), inner)
        for start, group in groups.items():
            path = _cycle_from(start, calls)
            if path is not None:
                # At the call that closes the cycle (a group's edges to its variants are
                # no calls).
                closing = call_ops.get((path[-2], path[-1]), group.op)
                raise op_error(
                    closing,
                    f"calls group @{start}, which its own variants reach ("
                    + " -> ".join(f"@{n}" for n in path)
                    + "); recursion through a group cannot be built by iree-compile",
                )

    def run(self) -> None:
        self.collect_groups()
        if not self.groups:
            return
        self.check_call_cycles()
        with symbol_index():  # the IR does not change until the sites are lowered
            sites = self.collect_sites()
            self.check_other_uses({site.op for site in sites})
        self.match_decisions()
        for group in self.groups.values():
            if group.policy in ("explicit", "init"):
                for sample in group.op.sample_workloads():
                    if group.arity is not None and len(sample) != group.arity:
                        raise op_error(
                            group.op,
                            f"sample workloads have {len(sample)} values but the uses of "
                            f"@{group.op.group_name} have {group.arity} (for a group of "
                            "functions: the dynamic dimensions of its tensor arguments)",
                        )
                    group.key_index(tuple(sample))
        for site in sites:
            self.lower_site(site)
        self.tune_function(sites)
        self.init_tuning(sites)
        self.finish()


def _cycle_from(start: str, calls: dict[str, list[str]]) -> list[str] | None:
    """A call path from `start` back to `start`, if there is one (depth first, iterative)."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        name, path = stack.pop()
        for callee in calls.get(name, ()):
            if callee == start:
                return [*path, start]
            if callee not in seen:
                seen.add(callee)
                stack.append((callee, [*path, callee]))
    return None


def _symbol_refs(attr: Attribute) -> Iterator[SymbolRefAttr]:
    """The symbol references in an attribute, nested arrays and dictionaries included."""
    if isinstance(attr, SymbolRefAttr):
        yield attr
    elif isinstance(attr, ArrayAttr):
        for item in attr.data:
            yield from _symbol_refs(item)
    elif isinstance(attr, DictionaryAttr):
        for item in attr.data.values():
            yield from _symbol_refs(item)


def lower_module(
    module: ModuleOp,
    policy: str = "online",
    cache: str | Path | None = None,
    base_dir: str | Path | None = None,
    verify_input: bool = True,
    decisions: list[dict] | None = None,
) -> None:
    """Lower every group of `module` in place (the module must verify).

    `base_dir` is where relative object paths resolve (for the groups' fingerprints).
    `decisions`, when given, are those of `cache` that the `static` choices follow (else
    all of them, read from it). What the lowering creates is verified by IREE when the
    module is printed (`print_module`)."""
    with deep_recursion():
        if verify_input:
            verify_module(module)
        folder = None if base_dir is None else Path(base_dir)
        decisions = load_decisions(cache) if decisions is None else decisions
        Lowering(module, policy, decisions, folder, str(cache)).run()


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a module is parsed, lowered and printed.

    IR is a graph of reference cycles (ops, blocks and regions point at their parents) that
    stays alive until the end, so every full collection meanwhile walks an ever larger heap
    and frees nothing: 9 of them took 3 s of 36 s at 1000 groups (docs/benchmarks.md, B1).
    Reference counting still frees everything else at once; cycles dropped meanwhile are
    collected by the first collection after the pause.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def lower_to_iree(
    text: str,
    policy: str = "online",
    cache: str | Path | None = None,
    filename: str = "<input>",
    target: str | None = None,
    locations: bool = True,
) -> str:
    """Parse, lower and print: autotune IR in, IREE input IR out. With a `target`, also
    check that every executable can be built for it (`lowering.target_checks`). With
    `locations` (the default) every op names its place in the input (`loc(...)`), so that
    `iree-compile` reports errors in the user's file."""
    with cyclic_gc_paused(), deep_recursion():
        module = parse_module(text, filename, keep_plain_executables=True)
        if target is not None:
            check_buildable(module, target, text)
        base_dir = Path(filename).parent if filename != "<input>" else None
        try:
            lower_module(module, policy, cache, base_dir, verify_input=False)  # parse verified
        except DiagnosticError as err:
            if err.location is not None and err.source is None:
                err.source = text  # show the source line under the message, as parse errors do
            raise
        return iree_text(module, locations=locations, source=text)


@dataclass(frozen=True)
class AutotuneToIREEPass(ModulePass):
    """Lower `autotune.group`s and their dispatches to IREE input IR."""

    name = "autotune-to-iree"

    policy: str = "online"
    """Policy of groups that name none: online, explicit, init or static."""
    cache: str | None = None
    """Tuning-cache export (JSON) whose decisions fix the `static` choice."""
    base_dir: str | None = None
    """Folder that relative object paths resolve against (default: the working folder)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Lower `op`. A bad option or input is xDSL's `PassFailedException` holding the
        located message: `xdsl-opt` prints it alone with `--verify-diagnostics`, and after
        a Python traceback without (docs/interop.md)."""
        try:
            lower_module(op, self.policy, self.cache, self.base_dir)
        except DiagnosticError as err:
            raise PassFailedException(err.render()) from None


__all__ = ["AutotuneToIREEPass", "lower_module", "lower_to_iree"]
