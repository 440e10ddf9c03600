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
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NameLoc,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i32,
    i64,
)
from xdsl.dialects.linalg.ops import FillOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from autotune_dialect import flow, hal, interop, util
from autotune_dialect.autotune import POLICIES, GroupOp
from autotune_dialect.bridge import iree_text
from autotune_dialect.diagnostics import DiagnosticError, op_error
from autotune_dialect.generic_text import generic_text
from autotune_dialect.interop import attribute, op_name, symbol_name
from autotune_dialect.ir import deep_recursion, parse_module, verify_module
from autotune_dialect.mlir_text import parse_attribute_text
from autotune_dialect.symbols import lookup_symbol, symbol_index
from autotune_dialect.verbatim import VerbatimOp
from autotune_runtime import interface
from autotune_runtime.tuner import key_distance
from lowering.emitter import Emitter, locate_arguments

DEFAULT_INIT_SAMPLES = 3
MAX_INIT_RUNS = 1024
"""Timed runs one `init` group may unroll in `__autotune_init` (lowering time and IR size
grow with them: about 8 ms and 2 KB each)."""


@dataclass
class Group:
    """A group being lowered, with its state globals and workload keys."""

    op: GroupOp
    gid: int
    container: Operation
    container_name: str | None
    policy: str
    variants: list[str]
    arity: int | None = None
    keys: dict[tuple[int, ...], int] = field(default_factory=dict)
    uses_dynamic_cache: bool = False
    function_kinds: dict[str, str] = field(default_factory=dict)
    """For a group of functions: `util.func` or `func.func`, per variant."""

    @property
    def is_export_group(self) -> bool:
        return self.container_name is not None

    @property
    def display_name(self) -> str:
        """`executable::group`, or `group` for a function group (the runtime's name)."""
        if self.container_name is None:
            return self.op.group_name
        return f"{self.container_name}::{self.op.group_name}"

    def fingerprint(self, base_dir: Path | None) -> str:
        """Digest of the variant set and what the variants run: their ops, the container's
        kernel modules and external objects (with the files they name, when found).
        Source locations are left out, so that editing elsewhere in the file keeps it."""
        digest = hashlib.sha256()
        siblings = self.op.resolve_variants()
        for name, variant in zip(self.variants, siblings, strict=True):
            digest.update(name.encode() + b"\0" + _text_without_locations(variant).encode())
        if self.container_name is not None:
            for module in interop.kernel_modules(self.container):
                digest.update(_text_without_locations(module).encode())
            objects = attribute(self.container, "objects")
            if objects is not None:
                text = interop.mlir_text(objects)
                digest.update(text.encode())
                for path in re.findall(r'path = "([^"]+)"', text):
                    file = Path(path) if base_dir is None else base_dir / path
                    try:
                        digest.update(file.read_bytes())
                    except OSError as err:
                        where = base_dir if base_dir is not None else Path.cwd()
                        raise op_error(
                            self.container,
                            f'cannot read object file "{path}" of @{self.container_name} '
                            f"({err.strerror}; relative paths resolve against {where}); the "
                            "tuning cache key includes its bytes",
                        ) from None
        return digest.hexdigest()[:32]

    def location(self, what: str, at: Operation | None = None) -> NameLoc:
        """Where generated code comes from: `what`, of this group, at `at` (a dispatch or
        call of the group) or at the group. `iree-compile` reports its errors there."""
        anchor = self.op if at is None else at
        return NameLoc(
            StringAttr(f"{what} (autotune.group @{self.op.group_name})"), anchor.location
        )

    def symbol(self, suffix: str) -> str:
        """The wanted name of a symbol of this group's state (`Lowering.fresh` makes it
        unique): the group's number keeps groups apart whatever their names."""
        return f"__autotune.g{self.gid}.{self.op.group_name}.{suffix}"

    @property
    def default_index(self) -> int:
        reference = self.op.reference
        if reference is None:
            return 0
        return self.variants.index(reference.root_reference.data)

    def key_index(self, key: tuple[int, ...]) -> int:
        return self.keys.setdefault(key, len(self.keys))


@dataclass
class Site:
    """A dispatch or call (`util.call` or `func.call`) of a group."""

    op: Operation
    group: Group
    key: list[SSAValue]
    static_key: tuple[int, ...] | None


def _constant_int(value: SSAValue, known: dict[SSAValue, int] | None = None) -> int | None:
    """The integer `value` holds: a constant, a `known` value, or a cast of either."""
    if known and value in known:
        return known[value]
    owner = value.owner
    if not isinstance(owner, Operation):
        return None
    name = op_name(owner)
    if name == "arith.constant":
        constant = attribute(owner, "value")
        return constant.value.data if isinstance(constant, IntegerAttr) else None
    if name in ("arith.index_cast", "arith.index_castui") and len(owner.operands) == 1:
        return _constant_int(owner.operands[0], known)
    return None


class Lowering:
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
        constants = [_constant_int(w) for w in workload]
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
            new = flow.DispatchOp(
                SymbolRefAttr(site.group.container_name, [variant]),  # type: ignore[arg-type]
                op.workload if workload is None else workload,
                op.arguments if arguments is None else arguments,
                op.argument_dims if argument_dims is None else argument_dims,
                [r.type for r in op.outputs],
                op.result_dims if result_dims is None else result_dims,
                op.tied_operand_indices(),
            )
            new.attributes.update(op.attributes)
            new.location = site.group.location(f"variant @{variant}", op)
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

    def state_global(self, group: Group, suffix: str, type_: Attribute, initial: int) -> str:
        """A mutable global of a group's state (made on first use); its name."""
        key = (group.gid, suffix)
        if key not in self.globals:
            name = self.fresh(group.symbol(suffix))
            self.globals[key] = util.GlobalOp(name, type_, IntegerAttr(initial, type_), True)
            self.globals[key].location = group.location(f"@{name}")
        return self.globals[key].sym_name.data

    def choice_global(self, group: Group, key_index: int) -> str:
        """The global holding a key's chosen variant, -1 until one is chosen."""
        return self.state_global(group, f"k{key_index}.choice", i32, -1)

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
        elif policy == "online" and not _in_initializer(op) and not _results_unused(op):
            results = self.tie_shapes(em, site, self.lower_online(em, site))
        elif policy == "online" and not _in_initializer(op):
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
                raise op_error(
                    group.op,
                    f"decision #{index} of {self.decisions_from} chooses "
                    f"@{decision['variant']}, which is not a variant of the group ("
                    + ", ".join(f"@{v}" for v in group.variants)
                    + ")",
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

    def lower_online(self, em: Emitter, site: Site) -> list[SSAValue]:
        """A committed key runs its variant through the chain, as `explicit` does; every
        other call goes to the site's exploration function, out of line, so that the
        committed path has nothing of exploration in it (no host call, no fence, no
        branch that splits IREE's stream of dispatches)."""
        group = site.group
        arity = len(site.key)
        key = [em.to_i64(w) for w in site.key]
        zero = em.i32(0)
        if site.static_key is not None:
            choice_name = self.choice_global(group, group.key_index(site.static_key))
            key_names: list[str] = []
            choice = em.value(util.GlobalLoadOp(choice_name, i32))
            hit = em.cmp("sge", choice, zero)
        else:
            group.uses_dynamic_cache = True
            choice_name = self.state_global(group, "dyn.choice", i32, -1)
            key_names = [self.state_global(group, f"dyn.w{i}", i64, 0) for i in range(arity)]
            choice = em.value(util.GlobalLoadOp(choice_name, i32))
            conditions = [em.cmp("sge", choice, zero)]
            for name, value in zip(key_names, key, strict=True):
                cached = em.value(util.GlobalLoadOp(name, i64))
                conditions.append(em.cmp("eq", cached, value))
            hit = em.all_of(conditions)
        types = [r.type for r in site.op.results]

        def committed(e: Emitter) -> list[SSAValue]:
            return self.chain(e, choice, site, lambda c, v: self.variant_op(site, v))

        def exploring(e: Emitter) -> list[SSAValue]:
            callee = self.exploration_function(site, arity, choice_name, key_names)
            return e.call(callee, [*key, *site.op.operands], types)

        return em.if_(hit, types, committed, exploring)

    def lower_unexplored(self, em: Emitter, site: Site) -> list[SSAValue]:
        """An online site whose results nothing reads runs the key's committed variant, or
        the reference before the commit, and never explores: `iree-compile` cannot build a
        call of an outlined exploration function whose results it drops, and timing or
        checking results nobody reads tells nothing."""
        group = site.group
        zero = em.i32(0)
        if site.static_key is not None:
            name = self.choice_global(group, group.key_index(site.static_key))
            choice = em.value(util.GlobalLoadOp(name, i32))
            committed = em.cmp("sge", choice, zero)
        else:
            group.uses_dynamic_cache = True
            choice = em.value(
                util.GlobalLoadOp(self.state_global(group, "dyn.choice", i32, -1), i32)
            )
            conditions = [em.cmp("sge", choice, zero)]
            for i, value in enumerate(em.to_i64(w) for w in site.key):
                cached = em.value(
                    util.GlobalLoadOp(self.state_global(group, f"dyn.w{i}", i64, 0), i64)
                )
                conditions.append(em.cmp("eq", cached, value))
            committed = em.all_of(conditions)
        variant = em.select(committed, choice, em.i32(group.default_index))
        return self.chain(em, variant, site, lambda e, v: self.variant_op(site, v))

    def exploration_function(
        self, site: Site, arity: int, choice_name: str, key_names: list[str]
    ) -> str:
        """`util.func` (never inlined) taking a site's key and operands: it asks the host
        which variant to run, times it, checks its results against the reference's while
        it is unvalidated, and stores the choice once the host commits one."""

        def body(em: Emitter, inner: Site, leading: list[SSAValue], _) -> list[SSAValue]:
            results = self.explore(em, inner, leading, choice_name, key_names)
            return self.tie_shapes(em, inner, results)

        return self.outlined_function(site, "explore", [i64] * arity, [], body)

    def outlined_function(
        self,
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
        name = self.fresh(group.symbol(f"{what}{self.outlined_functions}"))
        self.outlined_functions += 1
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
        self.exports.append(fn)
        return name

    def explore(
        self, em: Emitter, site: Site, key: list[SSAValue], choice_name: str, key_names: list[str]
    ) -> list[SSAValue]:
        group = site.group
        arity = len(key)
        gid = em.i64(group.gid)
        i1 = IntegerType(1)
        variant, committed, check = self.host(em, interface.select(arity), [gid, *key])
        done = em.cmp("ne", committed, em.i32(0))

        def commit(c: Emitter) -> list[SSAValue]:
            c.add(util.GlobalStoreOp(variant, choice_name))
            for name, value in zip(key_names, key if key_names else [], strict=True):
                c.add(util.GlobalStoreOp(value, name))
            return []

        em.if_(done, [], commit)
        explore = em.value(arith.XOrIOp(done, em.const(1, i1)))
        validate = em.value(arith.AndIOp(explore, em.cmp("ne", check, em.i32(0))))
        tensors = [a for a in site.op.operands if isinstance(a.type, TensorType)]
        types = [r.type for r in site.op.results]

        def start_clock(e: Emitter) -> list[SSAValue]:
            e.wait_for(tensors)
            return self.host(e, interface.now_ns(), [])

        (t0,) = em.if_(explore, [i64], start_clock, lambda e: [e.i64(0)])
        results = self.chain(em, variant, site, lambda c, v: self.variant_op(site, v))

        def stop_clock(e: Emitter) -> list[SSAValue]:
            e.wait_for([r for r in results if isinstance(r.type, TensorType)])
            (t1,) = self.host(e, interface.now_ns(), [])
            elapsed = e.value(arith.SubiOp(t1, t0))
            self.host(e, interface.record(arity), [gid, variant, elapsed, *key])
            return []

        em.if_(explore, [], stop_clock)
        if any(t >= 0 for t in self.tied(site)) or not self.result_tensors(site):
            return results  # in-place or tensor-less: the explored run is the only run

        # While a variant is unvalidated (always while exploring), its result is checked
        # against the reference's on the same inputs, and the caller gets the reference's.
        def with_reference(e: Emitter) -> list[SSAValue]:
            callee = self.validation_function(site, arity)
            return e.call(callee, [variant, *key, *site.op.operands, *results], types)

        def unchanged(e: Emitter) -> list[SSAValue]:
            # Yielding `results` as they are would keep one result buffer alive per call
            # (measured); through a barrier they are released. The barrier hides dynamic
            # dimensions, so they are tied again.
            dims = [e.dynamic_dims(r) if isinstance(r.type, TensorType) else [] for r in results]
            kept = e.add(util.OptimizationBarrierOp(results)).results
            return [
                e.value(flow.TensorTieShapeOp(k, d)) if d else k
                for k, d in zip(kept, dims, strict=True)
            ]

        return em.if_(validate, types, with_reference, unchanged)

    def validation_function(self, site: Site, arity: int) -> str:
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
            expected = list(em.add(self.variant_op(inner, reference)).results)
            self.compare_results(em, inner, variant, results, expected, key, gid)
            return expected

        return self.outlined_function(site, "validate", [i32, *([i64] * arity)], types, body)

    def tied(self, site: Site) -> list[int]:
        if isinstance(site.op, flow.DispatchOp):
            return site.op.tied_operand_indices()
        return [-1] * len(site.op.results)

    def result_tensors(self, site: Site) -> list[int]:
        return [i for i, r in enumerate(site.op.results) if isinstance(r.type, TensorType)]

    def site_result_dims(self, site: Site) -> list[list[SSAValue]]:
        if isinstance(site.op, flow.DispatchOp):
            return site.op.result_dims_of()
        return [[] for _ in site.op.results]

    def compare_results(self, em: Emitter, site, variant, results, expected, key, gid) -> None:
        dims = self.site_result_dims(site)
        for index in self.result_tensors(site):
            # A dispatch states its results' dynamic dimensions; a function's results carry
            # their own (they may differ between the variant and the reference).
            got = em.view(results[index], dims[index] or em.dynamic_dims(results[index]))
            want = em.view(expected[index], dims[index] or em.dynamic_dims(expected[index]))
            signature = interface.compare(len(key))
            self.host(em, signature, [gid, variant, em.i32(index), *key], [got, want])

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

    # --- tuning on synthetic inputs (explicit and init) -----------------------------

    def synthetic_run(
        self, em: Emitter, site: Site, key: tuple[int, ...]
    ) -> Callable[[Emitter, str], Operation]:
        """Create synthetic inputs for `site` at workload `key`; return a variant maker."""
        known = dict(zip(site.key, key, strict=True))

        def resolve(value: SSAValue, what: str) -> int:
            constant = _constant_int(value, known)
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
                arguments.append(self.synthetic_tensor(em, arg.type, dyn, i))
            else:
                arguments.append(em.const(resolve(arg, f"operand #{i}"), arg.type))
        workload = (
            [em.const(k, IndexType()) for k in key] if isinstance(op, flow.DispatchOp) else None
        )
        result_dims = None
        per_result: list[list[SSAValue]] = [[] for _ in op.results]
        if isinstance(op, flow.DispatchOp):
            result_dims = [
                em.const(resolve(d, "a result dimension"), IndexType()) for d in op.result_dims
            ]
            per_result = _split_by_rank([r.type for r in op.outputs], result_dims)
        elif any(
            isinstance(r.type, TensorType) and any(d < 0 for d in r.type.get_shape())
            for r in op.results
        ):
            raise op_error(
                op,
                f"cannot tune function group @{site.group.op.group_name} on synthetic inputs: "
                "its results have dynamic shapes",
            )
        self._last_result_dims = per_result

        def make(e: Emitter, variant: str) -> Operation:
            return self.variant_op(site, variant, arguments, argument_dims, workload, result_dims)

        self._last_inputs = [a for a in arguments if isinstance(a.type, TensorType)]
        return make

    def synthetic_tensor(
        self, em: Emitter, type_: TensorType, dims: list[SSAValue], seed: int
    ) -> SSAValue:
        element = type_.get_element_type()
        if isinstance(element, IntegerType):
            fill = em.value(arith.ConstantOp(IntegerAttr(seed % 7 + 1, element)))
        else:
            fill = em.value(arith.ConstantOp(FloatAttr(0.5 + 0.25 * (seed % 5), element)))
        empty = em.value(tensor.EmptyOp(dims, type_))
        filled = em.value(FillOp([fill], [empty], [type_]))
        return em.add(util.OptimizationBarrierOp([filled])).results[0]

    def groups_with_a_site(self, policy: str, sites: list[Site]) -> list[tuple[Group, Site]]:
        """The groups of `policy` that are used, each with one of its sites (whose operand
        types the synthetic inputs follow)."""
        out = []
        for group in self.groups.values():
            site = next((s for s in sites if s.group is group), None)
            if group.policy == policy and site is not None:
                out.append((group, site))
        return out

    def tune_function(self, sites: list[Site]) -> None:
        """Exported `__autotune`: tune every explicit group's keys until the host commits."""
        tuned = self.groups_with_a_site("explicit", sites)
        if not tuned:
            return
        body = Block()
        for group, site in tuned:
            em = Emitter(body, location=group.location(f"@{interface.TUNE_FUNCTION}"))
            for key, index in list(group.keys.items()):
                self.tune_key_until_committed(em, site, key, index)
        name = self.fresh(interface.TUNE_FUNCTION)
        Emitter(body, location=generated_location(name, tuned[0][0])).add(util.ReturnOp())
        fn = util.FuncOp(name, ([], []), Region(body), "public")
        fn.location = generated_location(name, tuned[0][0])
        fn.attributes["iree.reflection"] = DictionaryAttr(
            {interface.ENTRY_KEY: StringAttr(interface.TUNE_ENTRY)}
        )
        self.exports.append(fn)
        for group, _ in tuned:
            self.setter_getter(group)

    def tune_key_until_committed(self, em: Emitter, site: Site, key, index: int) -> None:
        group = site.group
        before = Block()
        b = Emitter(before)
        gid = b.i64(group.gid)
        key_values = [b.i64(k) for k in key]
        variant, committed, _ = self.host(b, interface.select(len(key)), [gid, *key_values])
        unsettled = b.cmp("eq", committed, b.i32(0))
        before.add_op(scf.ConditionOp(unsettled, variant))
        after = Block(arg_types=[i32])
        a = Emitter(after)
        make = self.synthetic_run(a, site, key)
        inputs = self._last_inputs
        self.timed(a, site, after.args[0], make, inputs, key)
        after.add_op(scf.YieldOp())
        loop = em.add(scf.WhileOp([], [i32], Region(before), Region(after)))
        em.add(util.GlobalStoreOp(loop.results[0], self.choice_global(group, index)))

    def timed(self, em: Emitter, site: Site, variant: SSAValue, make, inputs, key) -> None:
        group = site.group
        em.wait_for(inputs)
        (t0,) = self.host(em, interface.now_ns(), [])
        if isinstance(variant, str):
            results = list(em.add(make(em, variant)).results)
            variant_index = em.i32(group.variants.index(variant))
        else:
            results = self.chain(em, variant, site, make)
            variant_index = variant
        em.wait_for([r for r in results if isinstance(r.type, TensorType)])
        (t1,) = self.host(em, interface.now_ns(), [])
        elapsed = em.value(arith.SubiOp(t1, t0))
        key_values = [em.i64(k) for k in key]
        gid = em.i64(group.gid)
        self.host(em, interface.record(len(key)), [gid, variant_index, elapsed, *key_values])
        dims = self._last_result_dims
        for index in self.result_tensors(site):
            view = em.view(results[index], dims[index])
            self.host(
                em,
                interface.check(len(key)),
                [gid, variant_index, em.i32(index), *key_values],
                [view],
            )

    def init_tuning(self, sites: list[Site]) -> None:
        """Exported `__autotune_init`, which the runtime calls at load: every init group's
        keys measured on synthetic inputs, unrolled.

        Not a `util.initializer`: IREE 3.13 crashes (OutlineMemoizeRegions) on an
        initializer with dispatches under an `scf.if`, and the runs must be skipped when
        the tuning cache has the decision."""
        tuned = self.groups_with_a_site("init", sites)
        if not tuned:
            return
        body = Block()
        for group, site in tuned:
            em = Emitter(body, location=group.location(f"@{interface.INIT_FUNCTION}"))
            samples = group.op.int_param("min_samples") or DEFAULT_INIT_SAMPLES
            runs = samples * len(group.variants) * len(group.keys)
            if runs > MAX_INIT_RUNS:
                raise op_error(
                    group.op,
                    f'policy "init" unrolls {runs} timed runs in {interface.INIT_FUNCTION} '
                    f"({samples} min_samples x {len(group.variants)} variants x "
                    f"{len(group.keys)} workloads); at most {MAX_INIT_RUNS} are supported",
                )
            for key, index in list(group.keys.items()):
                choice = self.init_choice(em, site, key, samples)
                em.add(util.GlobalStoreOp(choice, self.choice_global(group, index)))
        name = self.fresh(interface.INIT_FUNCTION)
        Emitter(body, location=generated_location(name, tuned[0][0])).add(util.ReturnOp())
        fn = util.FuncOp(name, ([], []), Region(body), "public")
        fn.location = generated_location(name, tuned[0][0])
        fn.attributes["iree.reflection"] = DictionaryAttr(
            {interface.ENTRY_KEY: StringAttr(interface.INIT_ENTRY)}
        )
        self.exports.append(fn)

    def init_choice(self, em: Emitter, site: Site, key: tuple[int, ...], samples: int):
        """The choice for one key at load: the committed one (tuning cache) when there is
        one, else `samples` timed runs of every variant on synthetic inputs and `decide`."""
        group = site.group

        def key_args(b: Emitter) -> list[SSAValue]:
            return [b.i64(group.gid), *[b.i64(k) for k in key]]

        def measure(b: Emitter) -> list[SSAValue]:
            for variant in group.variants:
                for _ in range(samples):
                    make = self.synthetic_run(b, site, key)
                    self.timed(b, site, variant, make, self._last_inputs, key)
            return self.host(b, interface.decide(len(key)), key_args(b))

        (known,) = self.host(em, interface.decided(len(key)), key_args(em))
        unknown = em.cmp("slt", known, em.i32(0))
        (choice,) = em.if_(unknown, [i32], measure, lambda b: [known])
        return choice

    def setter_getter(self, group: Group) -> None:
        suffix = group.display_name.replace("::", "_")
        setter_name = self.fresh(f"__autotune_set_{suffix}")
        getter_name = self.fresh(f"__autotune_get_{suffix}")
        self.accessors[group.gid] = (setter_name, getter_name)
        names = [self.choice_global(group, i) for i in group.keys.values()]
        setter = Block(arg_types=[i32])
        em = Emitter(setter, location=group.location(f"@{setter_name}"))
        locate_arguments(setter, em.location)
        for name in names:
            em.add(util.GlobalStoreOp(setter.args[0], name))
        em.add(util.ReturnOp())
        fn = util.FuncOp(setter_name, ([i32], []), Region(setter), "public")
        fn.location = em.location
        self.exports.append(fn)
        getter = Block()
        em = Emitter(getter, location=group.location(f"@{getter_name}"))
        value = em.value(util.GlobalLoadOp(names[0], i32)) if names else em.i32(-1)
        em.add(util.ReturnOp([value]))
        fn = util.FuncOp(getter_name, ([], [i32]), Region(getter), "public")
        fn.location = em.location
        self.exports.append(fn)

    # --- module-level output ----------------------------------------------------------

    def metadata(self) -> list[dict]:
        entries = []
        for group in self.groups.values():
            op = group.op
            params = {
                k: op.properties[k]
                for k in (
                    "warmup",
                    "min_samples",
                    "max_samples",
                    "confidence",
                    "tolerance",
                    "warm_start",
                )
                if k in op.properties
            }
            entry = {
                "id": group.gid,
                "name": op.group_name,
                "fingerprint": group.fingerprint(self.base_dir),
                "container": group.container_name,
                "variants": group.variants,
                "reference": group.default_index,
                "policy": group.policy,
                "workload_arity": group.arity or 0,
                "keys": [list(k) for k in group.keys],
                "params": {k: v.value.data for k, v in params.items()},  # type: ignore
            }
            if group.gid in self.accessors:
                entry["setter"], entry["getter"] = self.accessors[group.gid]
            entries.append(entry)
        return entries

    def check_import_name(self, name: str) -> None:
        """Host imports keep their names (the VM binds `@autotune.NAME` to the function
        NAME of the host module): a symbol of the user's with such a name is an error."""
        for op in self.module.body.ops:
            if symbol_name(op) == name and not isinstance(op, GroupOp):
                raise op_error(
                    op,
                    f"@{name} is the name of a function of the `{interface.HOST_MODULE}` host "
                    "module, which the lowered module imports; rename this symbol",
                )

    def finish(self) -> None:
        body = self.module.body.block
        first = body.first_op
        new_ops: list[Operation] = []
        for name, signature in sorted(self.imports.items()):
            self.check_import_name(f"{interface.HOST_MODULE}.{name}")
            declaration = util.FuncOp.declaration(
                f"{interface.HOST_MODULE}.{name}",
                [i64] * signature.num_args + [hal.buffer_view_type()] * signature.num_views,
                [{"i": i32, "I": i64}[k] for k in signature.results],
            )
            first_use = self.import_locations.get(name)
            if first_use is not None:
                while isinstance(first_use, NameLoc):
                    first_use = first_use.location
                declaration.location = NameLoc(
                    StringAttr(f"host import @{interface.HOST_MODULE}.{name}"), first_use
                )
            new_ops.append(declaration)
        new_ops += self.globals.values()
        if any(g.policy != "static" for g in self.groups.values()):
            name = self.fresh(interface.METADATA_FUNCTION)
            meta = util.FuncOp(name, ([], []), None, "public")
            meta.location = generated_location(name, next(iter(self.groups.values())))
            Emitter(meta.body.block, location=meta.location).add(util.ReturnOp())
            meta.attributes["iree.reflection"] = DictionaryAttr(
                {interface.METADATA_KEY: StringAttr(json.dumps(self.metadata()))}
            )
            new_ops.append(meta)
        for op in new_ops:
            if first is None:
                body.add_op(op)
            else:
                body.insert_op_before(op, first)
        for op in self.exports:
            body.add_op(op)
        for group in self.groups:
            group.detach()
            group.erase()

    def check_call_cycles(self) -> None:
        """Refuse recursion through a group of functions (a variant calling its own group,
        or groups calling each other): `iree-compile` never finishes on recursive calls."""
        groups = {g.op.group_name: g for g in self.groups.values() if g.container_name is None}
        if not groups:
            return
        calls: dict[str, list[str]] = {name: list(g.variants) for name, g in groups.items()}
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
        for start, group in groups.items():
            path = _cycle_from(start, calls)
            if path is not None:
                raise op_error(
                    group.op,
                    "is called by its own variants (" + " -> ".join(f"@{n}" for n in path) + "); "
                    "recursion through a group cannot be built by iree-compile",
                )

    def run(self) -> None:
        self.collect_groups()
        if not self.groups:
            return
        self.check_call_cycles()
        with symbol_index():
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


_LOCATION = re.compile(r'\s*loc\((?:[^()"]|"(?:[^"\\]|\\.)*"|\((?:[^()"]|"(?:[^"\\]|\\.)*")*\))*\)')


def generated_location(name: str, group: Group) -> NameLoc:
    """The location of a module-level function the lowering makes for several groups:
    its name, at the first group's place."""
    return NameLoc(StringAttr(f"@{name}"), group.op.location)


def _results_unused(op: Operation) -> bool:
    """Whether `op` has results and nothing reads any of them."""
    return bool(op.results) and not any(r.uses for r in op.results)


def _text_without_locations(op: Operation) -> str:
    """An op's text with no source locations (for digests that survive unrelated edits)."""
    if isinstance(op, VerbatimOp):
        return _LOCATION.sub("", op.text.data)
    return generic_text(op, locations=False)


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


def _in_initializer(op: Operation) -> bool:
    """Whether `op` runs in a `util.initializer`: there, when the module loads, an online
    group runs its stored choice or reference (IREE 3.13 cannot build the exploration's
    calls and validation there), like an explicit one."""
    parent = op.parent_op()
    while parent is not None:
        if op_name(parent) == "util.initializer":
            return True
        parent = parent.parent_op()
    return False


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


def _split_by_rank(types: Sequence[Attribute], dims: list[SSAValue]) -> list[list[SSAValue]]:
    out, pos = [], 0
    for type_ in types:
        n = flow.dynamic_rank(type_)
        out.append(dims[pos : pos + n])
        pos += n
    return out


def load_decisions(path: str | Path | None) -> list[dict]:
    """Decisions from a tuning-cache export (`{"decisions": [...]}`, what `iree-autotune
    cache export` writes) or from a tuning cache file itself (told apart by content), or
    none. Every decision needs `group` and `variant` (names) and a `workload` (integers);
    a malformed one is an error naming the file and the decision."""
    if path is None:
        return []
    from autotune_runtime.cache import NotACacheError, TuningCache, is_sqlite_file

    if is_sqlite_file(Path(path)):
        try:
            cache = TuningCache(path)
        except NotACacheError as err:
            raise DiagnosticError(str(err)) from None
        try:
            return cache.export()["decisions"]
        finally:
            cache.close()
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise DiagnosticError(f"cannot read tuning cache file {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise DiagnosticError(
            f"tuning cache file {path} is not UTF-8 text (byte {err.start}); expected the JSON "
            "that `iree-autotune cache export` writes"
        ) from None
    except json.JSONDecodeError as err:
        raise DiagnosticError(f"tuning cache file {path} is not JSON ({err})") from None
    decisions = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(decisions, list):
        raise DiagnosticError(f"tuning cache file {path} has no 'decisions' list")
    for index, decision in enumerate(decisions):
        problem = _decision_problem(decision)
        if problem is not None:
            raise DiagnosticError(f"{path}: decision #{index} {problem}")
    return decisions


def _decision_problem(decision: object) -> str | None:
    if not isinstance(decision, dict):
        return "is not an object"
    for key in ("group", "variant"):
        if not isinstance(decision.get(key), str) or not decision[key]:
            return f'has no "{key}" name'
    workload = decision.get("workload")
    if not isinstance(workload, list) or not all(
        isinstance(w, int) and not isinstance(w, bool) for w in workload
    ):
        return 'needs a "workload" list of integers'
    return None


def lower_module(
    module: ModuleOp,
    policy: str = "online",
    cache: str | Path | None = None,
    base_dir: str | Path | None = None,
    verify_input: bool = True,
) -> None:
    """Lower every group of `module` in place (the module must verify).

    `base_dir` is where relative object paths resolve (for the groups' fingerprints). What
    the lowering creates is verified by IREE when the module is printed (`print_module`)."""
    with deep_recursion():
        if verify_input:
            verify_module(module)
        folder = None if base_dir is None else Path(base_dir)
        decisions = load_decisions(cache)
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


def check_object_targets(module: ModuleOp, target: str, source: str | None = None) -> None:
    """Fail at its location on a `hal.executable.source` that has no kernel module and
    objects for other targets only: it cannot be built for `target` (for llvm-cpu,
    `iree-compile` crashes on it instead of saying so)."""
    for op in module.body.ops:
        if op_name(op) != "hal.executable.source" or interop.kernel_modules(op):
            continue
        objects = attribute(op, "objects")
        if objects is None:
            continue
        backends = sorted(set(_OBJECT_TARGET.findall(interop.mlir_text(objects))))
        if backends and target not in backends:
            raise op_error(
                op,
                f"has kernel objects for {', '.join(backends)} only; it cannot be compiled "
                f"for {target}",
                source,
            )


_OBJECT_TARGET = re.compile(r'#hal\.executable\.target<"([^"]+)"')


def lower_to_iree(
    text: str,
    policy: str = "online",
    cache: str | Path | None = None,
    filename: str = "<input>",
    target: str | None = None,
    locations: bool = True,
) -> str:
    """Parse, lower and print: autotune IR in, IREE input IR out. With a `target`, also
    check that every executable can be built for it (`check_object_targets`). With
    `locations` (the default) every op names its place in the input (`loc(...)`), so that
    `iree-compile` reports errors in the user's file."""
    with cyclic_gc_paused(), deep_recursion():
        module = parse_module(text, filename)
        if target is not None:
            check_object_targets(module, target, text)
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
        lower_module(op, self.policy, self.cache, self.base_dir)


__all__ = ["AutotuneToIREEPass", "lower_module", "lower_to_iree"]
