"""The `autotune` MLIR dialect (xDSL) and the IREE ops it interoperates with.

Entry points: `parse_module` / `print_module` for text, `GroupOp` to build groups, and
`make_context` for a context that knows every dialect of the project.
"""

from autotune_dialect.autotune import POLICIES, GroupOp
from autotune_dialect.diagnostics import DiagnosticError, SourceLocation
from autotune_dialect.ir import make_context, parse_module, print_module, verify_module
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
]

register_if_interactive()
