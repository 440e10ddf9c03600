"""A group being lowered and the sites (dispatches and calls) that use it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    NameLoc,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue

from autotune_bridge.generic_text import generic_text
from autotune_contracts import interface
from autotune_contracts.policy import Policy
from autotune_dialect import flow, interop
from autotune_dialect.autotune import GroupOp
from autotune_dialect.diagnostics import op_error
from autotune_dialect.interop import attribute, op_name
from autotune_dialect.verbatim import VerbatimOp


@dataclass(frozen=True)
class ObjectFolders:
    """The folders where relative object paths resolve, in order: the input's folder, then
    the search folders given (`--object-search-path`), as iree-compile is told to look."""

    folders: tuple[Path, ...]

    def find(self, path: str) -> Path:
        """`path` in the first folder that has it (else in the first folder)."""
        for folder in self.folders:
            if (folder / path).exists():
                return folder / path
        return self.folders[0] / path

    def __str__(self) -> str:
        return ", then ".join(str(folder) for folder in self.folders)


@dataclass
class Group:
    """A group being lowered, with its state globals and workload keys."""

    op: GroupOp
    gid: int
    container: Operation
    container_name: str | None
    policy: Policy
    variants: list[str]
    arity: int | None = None
    keys: dict[tuple[int, ...], int] = field(default_factory=dict)
    function_kinds: dict[str, str] = field(default_factory=dict)
    """For a group of functions: `util.func` or `func.func`, per variant."""
    _locations: dict[tuple[str, int], NameLoc] = field(default_factory=dict, repr=False)
    _entry_points: dict[str, ArrayAttr] = field(default_factory=dict, repr=False)

    @property
    def display_name(self) -> str:
        """`executable::group`, or `group` for a function group (the runtime's name)."""
        return interface.qualified_group_name(self.container_name, self.op.group_name)

    def fingerprint(self, base_dir: Path | ObjectFolders | None) -> str:
        """Digest of the variant set and what the variants run: their ops, the container's
        kernel modules and external objects (with the files they name, found in `base_dir`,
        the working folder when None). Source locations are left out, so that editing
        elsewhere in the file keeps it."""
        if not isinstance(base_dir, ObjectFolders):
            base_dir = ObjectFolders((Path.cwd() if base_dir is None else base_dir,))
        digest = hashlib.sha256()
        siblings = self.op.resolve_variants()
        for name, variant in zip(self.variants, siblings, strict=True):
            digest.update(name.encode() + b"\0" + text_without_locations(variant).encode())
        if self.container_name is not None:
            for module in interop.kernel_modules(self.container):
                digest.update(text_without_locations(module).encode())
            objects = attribute(self.container, "objects")
            if objects is not None:
                text = interop.mlir_text(objects)
                digest.update(text.encode())
                for path in re.findall(r'path = "([^"]+)"', text):
                    try:
                        digest.update(base_dir.find(path).read_bytes())
                    except OSError as err:
                        raise op_error(
                            self.container,
                            f'cannot read object file "{path}" of @{self.container_name} '
                            f"({err.strerror}; relative paths resolve against {base_dir}); "
                            "the tuning cache key includes its bytes",
                        ) from None
        return digest.hexdigest()[:32]

    def location(self, what: str, at: Operation | None = None) -> NameLoc:
        """Where generated code comes from: `what`, of this group, at `at` (a dispatch or
        call of the group) or at the group. `iree-compile` reports its errors there."""
        anchor = (self.op if at is None else at).location
        known = self._locations.get((what, id(anchor)))
        if known is not None and known.location is anchor:
            return known
        made = NameLoc(StringAttr(f"{what} (autotune.group @{self.op.group_name})"), anchor)
        self._locations[(what, id(anchor))] = made  # holds `anchor`: its id stays its own
        return made

    def entry_points(self, variant: str) -> ArrayAttr:
        """`[@container::@variant]`, the entry points of a dispatch of `variant`."""
        entries = self._entry_points.get(variant)
        if entries is None:
            assert self.container_name is not None
            entries = ArrayAttr([SymbolRefAttr(self.container_name, [variant])])
            self._entry_points[variant] = entries
        return entries

    def symbol(self, suffix: str) -> str:
        """The wanted name of a symbol of this group's state (`LoweringState.fresh` makes it
        unique): the group's number keeps groups apart whatever their names."""
        return f"__autotune.g{self.gid}.{self.op.group_name}.{suffix}"

    @property
    def default_index(self) -> int:
        reference = self.op.reference
        if reference is None:
            return 0
        return self.variants.index(reference.root_reference.data)

    @property
    def expected_index(self) -> int | None:
        """The index of the variant the group is expected to settle on (`expected`)."""
        expected = self.op.expected
        return None if expected is None else self.variants.index(expected.root_reference.data)

    def key_index(self, key: tuple[int, ...]) -> int:
        return self.keys.setdefault(key, len(self.keys))


@dataclass
class Site:
    """A dispatch or call (`util.call` or `func.call`) of a group."""

    op: Operation
    group: Group
    key: list[SSAValue]
    static_key: tuple[int, ...] | None


def constant_int(value: SSAValue, known: dict[SSAValue, int] | None = None) -> int | None:
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
        return constant_int(owner.operands[0], known)
    return None


_LOCATION = re.compile(r'\s*loc\((?:[^()"]|"(?:[^"\\]|\\.)*"|\((?:[^()"]|"(?:[^"\\]|\\.)*")*\))*\)')


def generated_location(name: str, group: Group) -> NameLoc:
    """The location of a module-level function the lowering makes for several groups:
    its name, at the first group's place."""
    return NameLoc(StringAttr(f"@{name}"), group.op.location)


def results_unused(op: Operation) -> bool:
    """Whether `op` has results and nothing reads any of them."""
    return bool(op.results) and not any(r.uses for r in op.results)


def text_without_locations(op: Operation) -> str:
    """An op's text with no source locations (for digests that survive unrelated edits)."""
    if isinstance(op, VerbatimOp):
        return _LOCATION.sub("", op.text.data)
    return generic_text(op, locations=False)


def in_initializer(op: Operation) -> bool:
    """Whether `op` runs in a `util.initializer`: there, when the module loads, an online
    group runs its stored choice or reference (IREE 3.13 cannot build the exploration's
    calls and validation there), like an explicit one."""
    parent = op.parent_op()
    while parent is not None:
        if op_name(parent) == "util.initializer":
            return True
        parent = parent.parent_op()
    return False


def split_by_rank(types: Sequence[Attribute], dims: list[SSAValue]) -> list[list[SSAValue]]:
    out, pos = [], 0
    for type_ in types:
        n = flow.dynamic_rank(type_)
        out.append(dims[pos : pos + n])
        pos += n
    return out
