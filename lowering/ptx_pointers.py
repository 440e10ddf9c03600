"""Which pointer parameters a PTX kernel reads and writes in global memory (pure text).

The CUDA ABI adapter (`lowering/ptx_abi.py`) binds a kernel's pointers by what the kernel
does with them, never by position. `pointer_accesses` finds it from the PTX itself: registers
loaded from a pointer parameter (`ld.param`) are followed through every instruction that
computes from them (`add`, `mad.wide`, `cvta`, `mov`, ..., to a fixpoint, so loops count), and
a `st`/`red`/`atom` (global or generic addressing) whose address derives from the parameter
marks it written; `ld`, `cp.async`, `prefetch` mark it read. `instructions` splits a body into
the instructions this reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lowering.ptx_module import PtxEntry, PtxError, strip_comments


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
    for statement in strip_comments(body).split(";"):
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
    loaded, flows, memory = _trace(entry.body, names)
    taint = _carried_to_fixpoint(loaded, flows)
    read, written = _reads_and_writes(entry.name, memory, taint)
    return {n: PointerAccess(n in read, n in written) for n in names}


Flow = tuple[set[str], set[str]]
"""An instruction's (destination registers, source registers)."""


def _trace(
    body: str, names: Sequence[str]
) -> tuple[dict[str, set[str]], list[Flow], list[Instruction]]:
    """One pass over the body: the parameters each register is loaded or moved from, the
    flows of every instruction computing from registers, and the memory instructions."""
    loaded: dict[str, set[str]] = {}
    flows: list[Flow] = []
    memory: list[Instruction] = []
    for ins in instructions(body):
        if ins.opcode.startswith("ld.param"):
            params = {
                n
                for n in names
                if any(re.search(rf"\[\s*{re.escape(n)}\b", o) for o in ins.operands)
            }
            if params and ins.operands:
                for reg in _registers(ins.operands[0]):
                    loaded.setdefault(reg, set()).update(params)
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
                loaded.setdefault(reg, set()).update(direct)
        if dests and sources:
            flows.append((dests, sources))
    return loaded, flows, memory


def _carried_to_fixpoint(loaded: dict[str, set[str]], flows: Sequence[Flow]) -> dict[str, set[str]]:
    """The parameters each register carries: those it is loaded from, and those its
    sources carry, through every flow until none adds any."""
    taint = {reg: set(params) for reg, params in loaded.items()}
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
    return taint


def _reads_and_writes(
    kernel: str, memory: Sequence[Instruction], taint: dict[str, set[str]]
) -> tuple[set[str], set[str]]:
    """The parameters read and those written through the global addresses of the memory
    instructions; refused where an address carries several."""
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
                    f"kernel {kernel}: the address of '{ins.opcode}' derives from several "
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
    return read, written
