"""PTX module text read into its parts and written back (pure text; no triton).

`parse_module` splits a PTX module into its header (`.version`, `.target`,
`.address_size`), its module-level declarations (`global_smem`, `.func`s) and its `.entry`
functions, each with its `.param` list, directives (`.reqntid`) and body text; `PtxModule.text`
writes one back. Comments are blanked before anything is read (`strip_comments`), keeping
offsets. This is what the CUDA ABI adapter (`lowering/ptx_abi.py`) and the pointer analysis
(`lowering/ptx_pointers.py`) read kernels through; `PtxError` is the error of all three.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_contracts.errors import DiagnosticError


class PtxError(DiagnosticError):
    """A PTX module that cannot be adapted to IREE's CUDA ABI."""


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


def strip_comments(text: str) -> str:
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
    clean = strip_comments(text)
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
