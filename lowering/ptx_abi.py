"""Adapt Triton's PTX kernels to IREE's CUDA external-kernel ABI (pure text; no triton).

IREE launches an external CUDA kernel with its binding pointers first (the dispatch's tensor
operands in order, then its results) as u64 parameters, then every i32 operand as a u32 push
constant; the kernel name is the export's name. Triton's `.entry` takes its non-constexpr
arguments in Python order, then two hidden u64 pointers (global and profile scratch). So
each kernel is adapted by:

1. refusing it when it needs scratch memory (its metadata's scratch sizes, or a body that
   reads a scratch parameter): IREE has no way to pass a scratch buffer;
2. deleting the two scratch parameters;
3. renaming the entry to a unique export name, and its parameters to `<entry>_param_<arg>`;
4. moving the pointers first: read-only pointers, then written ones (each group in the
   kernel's order), then the scalars in the kernel's order. Which pointers a kernel writes is
   found from the PTX itself, by following the addresses its stores and loads use
   (`lowering/ptx_pointers.py`).

`merge` then joins adapted kernels into one module with one header (`.version`, `.target`,
`.address_size`) and one copy of each shared module-level declaration (`global_smem`).
PTX bodies refer to parameters by name, so reordering the `.param` list is enough. Kernels
are read and written as `lowering/ptx_module.py`'s `PtxModule`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lowering.ptx_module import (
    PtxEntry,
    PtxError,
    PtxModule,
    PtxParam,
    parse_module,
    strip_comments,
)
from lowering.ptx_pointers import PointerAccess, pointer_accesses

SCRATCH_PARAMS = ("global_scratch", "profile_scratch")
"""Triton's hidden trailing `.entry` parameters, in order."""


class ScratchMemoryError(PtxError):
    """A kernel that needs global or profile scratch memory, which IREE cannot provide."""


# --- adapting one kernel ---------------------------------------------------------------


@dataclass(frozen=True)
class AdaptedParam:
    """A parameter of an adapted entry: the kernel's argument, its new name and role."""

    arg: str  # the kernel's argument name (Triton's Python name)
    name: str  # the PTX parameter name after renaming
    role: str  # "input" (read-only binding), "output" (written binding) or "scalar"
    original_index: int  # position in Triton's .entry


@dataclass(frozen=True)
class AdaptedKernel:
    """One kernel in IREE's ABI: its entry (renamed, reordered, no scratch) and its module."""

    entry: PtxEntry
    module: PtxModule  # the source module with only this entry, adapted
    params: tuple[AdaptedParam, ...]
    accesses: dict[str, PointerAccess] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def inputs(self) -> list[str]:
        return [p.arg for p in self.params if p.role == "input"]

    @property
    def outputs(self) -> list[str]:
        return [p.arg for p in self.params if p.role == "output"]

    @property
    def scalars(self) -> list[str]:
        return [p.arg for p in self.params if p.role == "scalar"]

    @property
    def block_size(self) -> tuple[int, int, int] | None:
        return self.entry.reqntid


def _rename(text: str, mapping: dict[str, str]) -> str:
    if not mapping:
        return text
    pattern = re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, mapping)) + r")(?![\w$])")
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def adapt_kernel(
    ptx: str,
    name: str,
    arg_names: Sequence[str],
    *,
    pointers: Iterable[str] | None = None,
    outputs: Iterable[str] | None = None,
    global_scratch_size: int = 0,
    profile_scratch_size: int = 0,
    scratch_params: int = len(SCRATCH_PARAMS),
    entry_name: str | None = None,
) -> AdaptedKernel:
    """Adapt the one `.entry` of a Triton PTX module to IREE's CUDA ABI.

    `arg_names`: the kernel's non-constexpr arguments in order (the `.entry`'s parameters
    before the hidden scratch pointers). `pointers`: which of them are pointers (default:
    the parameters declared `.ptr`). `outputs`: the pointers the kernel writes, when the
    user declares them; the PTX must then write no other pointer. Without it, the PTX's
    stores decide. `name`: the new entry name; `entry_name`: the entry to take (default: the
    only one). Raises `ScratchMemoryError` for kernels that need scratch memory.
    """
    module = parse_module(ptx)
    entry = module.entry(entry_name)
    _refuse_scratch_sizes(entry, global_scratch_size, profile_scratch_size)
    by_arg = _argument_params(entry, arg_names, scratch_params)
    pointer_args = _pointer_args(entry, by_arg, pointers)
    by_param = {by_arg[a].name: a for a in pointer_args}
    accesses = pointer_accesses(entry, [by_arg[a].name for a in pointer_args])
    accessed = {by_param[n]: acc for n, acc in accesses.items()}
    written = _written_pointers(entry, pointer_args, accessed, outputs)
    order = _param_order(entry, arg_names, by_arg, pointer_args, written)
    return _adapted(module, entry, name, arg_names, by_arg, order, accessed)


def _refuse_scratch_sizes(entry: PtxEntry, global_size: int, profile_size: int) -> None:
    """Raise `ScratchMemoryError` where Triton's metadata gives a scratch size."""
    for key, size in (
        ("global_scratch_size", global_size),
        ("profile_scratch_size", profile_size),
    ):
        if size:
            what = key.removesuffix("_size").replace("_", " ")
            raise ScratchMemoryError(
                f"kernel {entry.name} needs {size} bytes of {what} "
                f"memory (Triton metadata {key} = {size}); IREE's CUDA ABI passes only "
                "bindings and 32-bit push constants, so it cannot provide scratch memory. "
                "Use a config or kernel that needs none (no device-side tensor descriptors, "
                "no profiling instrumentation)."
            )


def _argument_params(
    entry: PtxEntry, arg_names: Sequence[str], scratch_params: int
) -> dict[str, PtxParam]:
    """The `.param` of each argument, once the entry is found to have one per argument
    followed by `scratch_params` 64-bit scratch pointers its body does not read."""
    expected = len(arg_names) + scratch_params
    if len(entry.params) != expected:
        raise PtxError(
            f"kernel {entry.name} has {len(entry.params)} .param entries, expected "
            f"{expected} ({len(arg_names)} arguments + {scratch_params} scratch pointers); "
            "the signature does not match the PTX"
        )
    kept = entry.params[: len(arg_names)]
    scratch = entry.params[len(arg_names) :]
    for p, what in zip(scratch, SCRATCH_PARAMS, strict=False):
        if not p.is_64bit:
            raise PtxError(
                f"kernel {entry.name}: hidden parameter {p.name} is not a 64-bit pointer"
            )
        if re.search(rf"(?<![\w$]){re.escape(p.name)}(?![\w$])", strip_comments(entry.body)):
            raise ScratchMemoryError(
                f"kernel {entry.name} reads its {what.replace('_', ' ')} pointer ({p.name}) "
                "although its metadata asks for no scratch memory; IREE cannot provide it"
            )
    return dict(zip(arg_names, kept, strict=True))


def _pointer_args(
    entry: PtxEntry, by_arg: dict[str, PtxParam], pointers: Iterable[str] | None
) -> list[str]:
    """The pointer arguments: `pointers`, each found to be a 64-bit argument, else the
    arguments declared `.ptr`."""
    if pointers is None:
        return [a for a, p in by_arg.items() if p.is_pointer]
    pointer_args = list(pointers)
    for a in pointer_args:
        if a not in by_arg:
            raise PtxError(f"kernel {entry.name} has no argument '{a}'")
        if not by_arg[a].is_64bit:
            raise PtxError(
                f"kernel {entry.name}: argument '{a}' is a .{by_arg[a].type}, not a pointer"
            )
    return pointer_args


def _written_pointers(
    entry: PtxEntry,
    pointer_args: Sequence[str],
    accessed: dict[str, PointerAccess],
    outputs: Iterable[str] | None,
) -> set[str]:
    """The pointer arguments the kernel writes: `outputs`, found to be pointers and to
    hold every pointer the PTX stores through, else those it stores through. Refused
    where a pointer is both read and written, or none is written."""
    found = {a for a, acc in accessed.items() if acc.written}
    if outputs is None:
        written = found
    else:
        written = set(outputs)
        unknown = written - set(pointer_args)
        if unknown:
            raise PtxError(
                f"kernel {entry.name}: declared output(s) {', '.join(sorted(unknown))} are not "
                "pointer arguments"
            )
        undeclared = found - written
        if undeclared:
            raise PtxError(
                f"kernel {entry.name} stores through {', '.join(sorted(undeclared))}, which is "
                "not declared as an output; it would be bound read-only"
            )
    both = {a for a, acc in accessed.items() if acc.read and acc.written}
    if both:
        raise PtxError(
            f"kernel {entry.name} reads and writes {', '.join(sorted(both))} (in place); "
            "in-place pointers are not supported: IREE binds results after operands"
        )
    if not written:
        raise PtxError(
            f"kernel {entry.name} writes through none of its pointer arguments; declare its outputs"
        )
    return written


def _param_order(
    entry: PtxEntry,
    arg_names: Sequence[str],
    by_arg: dict[str, PtxParam],
    pointer_args: Sequence[str],
    written: set[str],
) -> list[tuple[str, str]]:
    """(argument, role) in IREE's order: read-only pointers, written pointers, then the
    scalars, each found to be 32-bit."""
    order = (
        [(a, "input") for a in arg_names if a in pointer_args and a not in written]
        + [(a, "output") for a in arg_names if a in written]
        + [(a, "scalar") for a in arg_names if a not in pointer_args]
    )
    for a, role in order:
        if role == "scalar" and by_arg[a].type not in ("u32", "s32", "b32"):
            raise PtxError(
                f"kernel {entry.name}: argument '{a}' is a .{by_arg[a].type}; IREE passes only "
                "32-bit push constants"
            )
    return order


def _adapted(
    module: PtxModule,
    entry: PtxEntry,
    name: str,
    arg_names: Sequence[str],
    by_arg: dict[str, PtxParam],
    order: Sequence[tuple[str, str]],
    accessed: dict[str, PointerAccess],
) -> AdaptedKernel:
    """The entry renamed `name`, its parameters `<name>_param_<arg>` in `order`, alone in
    a copy of `module`."""
    index = {a: i for i, a in enumerate(arg_names)}
    mapping = {entry.name: name}
    mapping.update({by_arg[a].name: f"{name}_param_{a}" for a in arg_names})
    params = tuple(
        PtxParam(f"{name}_param_{a}", by_arg[a].type, by_arg[a].qualifiers) for a, _ in order
    )
    body = _rename(entry.body, mapping)
    adapted_entry = PtxEntry(name, params, entry.directives, body, True)
    return AdaptedKernel(
        entry=adapted_entry,
        module=PtxModule(module.version, module.target, 64, module.declarations, (adapted_entry,)),
        params=tuple(AdaptedParam(a, f"{name}_param_{a}", role, index[a]) for a, role in order),
        accesses=accessed,
    )


# --- merging ---------------------------------------------------------------------------


def _declared_name(decl: str) -> str | None:
    """The symbol a module-level declaration defines (`global_smem`, a `.func` name)."""
    if re.search(r"\.func\b", decl):
        head = decl.split("{", 1)[0]
        m = re.search(r"\.func\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", head)
    else:
        m = re.search(r"([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\])*\s*(?:=[^;]*)?;\s*$", decl)
    return m.group(1) if m else None


def merge(kernels: Sequence[AdaptedKernel | PtxModule]) -> PtxModule:
    """One module holding every kernel's entry: one header (the highest `.version`; every
    `.target` must agree) and one copy of each identical module-level declaration. A
    declaration whose name is declared differently by another kernel is renamed in that
    kernel (`<name>_<entry>`)."""
    modules = [k.module if isinstance(k, AdaptedKernel) else k for k in kernels]
    if not modules:
        raise PtxError("nothing to merge")
    targets = {m.target for m in modules}
    if len(targets) > 1:
        raise PtxError(f"cannot merge PTX for different targets: {', '.join(sorted(targets))}")
    names = [e.name for m in modules for e in m.entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise PtxError(f"entry names must be unique; repeated: {', '.join(duplicates)}")
    seen: dict[str, str] = {}  # declared name -> its declaration text
    declarations: list[str] = []
    entries: list[PtxEntry] = []
    for m in modules:
        renames: dict[str, str] = {}
        for decl in m.declarations:
            name = _declared_name(decl)
            if name is None or name not in seen:
                if name is not None:
                    seen[name] = decl
                if decl not in declarations:
                    declarations.append(decl)
                continue
            if seen[name] == decl:
                continue
            owner = m.entries[0].name if m.entries else "module"
            renames[name] = f"{name}_{owner}"
            renamed = _rename(decl, renames)
            seen[renames[name]] = renamed
            declarations.append(renamed)
        for e in m.entries:
            entries.append(
                PtxEntry(e.name, e.params, e.directives, _rename(e.body, renames), e.visible)
                if renames
                else e
            )
    return PtxModule(
        version=max(m.version for m in modules),
        target=modules[0].target,
        address_size=64,
        declarations=tuple(declarations),
        entries=tuple(entries),
    )
