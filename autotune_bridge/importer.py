"""IREE's in-memory IR (`iree.compiler.ir`, after IREE parsed and verified it) into xDSL.

- `autotune.group`, `flow.dispatch` and `util.call` become the project's ops (the lowering
  reads and rewrites them);
- kernel modules (a `builtin.module` inside another op than a module) become `verbatim.op`s
  holding IREE's print of them, with locations;
- when asked (`keep_plain_executables`), executables of the module that hold no group
  become `verbatim.op`s that keep IREE's op and make its text only when it is needed;
- every other op is an unregistered xDSL op with its operands, results, attributes,
  regions, successors and location kept as they are.

Attributes and types are xDSL's own when xDSL prints them back exactly as MLIR does, and
verbatim text otherwise (`autotune_dialect.verbatim`). Both are converted once per distinct
attribute (MLIR uniques them), which keeps the import linear in the number of ops.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from iree.compiler import ir
from xdsl.dialects.builtin import (
    ArrayAttr,
    FileLineColLoc,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    UnknownLoc,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue

from autotune_bridge.import_forms import (
    MODELLED,
    call_kind,
    generic_dictionaries,
    modelled_op,
)
from autotune_contracts.errors import DiagnosticError, SourceLocation
from autotune_dialect.autotune import GroupOp
from autotune_dialect.group_parameters import GroupAttributeError
from autotune_dialect.group_syntax import CALL_OF_GROUP
from autotune_dialect.interop import missing_kernel_function
from autotune_dialect.iree_ir import (
    FUNCTIONS,
    STDIN_NAME,
    function_signatures,
    kernel_text,
    mlir_location,
    renamed_locations,
    repair_iree_print,
)
from autotune_dialect.mlir_text import attribute_text, parse_text, shared_context
from autotune_dialect.verbatim import (
    VerbatimAttr,
    VerbatimOp,
    VerbatimType,
    affine_map_from_mlir,
)


@functools.cache
def _unregistered(name: str) -> type[Operation]:
    return UnregisteredOp.with_name(name)


@dataclass
class _OpForm:
    """What the import learnt of the attributes of ops of one name."""

    inherent: set[str] = field(default_factory=set)
    discardable: set[str] = field(default_factory=set)
    from_text: bool = False
    """Whether the bindings miss some properties, so they are read from IREE's print."""


@dataclass(frozen=True)
class IreeInput:
    """The IREE module an xDSL module was imported from (held, so that the ops its
    deferred ops stand for stay alive: `VerbatimOp.deferred`), its context, and the file
    name its `"-"` locations mean."""

    context: ir.Context
    module: ir.Operation
    filename: str


class Importer:
    """One import of an IREE module parsed from `source` (shown in diagnostics); locations
    IREE gave to the string (`"-"`) are put in `filename`.

    With `keep_plain_executables`, the module's `flow.executable`s that hold no group are
    not imported op by op but stand for IREE's ops (`plain_executable`): the lowering reads
    only their names and their exports' names; and kernel modules, kept as text, also
    hold IREE's op, which `to_iree` copies back instead of reading their text again."""

    def __init__(
        self,
        context: ir.Context,
        source: str | None = None,
        filename: str = "-",
        keep_plain_executables: bool = False,
    ):
        self.context = context
        self.source = source
        self.filename = filename
        self.keep_plain_executables = keep_plain_executables
        self.checked: set[Operation] = set()
        """The project's ops the import built and verified (`_modelled`)."""
        self.top: ir.Operation | None = None
        self.with_groups: set[ir.Operation] = set()
        self.kept_any = False
        self.attributes: dict[ir.Attribute, Attribute] = {}
        self.types: dict[ir.Type, Attribute] = {}
        self.locations: dict[ir.Location, Attribute] = {}
        self.strings: dict[str, StringAttr] = {}  # parts of locations, made once
        self.ints: dict[int, IntAttr] = {}
        self.values: dict[ir.Value, SSAValue] = {}
        self.blocks: dict[ir.Block, Block] = {}
        self.registered: dict[str, bool] = {}
        self.forms: dict[str, _OpForm] = {}

    # --- attributes, types, locations ----------------------------------------------------

    def attribute(self, attr: ir.Attribute) -> Attribute:
        converted = self.attributes.get(attr)
        if converted is None:
            converted = self._convert_attribute(attr)
            self.attributes[attr] = converted
        return converted

    def _convert_attribute(self, attr: ir.Attribute) -> Attribute:
        # Fast paths for the attributes every op carries; the rest goes through text.
        if isinstance(attr, ir.StringAttr):
            try:
                return StringAttr(attr.value)
            except UnicodeDecodeError:
                return VerbatimAttr(str(attr))
        if isinstance(attr, ir.FlatSymbolRefAttr):
            return SymbolRefAttr(attr.value)
        if isinstance(attr, ir.SymbolRefAttr):  # @root::@nested (a dispatch's entry point)
            root, *nested = attr.value
            return SymbolRefAttr(root, nested)
        if isinstance(attr, ir.ArrayAttr):
            try:
                return ArrayAttr([self.attribute(a) for a in attr])
            except TypeError:  # an element the Python bindings cannot hand out
                return VerbatimAttr(str(attr))
        if isinstance(attr, ir.UnitAttr):
            return UnitAttr()
        if isinstance(attr, ir.TypeAttr):
            return self.type(attr.value)
        if isinstance(attr, ir.IntegerAttr) and not isinstance(attr, ir.BoolAttr):
            type_ = self.type(attr.type)
            if isinstance(type_, IndexType) or (
                isinstance(type_, IntegerType)
                and type_.width.data > 1
                and type_.signedness.data == Signedness.SIGNLESS
            ):
                return IntegerAttr(attr.value, type_)
        text = repair_iree_print(str(attr))
        return self.attribute_text(text)

    def type(self, type_: ir.Type) -> Attribute:
        converted = self.types.get(type_)
        if converted is None:
            text = str(type_)
            converted = faithful(text, True, self.context)
            if converted is None and isinstance(type_, ir.FunctionType):
                # Of its parts, those xDSL cannot read are kept as text: xDSL's ops with a
                # function type (`func.func`) need a `FunctionType`.
                converted = FunctionType.from_lists(
                    [self.type(t) for t in type_.inputs], [self.type(t) for t in type_.results]
                )
            if converted is None:
                converted = VerbatimType(text)
            self.types[type_] = converted
        return converted

    def location(self, loc: ir.Location) -> Attribute:
        converted = self.locations.get(loc)
        if converted is None:
            if isinstance(loc, ir.FileLineColLoc):
                name = self.filename if loc.filename == STDIN_NAME else loc.filename
                converted = FileLineColLoc(
                    self._string(name), self._int(loc.start_line), self._int(loc.start_col)
                )
            else:
                converted = _parse_location(renamed_locations(str(loc), self.filename))
            self.locations[loc] = converted
        return converted

    def _string(self, text: str) -> StringAttr:
        made = self.strings.get(text)
        if made is None:
            made = self.strings[text] = StringAttr(text)
        return made

    def _int(self, value: int) -> IntAttr:
        made = self.ints.get(value)
        if made is None:
            made = self.ints[value] = IntAttr(value)
        return made

    # --- values ---------------------------------------------------------------------------

    def value(self, value: ir.Value) -> SSAValue:
        known = self.values.get(value)
        if known is None:  # used before its definition (graph regions, block order)
            known = ForwardDeclaredValue(self.type(value.type))
            self.values[value] = known
        return known

    def define(self, value: ir.Value, converted: SSAValue) -> None:
        earlier = self.values.get(value)
        if isinstance(earlier, ForwardDeclaredValue):
            earlier.replace_all_uses_with(converted)
        self.values[value] = converted

    # --- ops ---------------------------------------------------------------------------------

    def module(self, op: ir.Operation) -> ModuleOp:
        """The xDSL module of an IREE `builtin.module`."""
        outermost = self.top is None
        if outermost:
            self.top = op
            if self.keep_plain_executables:
                self.with_groups = self._holding_groups(op)
        attributes, _ = self.op_attributes(op)
        properties = {
            k: attributes.pop(k) for k in ("sym_name", "sym_visibility") if k in attributes
        }
        module = ModuleOp.create(
            regions=[self.region(op.regions[0])],
            properties=properties,
            attributes=attributes,
        )
        module.location = self.location(op.location)
        if outermost and self.kept_any:
            module.iree_input = IreeInput(self.context, op, self.filename)  # type: ignore[attr-defined]
        if outermost:
            module.checked_at_import = self.checked  # type: ignore[attr-defined]
        return module

    def op(self, op: ir.Operation) -> Operation:
        name = op.name
        if (
            name == "flow.executable"
            and self.keep_plain_executables
            and op.parent == self.top
            and op not in self.with_groups
        ):
            return self.plain_executable(op)
        if name == "builtin.module":
            parent = op.parent
            if parent is not None and parent.name != "builtin.module":
                return self.kernel(op)
            return self.module(op)
        self.check_registered(op)
        attributes, inherent = self.op_attributes(op)
        location = self.location(op.location)
        if name == GroupOp.name:
            if op.operands or op.results or op.regions or op.successors:
                raise self.error(op, f"'{name}' op takes no operands, results or regions")
            try:
                negative = (
                    a.value.data < 0 for a in attributes.values() if isinstance(a, IntegerAttr)
                )
                # A negative integer may be a literal that its type wraps: read it as written.
                written = self.text_from(self.source_location(op)) if any(negative) else None
                converted: Operation = GroupOp.from_attributes(attributes, written)
            except GroupAttributeError as err:
                report = self.error(op, f"'{name}' op {err}")
                report.location = self.locate_key(report.location, err.key)
                raise report from None
            converted.location = location
            return converted
        if name == CALL_OF_GROUP:
            name, inherent = call_kind(attributes), {"callee"}
        modelled = MODELLED.get(name)
        operands = [self.value(v) for v in op.operands]
        result_types = [self.type(r.type) for r in op.results]
        successors = [self.block(b) for b in op.successors]
        regions = [self.region(r) for r in op.regions]
        converted = None
        if modelled is not None:
            converted = modelled_op(
                modelled, operands, result_types, attributes, inherent, successors, regions
            )
            if converted is not None:
                self.checked.add(converted)
        if converted is None:
            converted = _unregistered(name).create(
                operands=operands,
                result_types=result_types,
                properties={k: v for k, v in attributes.items() if k in inherent},
                attributes={k: v for k, v in attributes.items() if k not in inherent},
                successors=successors,
                regions=regions,
            )
        converted.location = location
        for result, new in zip(op.results, converted.results, strict=True):
            self.define(result, new)
        return converted

    def op_attributes(self, op: ir.Operation) -> tuple[dict[str, Attribute], set[str]]:
        """An op's attributes, and which of them are its properties (IREE prints those in
        `<{...}>`; given as attributes, some would be lost).

        The Python bindings list attribute-valued properties and discardable attributes
        alike, and cannot hand out some properties (plain C++ values) or attributes (dense
        complex constants). The split is learnt per op name from IREE's generic print of
        the first op that shows a new key; ops whose properties the bindings cannot list
        are read from that print."""
        name = op.name
        form = self.forms.get(name)
        try:
            items = None if form is not None and form.from_text else list(op.attributes.items())
        except TypeError:
            items = None
        if (
            items is not None
            and form is not None
            and all(k in form.inherent or k in form.discardable for k, _ in items)
        ):
            return {k: self.attribute(v) for k, v in items}, form.inherent
        header = op.get_asm(print_generic_op_form=True, skip_regions=True, use_local_scope=True)
        properties, discardable = generic_dictionaries(repair_iree_print(header))
        if form is None:
            form = self.forms[name] = _OpForm()
        form.inherent.update(properties)
        form.discardable.update(discardable)
        if items is None or any(k not in dict(items) for k in properties):
            form.from_text = form.from_text or items is not None
            entries = {**properties, **discardable}
            return {k: self.attribute_text(v) for k, v in entries.items()}, set(properties)
        return {k: self.attribute(v) for k, v in items}, form.inherent

    def attribute_text(self, text: str) -> Attribute:
        if text == "unit":
            return UnitAttr()
        converted = self._simple_attribute_text(text)
        if converted is None:
            converted = faithful(text, False, self.context)
        if converted is None and text.startswith("affine_map<"):
            converted = affine_map_from_mlir(text, self.context)
        if converted is None and text.startswith("("):  # a function type (`function_type`)
            try:
                with self.context:
                    type_ = ir.Type.parse(text)
            except ir.MLIRError:
                type_ = None
            if isinstance(type_, ir.FunctionType):
                converted = self.type(type_)
        return VerbatimAttr(text) if converted is None else converted

    def _simple_attribute_text(self, text: str) -> Attribute | None:
        """A string or a list of symbols (what a group holds), read by IREE: xDSL's parser
        takes some fifty times longer."""
        if not text.startswith(('"', "[@")):
            return None
        try:
            attr = ir.Attribute.parse(text, self.context)
        except ir.MLIRError:
            return None
        if isinstance(attr, ir.StringAttr) or (
            isinstance(attr, ir.ArrayAttr)
            and all(isinstance(a, ir.FlatSymbolRefAttr) for a in attr)
        ):
            return self.attribute(attr)
        return None

    def kernel(self, op: ir.Operation) -> VerbatimOp:
        text = kernel_text(op, self.filename)
        if GroupOp.name in text:
            groups: list[ir.Operation] = []

            def find(inner: ir.Operation) -> ir.WalkResult:
                if inner.name == GroupOp.name:
                    groups.append(inner)
                    return ir.WalkResult.INTERRUPT
                return ir.WalkResult.ADVANCE

            op.walk(find)
            if groups:
                raise self.error(
                    groups[0],
                    f"'{GroupOp.name}' op cannot be inside a kernel module; place it beside "
                    "the exports of the executable",
                )
        with self.context:
            signatures = function_signatures(op)
        kept = VerbatimOp(text, function_signatures=signatures)
        if self.keep_plain_executables:
            kept.keep_iree_op(op)
            self.kept_any = True
        kept.location = self.location(op.location)
        return kept

    def _holding_groups(self, module: ir.Operation) -> set[ir.Operation]:
        """The ops directly in `module` that hold an `autotune.group` at any depth or that
        a group there names as a variant (the group's verifier reads those)."""
        groups: list[ir.Operation] = []

        def find(op: ir.Operation) -> ir.WalkResult:
            if op.name == GroupOp.name:
                groups.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(find)
        holding = set()
        named: set[str] = set()
        for group in groups:
            op = group
            while op.parent is not None and op.parent != module:
                op = op.parent
            holding.add(op)
            if op == group:
                variants = self.op_attributes(group)[0].get("variants")
                named.update(
                    ref.root_reference.data
                    for ref in getattr(variants, "data", ())
                    if isinstance(ref, SymbolRefAttr)
                )
        if named:
            for view in module.regions[0].blocks[0].operations:
                top = view.operation
                if "sym_name" in top.attributes:
                    if ir.StringAttr(top.attributes["sym_name"]).value in named:
                        holding.add(top)
        return holding

    def plain_executable(self, op: ir.Operation) -> VerbatimOp:
        """A `flow.executable` without groups, standing for IREE's op: its name and its
        exports' names are read, and whether each export's kernel function is defined
        (what `verify_module` checks of an imported executable, reported when it gets
        there)."""
        exports: dict[str, ir.Operation] = {}
        kernels: set[str] = set()
        modules = 0
        for view in op.regions[0].blocks[0].operations:
            inner = view.operation
            if inner.name == "flow.executable.export":
                exports[ir.StringAttr(inner.attributes["sym_name"]).value] = inner
            elif inner.name == "builtin.module":
                modules += 1
                for kernel in inner.regions[0].blocks[0].operations:
                    if kernel.operation.name in FUNCTIONS:
                        kernels.add(ir.StringAttr(kernel.attributes["sym_name"]).value)
        problem = None
        for export_name, export in exports.items():
            ref = export.attributes["function_ref"] if "function_ref" in export.attributes else None
            kernel = ir.FlatSymbolRefAttr(ref).value if ref is not None else export_name
            if modules and kernel not in kernels:
                problem = self.error(
                    export, f"'flow.executable.export' op {missing_kernel_function(kernel)}"
                )
                break
        filename = self.filename
        kept = VerbatimOp.deferred(
            op,
            lambda: kernel_text(op, filename),
            ir.StringAttr(op.attributes["sym_name"]).value,
            frozenset(exports),
            problem,
        )
        kept.location = self.location(op.location)
        self.kept_any = True
        return kept

    def check_registered(self, op: ir.Operation) -> None:
        name = op.name
        known = self.registered.get(name)
        if known is None:
            known = name in (GroupOp.name, CALL_OF_GROUP) or self.context.is_registered_operation(
                name
            )
            self.registered[name] = known
        if not known:
            dialect = name.split(".", 1)[0]
            raise self.error(
                op,
                f"unregistered operation '{name}' found in dialect ('{dialect}') that does "
                "not allow unknown operations",
            )

    def region(self, region: ir.Region) -> Region:
        blocks = [self.block(b) for b in region.blocks]
        for source, block in zip(region.blocks, blocks, strict=True):
            for op in source.operations:
                block.add_op(self.op(op.operation))
        return Region(blocks)

    def block(self, block: ir.Block) -> Block:
        converted = self.blocks.get(block)
        if converted is None:
            args = list(block.arguments)
            converted = Block(arg_types=[self.type(a.type) for a in args])
            for arg, new in zip(args, converted.args, strict=True):
                self.define(arg, new)
                new.location = self.location(arg.location)  # kept for iree-compile's errors
            self.blocks[block] = converted
        return converted

    def offset_of(self, at: SourceLocation | None) -> int | None:
        """The offset of `at` in the source text (None: elsewhere, or unknown)."""
        if at is None or self.source is None or at.filename != self.filename:
            return None
        lines = self.source.split("\n")
        if not 1 <= at.line <= len(lines):
            return None
        return sum(len(line) + 1 for line in lines[: at.line - 1]) + at.column - 1

    def text_from(self, at: SourceLocation | None) -> str | None:
        """The source text of the op at `at`, with what follows it (up to 4096 characters)."""
        start = self.offset_of(at)
        return None if start is None else self.source[start : start + 4096]  # type: ignore[index]

    def locate_key(self, at: SourceLocation | None, key: str) -> SourceLocation | None:
        """Where `key` is written in the op at `at` (its value, for `variants`)."""
        start = self.offset_of(at)
        if start is None or self.source is None:
            return at
        match = re.compile(rf"\b{re.escape(key)}\s*([=(])\s*").search(
            self.source, start, start + 4096
        )
        if match is None:
            return at
        offset = match.end() if match.group(1) == "(" else match.start()
        return SourceLocation.from_offset(self.filename, self.source, offset)

    def source_location(self, op: ir.Operation) -> SourceLocation | None:
        where = mlir_location(op.location)
        if where is not None and where.filename == STDIN_NAME:
            where = SourceLocation(self.filename, where.line, where.column)
        return where

    def error(self, op: ir.Operation, message: str) -> DiagnosticError:
        return DiagnosticError(message, self.source_location(op), self.source)


@functools.lru_cache(maxsize=1024)
def _parse_location(text: str) -> Attribute:
    parser = Parser(shared_context(), text)
    try:
        loc = parser.parse_optional_location()
    except Exception:  # noqa: BLE001 - an exotic location is not worth failing over
        loc = None
    return loc if loc is not None else UnknownLoc()


def faithful(text: str, is_type: bool, context: ir.Context) -> Attribute | None:
    """xDSL's object for MLIR text when what xDSL prints of it means the same to IREE
    (the same uniqued attribute or type in `context`), else None."""
    value = parse_text(text, is_type)
    if value is None:
        return None
    try:
        printed = attribute_text(value)
    except Exception:  # noqa: BLE001 - an attribute xDSL cannot print is not faithful
        return None
    if printed == text:
        return value
    parse = ir.Type.parse if is_type else ir.Attribute.parse
    try:
        with context:
            same = parse(printed) == parse(text)
    except ir.MLIRError:
        return None
    return value if same else None
