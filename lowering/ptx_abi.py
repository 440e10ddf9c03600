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
   found from the PTX itself: registers loaded from a pointer parameter (`ld.param`) are
   followed through every instruction that computes from them (`add`, `mad.wide`, `cvta`,
   `mov`, ...), and a `st`/`red`/`atom` (global or generic) whose address derives from the
   parameter marks it written; `ld`, `cp.async`, `prefetch` mark it read.

`merge` then joins adapted kernels into one module with one header (`.version`, `.target`,
`.address_size`) and one copy of each shared module-level declaration (`global_smem`).
PTX bodies refer to parameters by name, so reordering the `.param` list is enough.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from autotune_contracts.errors import DiagnosticError

SCRATCH_PARAMS = ("global_scratch", "profile_scratch")
"""Triton's hidden trailing `.entry` parameters, in order."""


class PtxError(DiagnosticError):
    """A PTX module that cannot be adapted to IREE's CUDA ABI."""


class ScratchMemoryError(PtxError):
    """A kernel that needs global or profile scratch memory, which IREE cannot provide."""


# --- parsing --------------------------------------------------------------------------


@dataclass(frozen=True)
class PtxParam:
    """One `.param` of an `.entry`: `.param .u64 .ptr .global .align 1 name`."""

    name: str
    type: str  # u64, u32, b64, ...
    qualifiers: str  # the text between the type and the name (".ptr .global .align 1")

    @property
    def is_64bit(self) -> bool:
        return self.type.endswith("64")

    @property
    def is_pointer(self) -> bool:
        """Declared `.ptr`, or (without that hint) any 64-bit parameter."""
        return ".ptr" in self.qualifiers or (self.is_64bit and not self.qualifiers)

    def declaration(self, name: str | None = None) -> str:
        middle = f" {self.qualifiers}" if self.qualifiers else ""
        return f".param .{self.type}{middle} {name or self.name}"


@dataclass(frozen=True)
class PtxEntry:
    """An `.entry` function: name, parameters, directives (`.reqntid`...) and body text."""

    name: str
    params: tuple[PtxParam, ...]
    directives: str  # between `)` and `{`, e.g. ".reqntid 128"
    body: str  # from `{` to the matching `}`, inclusive
    visible: bool = True

    @property
    def reqntid(self) -> tuple[int, int, int] | None:
        m = re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", self.directives)
        if m is None:
            return None
        return tuple(int(g) if g else 1 for g in m.groups())  # type: ignore[return-value]

    def text(self) -> str:
        params = ",\n".join(f"\t{p.declaration()}" for p in self.params)
        prefix = ".visible .entry" if self.visible else ".entry"
        directives = f"\n{self.directives}" if self.directives else ""
        return f"{prefix} {self.name}(\n{params}\n){directives}\n{self.body}\n"


@dataclass(frozen=True)
class PtxModule:
    """A PTX module: header directives, module-level declarations and entries, in order."""

    version: tuple[int, int]
    target: str
    address_size: int
    declarations: tuple[str, ...]  # module-level items other than entries (one string each)
    entries: tuple[PtxEntry, ...]

    def entry(self, name: str | None = None) -> PtxEntry:
        if name is None:
            if len(self.entries) != 1:
                raise PtxError(f"expected one .entry, found {len(self.entries)}")
            return self.entries[0]
        for e in self.entries:
            if e.name == name:
                return e
        raise PtxError(f"no .entry {name} in the PTX module")

    def text(self) -> str:
        major, minor = self.version
        out = [
            "//",
            "// Adapted to IREE's CUDA ABI by iree-autotune (lowering/ptx_abi.py)",
            "//",
            "",
            f".version {major}.{minor}",
            f".target {self.target}",
            f".address_size {self.address_size}",
            "",
        ]
        out += list(self.declarations)
        if self.declarations:
            out.append("")
        for e in self.entries:
            out.append(e.text())
        return "\n".join(out)


def _strip_comments(text: str) -> str:
    """Blank out `//` and `/* */` comments, keeping offsets and newlines."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def _matching_brace(text: str, start: int) -> int:
    """Offset just past the `}` matching the `{` at `start` (comments already blanked)."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise PtxError("unbalanced braces in the PTX module")


_PARAM = re.compile(r"\.param\s+\.(\w+)\s*((?:\.\w+(?:\s+\d+)?\s*)*?)\s*([A-Za-z_$%][\w$]*)\s*$")


def _parse_params(text: str) -> tuple[PtxParam, ...]:
    params = []
    for item in text.split(","):
        item = " ".join(item.split())
        if not item:
            continue
        m = _PARAM.match(item)
        if m is None:
            raise PtxError(f"cannot parse .entry parameter '{item}'")
        params.append(PtxParam(m.group(3), m.group(1), " ".join(m.group(2).split())))
    return tuple(params)


def parse_module(text: str) -> PtxModule:
    """Split PTX text into its header, module-level declarations and `.entry` functions."""
    clean = _strip_comments(text)
    version = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", clean, re.M)
    target = re.search(r"^\s*\.target\s+([\w, ]+?)\s*$", clean, re.M)
    size = re.search(r"^\s*\.address_size\s+(\d+)", clean, re.M)
    if version is None or target is None:
        raise PtxError("not a PTX module: no .version or .target directive")
    if size is not None and size.group(1) != "64":
        raise PtxError(f".address_size {size.group(1)}: only 64-bit PTX is supported")
    header_end = max(m.end() for m in (version, target, size) if m is not None)
    declarations: list[str] = []
    entries: list[PtxEntry] = []
    pos = header_end
    while True:
        while pos < len(clean) and clean[pos].isspace():
            pos += 1
        if pos >= len(clean):
            break
        semi = clean.find(";", pos)
        brace = clean.find("{", pos)
        is_function = brace != -1 and re.search(r"\.(entry|func)\b", clean[pos:brace])
        if brace != -1 and (semi == -1 or brace < semi) and is_function:
            # A function (.entry / .func) with a body.
            end = _matching_brace(clean, brace)
            head = clean[pos:brace]
            entry = re.match(
                r"\s*(\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)\s*\((.*?)\)(.*)$", head, re.S
            )
            if entry is None:
                declarations.append(text[pos:end].strip())
            else:
                entries.append(
                    PtxEntry(
                        name=entry.group(2),
                        params=_parse_params(entry.group(3)),
                        directives=" ".join(entry.group(4).split()),
                        body=text[brace:end],
                        visible=bool(entry.group(1) and "visible" in entry.group(1)),
                    )
                )
            pos = end
        elif semi != -1:
            declarations.append(" ".join(text[pos : semi + 1].split()))
            pos = semi + 1
        else:
            rest = clean[pos:].strip()
            if rest:
                raise PtxError(f"unexpected text at the end of the PTX module: '{rest[:40]}'")
            break
    return PtxModule(
        version=(int(version.group(1)), int(version.group(2))),
        target=target.group(1).strip(),
        address_size=64,
        declarations=tuple(declarations),
        entries=tuple(entries),
    )


# --- which pointers a kernel reads and writes -----------------------------------------


@dataclass(frozen=True)
class Instruction:
    opcode: str
    operands: tuple[str, ...]


def _split_operands(text: str) -> tuple[str, ...]:
    parts, depth, current = [], 0, []
    for c in text:
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(c)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return tuple(parts)


def instructions(body: str) -> list[Instruction]:
    """The instructions of a function body (declarations, labels and braces skipped)."""
    out = []
    for statement in _strip_comments(body).split(";"):
        s = statement.replace("{", " { ").replace("}", " } ")
        # Drop scope braces and labels that precede the instruction on the same chunk.
        s = re.sub(r"^(\s*(?:[{}]|[\w$]+:))+", "", s).strip()
        s = re.sub(r"^@!?%?[\w$]+\s+", "", s)  # predicate guard
        if not s or s.startswith("."):
            continue
        m = re.match(r"([\w.:]+)\s*(.*)$", s, re.S)
        if m is None:
            continue
        operands = " ".join(m.group(2).split())
        out.append(Instruction(m.group(1), _split_operands(operands)))
    return out


_REGISTER = re.compile(r"%[\w$]+")
_WRITE = re.compile(r"^(st|red|atom|cp\.reduce\.async\.bulk|cp\.async\.bulk\.global)(\.|$)")
_READ = re.compile(r"^(ld|ldu|prefetch|prefetchu|cp\.async)(\.|$)")
_LOADS_DATA = re.compile(r"^(ld|ldu|atom|ldmatrix|tld4|tex|suld)(\.|$)")
"""Instructions whose destination holds data from memory: it carries no address taint."""
_OTHER_SPACES = {"shared", "local", "param", "const", "shared::cta", "shared::cluster"}


def _registers(operand: str) -> set[str]:
    return set(_REGISTER.findall(operand))


def _touches_global(opcode: str) -> bool:
    """A memory instruction that can reach global memory (global or generic addressing)."""
    parts = set(opcode.split(".")[1:])
    if opcode.startswith("cp."):
        return "global" in parts
    return not parts & _OTHER_SPACES


@dataclass(frozen=True)
class PointerAccess:
    """How a kernel uses one pointer parameter."""

    read: bool
    written: bool


def pointer_accesses(
    entry: PtxEntry, pointers: Iterable[str] | None = None
) -> dict[str, PointerAccess]:
    """Which of the entry's pointer parameters it reads and writes (global memory).

    Registers loaded from a parameter (`ld.param`) carry its name; every instruction with a
    destination passes the names of its sources on (to a fixpoint, so loops are covered).
    A store, reduction or atomic whose address carries a parameter writes it; a load or
    async copy from it reads it. An address carrying two parameters is an error: the
    mapping is then ambiguous and must be declared."""
    names = [p.name for p in entry.params if p.is_pointer] if pointers is None else list(pointers)
    taint: dict[str, set[str]] = {}
    flows: list[tuple[set[str], set[str]]] = []  # (destinations, sources)
    memory: list[Instruction] = []
    for ins in instructions(entry.body):
        if ins.opcode.startswith("ld.param"):
            params = {
                n
                for n in names
                if any(re.search(rf"\[\s*{re.escape(n)}\b", o) for o in ins.operands)
            }
            if params and ins.operands:
                for reg in _registers(ins.operands[0]):
                    taint.setdefault(reg, set()).update(params)
            continue
        if _WRITE.match(ins.opcode) or _READ.match(ins.opcode):
            memory.append(ins)
        if _LOADS_DATA.match(ins.opcode) or not ins.operands:
            continue
        dests = _registers(ins.operands[0]) if not ins.operands[0].startswith("[") else set()
        sources = (
            set().union(*(_registers(o) for o in ins.operands[1:])) if ins.operands[1:] else set()
        )
        # Parameter names used directly as operands (`mov.b64 %rd1, k_param_0`).
        direct = {
            n
            for n in names
            for o in ins.operands[1:]
            if n in o and re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", o)
        }
        if direct:
            for reg in dests:
                taint.setdefault(reg, set()).update(direct)
        if dests and sources:
            flows.append((dests, sources))
    changed = True
    while changed:
        changed = False
        for dests, sources in flows:
            carried: set[str] = set()
            for s in sources:
                carried |= taint.get(s, set())
            if not carried:
                continue
            for d in dests:
                have = taint.setdefault(d, set())
                if not carried <= have:
                    have |= carried
                    changed = True
    read: set[str] = set()
    written: set[str] = set()
    for ins in memory:
        if not _touches_global(ins.opcode):
            continue
        for operand in ins.operands:
            if not operand.startswith("["):
                continue
            carried = set().union(*(taint.get(r, set()) for r in _registers(operand)))
            if not carried:
                continue
            if len(carried) > 1:
                raise PtxError(
                    f"kernel {entry.name}: the address of '{ins.opcode}' derives from several "
                    f"pointer parameters ({', '.join(sorted(carried))}); declare which "
                    "pointers the kernel writes"
                )
            if _WRITE.match(ins.opcode) and not (
                ins.opcode.startswith("cp.async.bulk") and operand != ins.operands[0]
            ):
                written |= carried
                if ins.opcode.startswith(("atom", "red")):
                    read |= carried
            else:
                read |= carried
    return {n: PointerAccess(n in read, n in written) for n in names}


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
    for key, size in (
        ("global_scratch_size", global_scratch_size),
        ("profile_scratch_size", profile_scratch_size),
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
        if re.search(rf"(?<![\w$]){re.escape(p.name)}(?![\w$])", _strip_comments(entry.body)):
            raise ScratchMemoryError(
                f"kernel {entry.name} reads its {what.replace('_', ' ')} pointer ({p.name}) "
                "although its metadata asks for no scratch memory; IREE cannot provide it"
            )
    by_arg = dict(zip(arg_names, kept, strict=True))
    if pointers is None:
        pointer_args = [a for a, p in by_arg.items() if p.is_pointer]
    else:
        pointer_args = list(pointers)
        for a in pointer_args:
            if a not in by_arg:
                raise PtxError(f"kernel {entry.name} has no argument '{a}'")
            if not by_arg[a].is_64bit:
                raise PtxError(
                    f"kernel {entry.name}: argument '{a}' is a .{by_arg[a].type}, not a pointer"
                )
    accesses = pointer_accesses(entry, [by_arg[a].name for a in pointer_args])
    by_param = {by_arg[a].name: a for a in pointer_args}
    found = {by_param[n] for n, acc in accesses.items() if acc.written}
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
    both = {by_param[n] for n, acc in accesses.items() if acc.read and acc.written}
    if both:
        raise PtxError(
            f"kernel {entry.name} reads and writes {', '.join(sorted(both))} (in place); "
            "in-place pointers are not supported: IREE binds results after operands"
        )
    if not written:
        raise PtxError(
            f"kernel {entry.name} writes through none of its pointer arguments; declare its outputs"
        )
    index = {a: i for i, a in enumerate(arg_names)}
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
    mapping = {entry.name: name}
    mapping.update({by_arg[a].name: f"{name}_param_{a}" for a in arg_names})
    params = tuple(
        PtxParam(f"{name}_param_{a}", by_arg[a].type, by_arg[a].qualifiers) for a, _ in order
    )
    body = _rename(entry.body, mapping)
    adapted_entry = PtxEntry(name, params, entry.directives, body, True)
    adapted = AdaptedKernel(
        entry=adapted_entry,
        module=PtxModule(module.version, module.target, 64, module.declarations, (adapted_entry,)),
        params=tuple(AdaptedParam(a, f"{name}_param_{a}", role, index[a]) for a, role in order),
        accesses={by_param[n]: acc for n, acc in accesses.items()},
    )
    return adapted


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
