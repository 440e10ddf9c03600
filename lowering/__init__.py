"""Passes that lower `autotune` groups to IREE input IR, and the compile driver.

- `lower_to_iree(text, **options) -> str`: autotune IR text in, IREE input IR text out.
- `lower_module(module, **options)`: the same on an xDSL module, in place.
- `compile(text, target="llvm-cpu", arch=None, **options) -> bytes`: lower and compile.

Options: `policy` (default for groups that name none: online, explicit, init, static) and
`cache` (a tuning-cache export whose decisions fix static choices).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass

from lowering.autotune_to_iree import AutotuneToIREEPass, lower_module, lower_to_iree
from lowering.driver import compile

__all__ = ["AutotuneToIREEPass", "compile", "lower_module", "lower_to_iree", "project_passes"]


def project_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Loaders for the project's passes, by their `xdsl-opt` name."""
    return {AutotuneToIREEPass.name: lambda: AutotuneToIREEPass}
