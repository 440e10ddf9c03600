"""IREE's parser, verifier and printer for text, xDSL for what the project rewrites.

- `read_module(text, filename)`: IREE parses and verifies the text (groups in custom
  syntax are first written in generic form, `group_syntax`), then the module is imported
  into xDSL (`importer`). Every error names the user's `file:line:col`.
- `to_iree(module)`: xDSL prints the module in generic form with its locations (verbatim
  attributes and kernel modules as their text); IREE parses and verifies it.
- `iree_text(module, locations)`: IREE's own print of the module, groups in custom syntax.

docs/interop.md explains why the work is split so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from io import StringIO

from iree.compiler import ir
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from autotune_bridge.generic_text import generic_text
from autotune_bridge.importer import Importer, IreeInput
from autotune_contracts.errors import DiagnosticError, SourceLocation
from autotune_dialect.autotune import GroupOp
from autotune_dialect.brackets import unbalanced
from autotune_dialect.diagnostics import named_value
from autotune_dialect.group_syntax import OffsetMap, mlir_string, to_custom, to_generic_with_offsets
from autotune_dialect.iree_ir import (
    STDIN_NAME,
    iree_context,
    mlir_location,
    renamed_locations,
    repair_iree_print,
)
from autotune_dialect.verbatim import VerbatimOp


class _Places:
    """Places in the text IREE parsed (`"-"`), as places in the user's file: through the
    rewrite of groups (`offsets`, from the parsed text to `source`), when there was one."""

    def __init__(self, filename: str, parsed: str | None, source: str | None, offsets):
        self.filename = filename
        self.parsed = parsed
        self.source = source
        self.offsets: OffsetMap | None = offsets
        self.starts: list[int] | None = None

    def __call__(self, where: SourceLocation | None) -> SourceLocation | None:
        if where is None or where.filename != STDIN_NAME:
            return where
        if self.offsets is None or self.parsed is None or self.source is None:
            return SourceLocation(self.filename, where.line, where.column)
        if self.starts is None:
            self.starts = [0] + [m.end() for m in re.finditer("\n", self.parsed)]
        if not 1 <= where.line <= len(self.starts):
            return SourceLocation(self.filename, where.line, where.column)
        offset = self.offsets.original(self.starts[where.line - 1] + where.column - 1)
        return SourceLocation.from_offset(self.filename, self.source, offset)


_REDEFINITION = re.compile(r"redefinition of symbol named '(.*)'")


def diagnostic(
    err: ir.MLIRError, filename: str, source: str | None, places: _Places | None = None
) -> DiagnosticError:
    """The first error of an IREE diagnostic report, at its `file:line:col`."""
    errors = err.error_diagnostics
    if not errors:
        return DiagnosticError(str(err).split("\n", 1)[0])
    place = places or _Places(filename, None, None, None)
    first = errors[0]
    where = place(mlir_location(first.location))
    if where is not None and where.line == 0:  # the whole buffer
        where = None
    message = first.message
    redefinition = _REDEFINITION.fullmatch(message)
    if redefinition is not None:
        existing = [note for note in first.notes if note.message.startswith("see existing symbol")]
        earlier = place(mlir_location(existing[0].location)) if existing else None
        message = f"duplicate symbol @{redefinition.group(1)}" + (
            f"; first defined at {earlier}" if earlier is not None else ""
        )
    shown = source if where is not None and where.filename == filename else None
    return DiagnosticError(named_value(message, where, shown), where, shown)


MAX_NESTING = 1000
"""Deepest nesting of brackets (regions, attribute lists) read: IREE's parser recurses
once per level and overflows its stack on absurd depths (20000), which would end this
process."""


def check_nesting(text: str, filename: str) -> None:
    """A located error when `()`, `[]` and `{}` nest deeper than `MAX_NESTING`."""
    brackets = re.sub(r"[^()\[\]{}]+", "", text)
    for _ in range(MAX_NESTING):
        fewer = brackets.replace("()", "").replace("[]", "").replace("{}", "")
        if fewer == brackets:
            return  # all levels removed (or unbalanced: IREE reports that)
        brackets = fewer
    if not re.search(r"\(\)|\[\]|\{\}", brackets):
        return
    depth = 0
    for match in re.finditer(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|[()\[\]{}]', text):
        token = match.group()
        if token in "([{":
            depth += 1
            if depth > MAX_NESTING:
                where = SourceLocation.from_offset(filename, text, match.start())
                raise DiagnosticError(
                    f"brackets nest deeper than {MAX_NESTING} levels here; iree-autotune reads "
                    f"at most {MAX_NESTING}",
                    where,
                    text,
                )
        elif token in ")]}":
            depth -= 1


def check_characters(text: str, filename: str) -> None:
    """A located error at a NUL byte: MLIR text has none, and IREE's lexer takes one for
    the end of the text or reports something else (inside a group's line it went
    unnoticed)."""
    at = text.find("\0")
    if at >= 0:
        raise DiagnosticError(
            "a NUL byte (\\0) is not valid in MLIR text",
            SourceLocation.from_offset(filename, text, at),
            text.replace("\0", " "),
        )


_OPEN_STRING_AT_END = re.compile(r'(?:[^"/\n]|/(?!/)|"(?:[^"\\\n]|\\.)*")*"(?:[^"\\\n]|\\.)*\\?')
"""A last line that ends inside a string literal (no `//` comment before it)."""


def end_strings_at_a_newline(text: str) -> str:
    """`text`, with a newline after it when it ends inside a string literal. IREE 3.13's
    lexer steps past the end of its buffer on such a string inside `{-# dialect_resources`
    (a resource blob cut off) and reads memory after it: a crash or garbage. With the
    newline it reports the string where it ends, as it does on any other line."""
    last = text[text.rfind("\n") + 1 :]
    return text + "\n" if '"' in last and _OPEN_STRING_AT_END.fullmatch(last) else text


def parse_iree(text: str, filename: str, context: ir.Context) -> ir.Operation:
    """IREE's module of `text` (parsed and verified), locations under `filename`."""
    check_characters(text, filename)
    check_nesting(text, filename)
    generic, offsets = to_generic_with_offsets(text, filename)
    with context:
        try:
            module = ir.Module.parse(end_strings_at_a_newline(generic))
        except ir.MLIRError as err:
            report = diagnostic(err, filename, text, _Places(filename, generic, text, offsets))
            raise _first_of(report, unbalanced(text, filename), text) from None
    return module.operation


_SPACE_OR_COMMENT = re.compile(r"(?:\s|//[^\n]*)*")


def _first_of(
    report: DiagnosticError, brackets: DiagnosticError | None, text: str
) -> DiagnosticError:
    """IREE's error, or an unbalanced bracket that IREE's parser stumbled over. When IREE
    stopped on the last line (the input ended too early), IREE's message is kept, with what
    is left open, unless it only says that no op is there; otherwise a bracket at or before
    the token where IREE stopped when IREE found no op there (MLIR puts an error at a token
    that starts a line at the end of the token before it)."""
    if brackets is None or brackets.location is None:
        return report
    where = report.location
    if where is None or where.filename != brackets.location.filename:
        return brackets
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def offset(at: SourceLocation) -> int:
        return starts[min(at.line, len(starts)) - 1] + at.column - 1

    stopped = _SPACE_OR_COMMENT.match(text, offset(where)).end()  # type: ignore[union-attr]
    if "\n" not in text[stopped:].strip():
        if report.message in _NO_OP_HERE:
            return brackets
        ended = brackets.message.removeprefix("unexpected end of input: ")
        if ended != brackets.message:
            report.message += f" (the input ends here, inside an {ended})"
        return report
    if report.message in _NO_OP_HERE and offset(brackets.location) <= stopped:
        return brackets
    return report


_NO_OP_HERE = frozenset({"expected operation name in quotes"})
"""IREE's message where a stray `{` or `}` stands in place of an op."""


_RESOURCES = re.compile(r"^\{-#.*?^#-\}", re.MULTILINE | re.DOTALL)
_RESOURCE_USE = re.compile(r"dense_resource<([A-Za-z_][\w.$]*)>")
_RESOURCE_ENTRY = re.compile(r'\s*([A-Za-z_][\w.$]*)\s*:\s*"(0x[0-9A-Fa-f]*)"\s*,?\s*')


def resources_section(blobs: Mapping[str, str]) -> str:
    """The `{-# dialect_resources #-}` section of builtin blobs (handle -> `0x...` text);
    empty for none."""
    if not blobs:
        return ""
    entries = ",\n".join(f'      {key}: "{blob}"' for key, blob in blobs.items())
    return "{-#\n  dialect_resources: {\n    builtin: {\n" + entries + "\n    }\n  }\n#-}\n"


def resources_used(resources: str, text: str) -> str:
    """The `{-# dialect_resources #-}` section holding the blobs of `resources` (a module's
    sections, as `read_module` keeps them) that the `dense_resource`s of `text` name; empty
    when it names none. A module cut out of a bigger one (a dispatch built alone) needs
    them: IREE reads a `dense_resource` without its blob, and fails only where the values
    are needed ("resource does not exist")."""
    used = set(_RESOURCE_USE.findall(text))
    if not used or not resources:
        return ""
    entries = (_RESOURCE_ENTRY.fullmatch(line) for line in resources.splitlines())
    return resources_section({e[1]: e[2] for e in entries if e is not None and e[1] in used})


def read_module(
    text: str, filename: str = "<input>", keep_plain_executables: bool = False
) -> ModuleOp:
    """Parse MLIR text with IREE and import it into xDSL (`DiagnosticError` on bad input).

    The file's resource blobs (`{-# dialect_resources: ... #-}`, which `dense_resource`
    constants refer to) are kept with the module as text and written back with it.

    With `keep_plain_executables`, executables without groups stay IREE's ops (what the
    lowering needs: it reads their names only); `to_iree` puts copies of them back. Not
    with `dense_resource`s: the rewritten module is read in the same context, where their
    names are taken, so IREE would rename them."""
    context = iree_context()
    iree_module = parse_iree(text, filename, context)
    keep = keep_plain_executables and "dense_resource" not in text
    with context:
        module = Importer(context, text, filename, keep).module(iree_module)
    if "{-#" in text:
        module.resources = "\n".join(m.group() for m in _RESOURCES.finditer(text))
    return module


def to_iree(module: ModuleOp, context: ir.Context, source: str | None = None) -> ir.Operation:
    """IREE's module of an xDSL module, verified by IREE.

    IREE rejecting it is a defect of the project (the import keeps what IREE accepted),
    reported as an internal error at the location IREE names."""
    return _to_iree(module, context, source)[0]


def _to_iree(
    module: ModuleOp, context: ir.Context, source: str | None
) -> tuple[ir.Operation, bool]:
    """`to_iree`, and whether copies of IREE's own ops were put back (`read_module`):
    their locations in the input then name `"-"`, the string IREE parsed."""
    kept: list[VerbatimOp] | None = None
    held = getattr(module, "iree_input", None)
    if isinstance(held, IreeInput) and held.context is context and not hasattr(module, "resources"):
        kept = []
    text = generic_text(module, kept=kept) + "\n" + getattr(module, "resources", "")
    with context:
        try:
            parsed = ir.Module.parse(text).operation
        except ir.MLIRError as err:
            if kept:  # what IREE's ops stand in for did not verify: the text then
                return _to_iree_as_text(module, source), False
            report = diagnostic(err, STDIN_NAME, None)
            report.message = f"internal error: IREE rejects the rewritten module: {report.message}"
            if report.location is not None and source is not None:
                report.source = source
            raise report from None
    if not kept:
        return parsed, False
    if not put_back(parsed, kept):
        return _to_iree_as_text(module, source), False
    return parsed, True


def _to_iree_as_text(module: ModuleOp, source: str | None) -> ir.Operation:
    """`to_iree` with every op written as text (in a context of its own)."""
    return _to_iree(module, iree_context(), source)[0]


KEPT = "verbatim.kept"
"""The stand-in the generic writer puts where an op IREE holds goes back."""


_HOLDING_KERNELS = frozenset(
    {
        "flow.executable",
        "hal.executable",
        "hal.executable.source",
        "hal.executable.variant",
        "stream.executable",
    }
)
"""Ops whose kernel modules may be stand-ins (besides the module's own stand-ins)."""


def put_back(parsed: ir.Operation, kept: list[VerbatimOp]) -> bool:
    """Replace each stand-in (in the module or in an executable) by a copy of the IREE op
    it stands for; False if they are not all there."""
    stand_ins: list[ir.Operation] = []

    def find(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name == KEPT:
            stand_ins.append(op)
            return ir.WalkResult.SKIP
        if name == "builtin.module" and op.parent is None or name in _HOLDING_KERNELS:
            return ir.WalkResult.ADVANCE
        return ir.WalkResult.SKIP

    parsed.walk(find, ir.WalkOrder.PRE_ORDER)
    for op in stand_ins:
        kept[ir.IntegerAttr(op.attributes["index"]).value].kept_iree_op().clone(
            ip=ir.InsertionPoint(op)
        )
        op.erase()
    return len(stand_ins) == len(kept)


def iree_text(module: ModuleOp, locations: bool = False, source: str | None = None) -> str:
    """IREE's print of an xDSL module (groups in their custom syntax); with `locations`,
    every op names its place in the user's file (`loc(...)`)."""
    held = getattr(module, "iree_input", None)
    context = held.context if isinstance(held, IreeInput) else iree_context()
    iree_module, copied = _to_iree(module, context, source)
    text = repair_iree_print(iree_module.get_asm(enable_debug_info=locations, assume_verified=True))
    if copied and locations:
        text = renamed_locations(text, held.filename, as_iree_prints=True)
    groups = placed_groups(module)
    if groups:
        text = to_custom(text, [_custom_group_text(g) for g in groups])
    return text


def placed_groups(module: ModuleOp) -> list[GroupOp]:
    """The groups where groups may be (in the module and in its executables), in order:
    a lowered module has a hundred thousand ops and no group."""
    found = []
    for op in module.body.ops:
        if isinstance(op, GroupOp):
            found.append(op)
        for region in op.regions:
            for block in region.blocks:
                found.extend(inner for inner in block.ops if isinstance(inner, GroupOp))
    return found


def _custom_group_text(group: GroupOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(group)
    return out.getvalue()


__all__ = [
    "diagnostic",
    "generic_text",
    "iree_text",
    "mlir_string",
    "parse_iree",
    "read_module",
    "to_iree",
]
