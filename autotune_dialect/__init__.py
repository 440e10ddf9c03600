"""The `autotune` MLIR dialect (xDSL) and its bridge to IREE.

Entry points: `parse_module` / `print_module` for text (IREE reads and prints it,
docs/interop.md), `xdsl_text` for xDSL's syntax, `GroupOp` to build groups (and
`autotune_dialect.variants` to make variants of a dispatch), and `make_context` for a
context that reads the project's xDSL text.
"""

from autotune_contracts.errors import DiagnosticError, SourceLocation
from autotune_contracts.policy import POLICIES
from autotune_dialect.autotune import GroupOp
from autotune_dialect.ir import make_context, parse_module, print_module, verify_module, xdsl_text
from autotune_dialect.notebook import register_if_interactive

__all__ = [
    "POLICIES",
    "DiagnosticError",
    "GroupOp",
    "SourceLocation",
    "make_context",
    "parse_module",
    "print_module",
    "verify_module",
    "xdsl_text",
]

register_if_interactive()
