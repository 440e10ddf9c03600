"""Plug-in for the stock `xdsl-opt`: the project's dialects and passes, and the target
`-t iree`, which prints a module as IREE does (IREE verifies it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

from autotune_dialect.ir import project_dialects


def _project_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from lowering import project_passes

    return project_passes()


@dataclass(frozen=True)
class IREETarget(Target):
    """`-t iree`: the module as IREE prints it, in the syntax IREE's tools read."""

    name = "iree"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from autotune_dialect.ir import print_module

        output.write(print_module(module))


UNIVERSE = Universe(
    all_dialects=project_dialects(),
    all_passes=_project_passes(),
    all_targets={IREETarget.name: lambda: IREETarget},
)
