"""MLIR kept as IREE wrote it: attributes, types and whole ops that xDSL does not model.

IREE's parser reads the user's text (docs/interop.md); the import into xDSL keeps, as the
exact text MLIR prints for them,

- attributes and types that xDSL cannot represent faithfully (typed dialect attributes
  such as `#hal.device.target<...> : !hal.device`, ...): `#verbatim.attr<"...">` and
  `!verbatim.type<"...">` (an affine map that xDSL's parser cannot read, a semi-affine
  one, is xDSL's `AffineMapAttr` instead, written `#verbatim.affine_map<"...">` in xDSL's
  syntax: `AffineMapText`);
- kernel modules (the `builtin.module` inside an executable), which are isolated from the
  host code and never read by the lowering: `verbatim.op module {...}`;
- when the import is told to (`lower`), executables that hold no group: the lowering reads
  only their name and their exports' names. These keep IREE's op itself
  (`VerbatimOp.deferred`) and make their text only when asked for it.

When a module goes back to IREE (`autotune_bridge.bridge`), each is written as its text,
or, for an op IREE still holds in the same context, put back as a copy of that op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import AffineMapAttr, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.irdl import IRDLOperation, irdl_attr_definition, irdl_op_definition, opt_prop_def
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer

from autotune_dialect.iree_ir import function_signatures, iree_context
from autotune_dialect.parser_position import resume_after
from autotune_dialect.rawtext import ScanError, dedent_block, find_region_op_end


class _VerbatimText(ParametrizedAttribute):
    """Shared syntax: `<"text">`."""

    text: StringAttr

    def __init__(self, text: str | StringAttr):
        super().__init__(StringAttr(text) if isinstance(text, str) else text)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        text = parser.parse_str_literal("the MLIR text of an attribute or type")
        parser.parse_punctuation(">")
        return (StringAttr(text),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.text.data)
        printer.print_string(">")


@irdl_attr_definition
class VerbatimAttr(_VerbatimText):
    """`#verbatim.attr<"affine_map<...>">`: an attribute kept as the text MLIR prints."""

    name = "verbatim.attr"

    text: StringAttr  # declared here too: equality and hashing compare the text


@irdl_attr_definition
class VerbatimType(_VerbatimText, TypeAttribute):
    """`!verbatim.type<"...">`: a type kept as the text MLIR prints."""

    name = "verbatim.type"

    text: StringAttr  # declared here too: equality and hashing compare the text


@irdl_attr_definition
class AffineMapText(ParametrizedAttribute):
    """`#verbatim.affine_map<"affine_map<...>">`: the syntax in which `xdsl_text` writes an
    affine map that xDSL's own parser cannot read (a semi-affine one such as
    `()[s0, s1] -> ((s0 ceildiv 32) * (s1 ceildiv 32))`, which xDSL's `AffineMap` holds).
    Reading it gives xDSL's `AffineMapAttr` of that map, not an instance of this class, so
    that xDSL's `affine.apply` (what the stock `xdsl-opt` makes of a generic
    `"affine.apply"`) verifies with it."""

    name = "verbatim.affine_map"

    text: StringAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        pos = parser.pos
        text = parser.parse_str_literal("the MLIR text of an affine map")
        parser.parse_punctuation(">")
        value = affine_map_from_mlir(text, iree_context())
        if value is None:
            parser.raise_error(f"not an affine map: {text}", pos, parser.pos)
        return (value,)

    @classmethod
    def new(cls, params: Sequence[Attribute]) -> Attribute:  # type: ignore[override]
        return params[0]  # the `AffineMapAttr` that `parse_parameters` read

    @staticmethod
    def print_map(printer: Printer, attr: AffineMapAttr) -> None:
        """Write `attr` in this syntax."""
        printer.print_string(f"#{AffineMapText.name}<")
        printer.print_string_literal(f"affine_map<{attr.data}>")
        printer.print_string(">")


def affine_map_from_mlir(text: str, context: Any) -> AffineMapAttr | None:
    """xDSL's attribute for an affine map that xDSL's parser cannot read (semi-affine), read
    by IREE in `context`; None if it is no affine map, or if IREE does not read xDSL's
    print of it as the same map."""
    from iree.compiler import ir

    with context:
        try:
            attr = ir.Attribute.parse(text)
            mlir_map = ir.AffineMapAttr(attr).value
            results = tuple(_affine_expr(e) for e in mlir_map.results)
        except (ir.MLIRError, ValueError, TypeError):
            return None
        value = AffineMapAttr(AffineMap(mlir_map.n_dims, mlir_map.n_symbols, results))
        try:
            same = ir.Attribute.parse(f"affine_map<{value.data}>") == attr
        except ir.MLIRError:
            return None
    return value if same else None


def is_semi_affine(attr: Attribute) -> bool:
    """An affine map attribute that xDSL's parser cannot read back."""
    return isinstance(attr, AffineMapAttr) and not all(
        r.is_pure_affine() for r in attr.data.results
    )


def _affine_expr(expr: Any) -> AffineExpr:
    """xDSL's expression for one of MLIR's (built as it is: xDSL's operators refuse
    semi-affine products and quotients)."""
    from iree.compiler import ir

    if isinstance(expr, ir.AffineDimExpr):
        return AffineDimExpr(expr.position)
    if isinstance(expr, ir.AffineSymbolExpr):
        return AffineSymExpr(expr.position)
    if isinstance(expr, ir.AffineConstantExpr):
        return AffineConstantExpr(expr.value)
    for kind, mlir_kind in _BINARY_KINDS.items():
        if isinstance(expr, getattr(ir, mlir_kind)):
            return AffineBinaryOpExpr(kind, _affine_expr(expr.lhs), _affine_expr(expr.rhs))
    raise ValueError(f"unknown affine expression {expr}")


_BINARY_KINDS = {
    AffineBinaryOpKind.Add: "AffineAddExpr",
    AffineBinaryOpKind.Mul: "AffineMulExpr",
    AffineBinaryOpKind.Mod: "AffineModExpr",
    AffineBinaryOpKind.FloorDiv: "AffineFloorDivExpr",
    AffineBinaryOpKind.CeilDiv: "AffineCeilDivExpr",
}


@irdl_op_definition
class VerbatimOp(IRDLOperation):
    """`verbatim.op module {...}`: an op (a kernel module) kept as MLIR text.

    The text is IREE's print of the op with its locations, so diagnostics inside kernels
    still name the user's file. The lowering never looks inside.

    An op made by `deferred` holds IREE's op (`kept_iree_op`) and the names of its
    exports (`kept_export_names`), and makes its text on first use.
    """

    name = "verbatim.op"

    stored_text = opt_prop_def(StringAttr, prop_name="text")

    def __init__(
        self,
        text: str,
        function_arities: dict[str, int] | None = None,
        function_signatures: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] | None = None,
    ):
        super().__init__(properties={"text": StringAttr(text)})
        if function_signatures is not None and function_arities is None:
            function_arities = {name: len(sig[0]) for name, sig in function_signatures.items()}
        self._function_arities = function_arities
        self._function_signatures = function_signatures

    @classmethod
    def deferred(
        cls,
        iree_op: Any,
        make_text: Callable[[], str],
        symbol: str | None = None,
        export_names: frozenset[str] | None = None,
        problem: Exception | None = None,
    ) -> VerbatimOp:
        """An op standing for IREE's `iree_op`, whose text `make_text` gives when it is
        first needed; `symbol` is its `sym_name`, for symbol lookups; `problem`, what
        verifying it would report."""
        op = cls.create(attributes={"sym_name": StringAttr(symbol)} if symbol else {})
        op._iree_op = iree_op
        op._export_names = export_names
        op._problem = problem
        op._make_text = make_text
        op._function_arities = op._function_signatures = None
        return op

    def keep_iree_op(self, iree_op: Any) -> None:
        """Let the op also hold IREE's op that its text is the print of."""
        self._iree_op = iree_op

    def kept_iree_op(self) -> Any:
        """IREE's op this one stands for (`deferred`), else None."""
        return getattr(self, "_iree_op", None)

    def kept_export_names(self) -> frozenset[str] | None:
        """The names of the exports of a deferred executable, else None."""
        return getattr(self, "_export_names", None)

    def kept_problem(self) -> Exception | None:
        """What verifying the deferred op reports, else None."""
        return getattr(self, "_problem", None)

    @property
    def text(self) -> StringAttr:
        """The op's MLIR text."""
        text = self.stored_text
        if text is None:
            text = StringAttr(self._make_text())
            self.properties["text"] = text
        return text

    def clone_without_regions(self, *args, **kwargs) -> VerbatimOp:
        self.text  # noqa: B018 - a copy holds the text, not IREE's op
        copy = super().clone_without_regions(*args, **kwargs)
        copy._function_arities = getattr(self, "_function_arities", None)
        copy._function_signatures = getattr(self, "_function_signatures", None)
        return copy

    def function_arities(self) -> dict[str, int]:
        """Argument count of each `func.func` directly inside the kept module (IREE reads
        the text when the import did not record them)."""
        arities = getattr(self, "_function_arities", None)
        if arities is None:
            signatures = self.function_signatures()
            arities = {name: len(inputs) for name, (inputs, _) in signatures.items()}
            self._function_arities = arities
        return arities

    def function_signatures(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """(argument types, result types) of each `func.func` directly inside the kept
        module, as MLIR text (IREE reads the text when the import did not record them)."""
        signatures = getattr(self, "_function_signatures", None)
        if signatures is None:
            from iree.compiler import ir

            with iree_context():
                signatures = function_signatures(ir.Operation.parse(self.text.data).operation)
            self._function_signatures = signatures
        return signatures

    @classmethod
    def parse(cls, parser: Parser) -> VerbatimOp:
        start = parser.pos
        content = parser.lexer.input.content
        try:
            end = find_region_op_end(content, start)
        except ScanError as err:
            parser.raise_error(f"{err} in a verbatim op", err.pos, err.pos + 1)
        resume_after(parser, end)
        # Without the indentation of the file it is read from: the text is what was
        # printed (`print`), whatever the nesting (the groups' fingerprints digest it).
        return cls("\n".join(dedent_block(content[start:end])))

    def print(self, printer: Printer) -> None:
        lines = dedent_block(self.text.data)
        printer.print_string(" " + lines[0])
        for line in lines[1:]:
            # An empty line without the indentation (no trailing spaces).
            printer.print_string("\n" + line, indent=None if line else 0)


Verbatim = Dialect("verbatim", [VerbatimOp], [VerbatimAttr, VerbatimType, AffineMapText])
