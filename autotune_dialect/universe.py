"""Plug-in for the stock `xdsl-opt`: the project's dialects and passes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.universe import Universe

from autotune_dialect.ir import project_dialects


def _project_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from lowering import project_passes

    return project_passes()


UNIVERSE = Universe(all_dialects=project_dialects(), all_passes=_project_passes())
