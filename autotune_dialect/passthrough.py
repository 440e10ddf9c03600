"""Kernel modules kept as text: the `builtin.module` inside an IREE executable.

A kernel module is isolated from the surrounding IR (its SSA names cannot escape it) and is
made of ops that xDSL has no definition for (`iree_tensor_ext.dispatch.tensor.load`,
`hal.interface.binding.subspan`, ...). The interop parser therefore stores it as the text the
user wrote, with alias references expanded, and prints it back unchanged. See
docs/interop.md for why this mechanism was chosen.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Dialect, Operation, Region
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.mlir_lexer import MLIRTokenKind

from autotune_dialect.iree_attrs import expand_aliases
from autotune_dialect.rawtext import ScanError, dedent_block, find_region_op_end

_MODULE_KEYWORDS = ("builtin.module", "module")
_FUNC_SIGNATURE = re.compile(r"func\.func\s+(?:(?:public|private|nested)\s+)?@([\w$.]+)\s*\(")


@irdl_op_definition
class PassthroughModuleOp(IRDLOperation):
    """A `builtin.module` kept verbatim: `passthrough.module builtin.module {...}`.

    Inside `hal.executable.source` and `flow.executable` the op prints as the bare module
    text, so the output is exactly the input module.
    """

    name = "passthrough.module"

    text = prop_def(StringAttr)

    def __init__(self, text: str):
        super().__init__(properties={"text": StringAttr(text)})

    @classmethod
    def parse(cls, parser: Parser) -> PassthroughModuleOp:
        op = parse_optional_kernel_module(parser)
        if op is None:
            parser.raise_error("expected 'builtin.module' after 'passthrough.module'")
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_kernel_module(printer, self)

    def function_arity(self, name: str) -> int | None:
        """Number of arguments of `func.func @name` in the module, or None if absent."""
        text = self.text.data
        for match in _FUNC_SIGNATURE.finditer(text):
            if match.group(1) != name:
                continue
            depth, count, seen_any = 0, 0, False
            for ch in text[match.end() :]:
                if ch in "([{<":
                    depth += 1
                elif ch in ")]}>":
                    if depth == 0:
                        return count + (1 if seen_any else 0)
                    depth -= 1
                elif ch == "," and depth == 0:
                    count += 1
                elif not ch.isspace():
                    seen_any = True
            return None
        return None


def parse_optional_kernel_module(parser: Parser) -> PassthroughModuleOp | None:
    """Capture a `builtin.module ...` op at the current token as text, if there is one."""
    token = parser._current_token
    if token.kind != MLIRTokenKind.BARE_IDENT or token.text not in _MODULE_KEYWORDS:
        return None
    content = parser.lexer.input.content
    start = token.span.start
    try:
        end = find_region_op_end(content, start)
    except ScanError as err:
        parser.raise_error(f"{err} in kernel module", err.pos, err.pos + 1)
    text = expand_aliases(parser, content[start:end])
    parser._resume_from(end)
    return PassthroughModuleOp(text)


def print_kernel_module(printer: Printer, op: PassthroughModuleOp) -> None:
    """Print the kept module text, re-indented to the printer's current nesting."""
    lines = dedent_block(op.text.data)
    printer.print_string(lines[0])
    for line in lines[1:]:
        if line:
            printer._print_new_line()
            printer.print_string(line)
        else:
            printer._print_new_line(indent=0)


def parse_executable_body(parser: Parser) -> Region:
    """Parse `{ op* }` where kernel modules are kept as text."""
    parser.parse_punctuation("{")
    block = Block()
    while parser.parse_optional_punctuation("}") is None:
        op = parse_optional_kernel_module(parser)
        if op is None:
            op = parser.parse_operation()
        block.add_op(op)
    return Region(block)


def print_executable_body(printer: Printer, region: Region) -> None:
    """Print `{ op* }`, kernel modules as their text."""
    printer.print_string("{")
    with printer.indented():
        for block in region.blocks:
            for op in block.ops:
                printer._print_new_line()
                if isinstance(op, PassthroughModuleOp):
                    print_kernel_module(printer, op)
                else:
                    printer.print_op(op)
    printer._print_new_line()
    printer.print_string("}")


def kernel_modules(op: Operation) -> list[PassthroughModuleOp]:
    """The kernel modules directly inside an executable op."""
    return [o for region in op.regions for o in region.ops if isinstance(o, PassthroughModuleOp)]


Passthrough = Dialect("passthrough", [PassthroughModuleOp], [])
