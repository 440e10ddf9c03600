"""MLIR kept as IREE wrote it: attributes, types and whole ops that xDSL does not model.

IREE's parser reads the user's text (docs/interop.md); the import into xDSL keeps, as the
exact text MLIR prints for them,

- attributes and types that xDSL cannot represent faithfully (semi-affine maps, typed
  dialect attributes such as `#hal.device.target<...> : !hal.device`, ...):
  `#verbatim.attr<"...">` and `!verbatim.type<"...">`;
- kernel modules (the `builtin.module` inside an executable), which are isolated from the
  host code and never read by the lowering: `verbatim.op module {...}`.

When a module goes back to IREE (`autotune_dialect.bridge`), each is written as its text.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import IRDLOperation, irdl_attr_definition, irdl_op_definition, prop_def
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer

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


@irdl_op_definition
class VerbatimOp(IRDLOperation):
    """`verbatim.op module {...}`: an op (a kernel module) kept as MLIR text.

    The text is IREE's print of the op with its locations, so diagnostics inside kernels
    still name the user's file. The lowering never looks inside.
    """

    name = "verbatim.op"

    text = prop_def(StringAttr)

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

            from autotune_dialect.bridge import iree_context
            from autotune_dialect.importer import function_signatures

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
        parser._resume_from(end)
        return cls(content[start:end])

    def print(self, printer: Printer) -> None:
        lines = dedent_block(self.text.data)
        printer.print_string(" " + lines[0])
        for line in lines[1:]:
            if line:
                printer._print_new_line()
                printer.print_string(line)
            else:
                printer._print_new_line(indent=0)


Verbatim = Dialect("verbatim", [VerbatimOp], [VerbatimAttr, VerbatimType])
