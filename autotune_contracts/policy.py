"""The selection policies a group can have (docs/lowering.md has what each lowers to)."""

from __future__ import annotations

from enum import StrEnum


class Policy(StrEnum):
    """A group's selection policy; its value is the name the IR and the CLI use."""

    ONLINE = "online"
    """Explore on the real inputs, then run the committed variant (the default)."""
    EXPLICIT = "explicit"
    """Tune on synthetic inputs when the exported `__autotune` is called."""
    INIT = "init"
    """Tune on synthetic inputs when the module loads (`__autotune_init`)."""
    STATIC = "static"
    """Run one variant chosen at lowering time (`choice`, the tuning cache, or the first)."""


POLICIES: tuple[str, ...] = tuple(policy.value for policy in Policy)
"""The policies' names, `online` (the default) first."""
