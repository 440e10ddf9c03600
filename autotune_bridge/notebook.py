"""Jupyter display: IR objects render as MLIR text.

Importing `autotune_dialect` inside IPython registers the formatters; elsewhere,
`%load_ext autotune_bridge.notebook` or `register(ipython)` does.
"""

from __future__ import annotations

import sys
from typing import Any

from xdsl.ir import Operation


def mlir_text(op: Operation) -> str:
    """The op as MLIR text, in the syntax IREE's tools read."""
    # Imported here: the package imports this module to register the display hooks, and
    # `ir` imports the dialect's ops, which must not need the package loaded.
    from autotune_bridge.ir import print_module

    return print_module(op).rstrip("\n")


def mlir_markdown(op: Operation) -> str:
    """The op as a fenced `mlir` code block."""
    return f"```mlir\n{mlir_text(op)}\n```"


def register(ipython: Any) -> None:
    """Show every xDSL op as MLIR text (plain) and as an `mlir` code block (markdown)."""
    formatters = ipython.display_formatter.formatters
    formatters["text/plain"].for_type(Operation, lambda op, p, cycle: p.text(mlir_text(op)))
    formatters["text/markdown"].for_type(Operation, mlir_markdown)


def load_ipython_extension(ipython: Any) -> None:
    register(ipython)


def register_if_interactive() -> None:
    """Register with the running IPython, if any (a running IPython has imported itself:
    elsewhere nothing is imported)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return
    shell = ipython.get_ipython()
    if shell is not None:
        register(shell)
