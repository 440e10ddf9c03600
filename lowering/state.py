"""The state of one run of the lowering over a module, passed to every step of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.ir import Attribute, Operation, SSAValue

from autotune_contracts import interface
from autotune_contracts.policy import Policy
from autotune_dialect import util
from autotune_dialect.autotune import GroupOp
from autotune_dialect.interop import symbol_name
from lowering.committed import ChoiceTable, CommittedChoice
from lowering.emitter import Emitter
from lowering.groups import Group, ObjectFolders


@dataclass
class LoweringState:
    """What the lowering of a module knows and has made so far: its groups, and the
    module-level ops (host imports, state globals, functions) it adds at the end."""

    module: ModuleOp
    default_policy: Policy
    base_dir: Path | ObjectFolders | None = None
    """Where relative object paths resolve (for the groups' fingerprints)."""
    static_decisions: dict[int, list[dict]] = field(default_factory=dict)
    """The tuning cache's decisions for each group (by gid) that `static` choices follow."""
    device_drivers: list[str] | None = None
    """With several devices' decisions kept (`--device all`): the driver of each device of
    the table the module chooses from at load (`lowering.device_table`); else None."""
    groups: dict[GroupOp, Group] = field(default_factory=dict)
    imports: dict[str, interface.ImportSignature] = field(default_factory=dict)
    import_locations: dict[str, Attribute | None] = field(default_factory=dict)
    """The location of each import's first caller."""
    globals: dict[tuple[int, str], util.GlobalOp] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)
    """The module-level symbol names in use."""
    accessors: dict[int, tuple[str, str]] = field(default_factory=dict)
    """The names of each group's (by gid) exported setter and getter."""
    exports: list[Operation] = field(default_factory=list)
    """Functions appended to the module at the end."""
    outlined_functions: int = 0
    """Outlined functions made so far, numbering their names."""
    online_sites: dict[int, int] = field(default_factory=dict)
    """Per group (by gid), the online sites given globals of their own so far."""
    site_choices: dict[Operation, CommittedChoice] = field(default_factory=dict)
    """Per online site lowered (its op), where it reads its committed choices
    (`exploration.committed_choices`: a global, or a table for a dynamic key)."""
    tables: dict[tuple[int, str], ChoiceTable] = field(default_factory=dict)
    """The tables of committed dynamic keys made so far (`choice_table`), by (gid, name);
    each is made by an initializer of its own (`initializers`)."""
    initializers: list[Operation] = field(default_factory=list)
    """The initializers of state globals, added after the globals, before every other
    initializer of the module."""

    @classmethod
    def of(
        cls, module: ModuleOp, default_policy: Policy, base_dir: Path | ObjectFolders | None
    ) -> LoweringState:
        """The state at the start of lowering `module`."""
        taken = {name for op in module.body.ops if (name := symbol_name(op)) is not None}
        return cls(module, default_policy, base_dir, taken=taken)

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

    def site_scope(self, group: Group) -> str:
        """A fresh prefix for the state globals of one site of a group (`s<N>.`)."""
        index = self.online_sites.get(group.gid, 0)
        self.online_sites[group.gid] = index + 1
        return f"s{index}."

    def choice_table(self, group: Group, suffix: str, arity: int) -> ChoiceTable:
        """The table of a group's committed dynamic keys (`committed.ChoiceTable`): a
        global `!util.list<i64>` made at load by an initializer (made on first use)."""
        key = (group.gid, suffix)
        if key not in self.tables:
            name = self.fresh(group.symbol(suffix))
            table_global = util.GlobalOp(name, util.list_type("i64"), None, True)
            table_global.location = group.location(f"@{name}")
            self.globals[key] = table_global
            table = self.tables[key] = ChoiceTable(name, arity)
            initializer = table.initializer()
            initializer.location = table_global.location
            self.initializers.append(initializer)
        return self.tables[key]

    def choice_global(self, group: Group, key_index: int) -> str:
        """The global holding a key's chosen variant, negative until one is chosen."""
        return self.state_global(group, f"k{key_index}.choice", i32)

    def host(
        self, em: Emitter, signature: interface.ImportSignature, args, views=()
    ) -> list[SSAValue]:
        """Call a host import at `em` (declared in the module at the end)."""
        self.imports[signature.name] = signature
        self.import_locations.setdefault(signature.name, em.location)
        return em.host(signature, args, views)
