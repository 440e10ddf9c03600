"""Passes that lower `autotune` groups to IREE input IR, and the compile driver."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def project_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Loaders for the project's passes, by their `xdsl-opt` name."""

    def autotune_to_iree() -> type[ModulePass]:
        from lowering.autotune_to_iree import AutotuneToIREEPass

        return AutotuneToIREEPass

    return {"autotune-to-iree": autotune_to_iree}
