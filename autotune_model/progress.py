"""The progress of tuning a model on the terminal: one bar per phase, with counts and an
estimate of the time left; on a stream that is not a terminal, one line per finished
phase. Shared with `iree-autotune tune` (`autotune_runtime/progress.py`)."""

from autotune_runtime.progress import TerminalProgress, watched

__all__ = ["TerminalProgress", "watched"]
