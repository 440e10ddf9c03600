"""The progress of tuning a model on the terminal: one bar per phase, with counts and an
estimate of the time left; on a stream that is not a terminal, one line per finished
phase. Shared with `iree-autotune tune` (`autotune_runtime/progress.py`)."""

from typing import Protocol

from autotune_runtime.progress import TerminalProgress, watched

__all__ = ["NoProgress", "Progress", "TerminalProgress", "watched"]


class Progress(Protocol):
    """What tuning tells about its progress (a progress bar, or nothing)."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, label: str) -> None: ...


class NoProgress:
    """Progress that nobody watches."""

    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, label: str) -> None:
        pass
