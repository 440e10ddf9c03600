"""The project's Python API: the `autotune` dialect's modules read from and written to
IREE's text (the IREE bridge, docs/interop.md).

Entry points: `parse_module` / `print_module` for text (IREE reads and prints it),
`verify_module` to check a module built or changed in Python, `xdsl_text` for xDSL's
syntax, `GroupOp` to build groups (and `autotune_bridge.variants` to make variants of a
dispatch), and `make_context` for a context that reads the project's xDSL text. The ops
themselves are defined in `autotune_dialect` (`autotune_dialect.flow`, `.util`, ...).
"""

from autotune_bridge.ir import make_context, parse_module, print_module, verify_module, xdsl_text
from autotune_bridge.notebook import register_if_interactive
from autotune_contracts.errors import DiagnosticError, SourceLocation
from autotune_contracts.policy import POLICIES
from autotune_dialect.autotune import GroupOp

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
