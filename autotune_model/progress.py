"""The progress of tuning a model on the terminal: one bar per counted phase, with counts
and an estimate of the time left, and the name and time taken of a phase without a count;
on a stream that is not a terminal, one line per finished counted phase. Shared with
`iree-autotune tune` (`autotune_runtime/progress.py`)."""

from typing import Protocol

from autotune_runtime.progress import TerminalProgress, watched

__all__ = ["NoProgress", "Progress", "TerminalProgress", "watched"]


class Progress(Protocol):
    """What tuning tells about its progress (a progress bar, or nothing)."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, label: str) -> None: ...

    def status(self, name: str) -> None:
        """A phase without a count (compiling, timing), until the next phase."""
        ...


class NoProgress:
    """Progress that nobody watches."""

    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, label: str) -> None:
        pass

    def status(self, name: str) -> None:
        pass
