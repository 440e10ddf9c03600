"""Progress on the terminal: one bar per phase, with counts and an estimate of the time
left (`rich`). On a stream that is not a terminal there is no bar and no control
character: one line per finished phase, with its counts."""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class TerminalProgress:
    """Progress on standard error, phase by phase; a context manager."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.live = self.console.is_terminal
        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[label]}"),
            console=self.console,
            disable=not self.live,
        )
        self.task = None
        self.name = ""
        self.total = 0
        self.count = 0
        self.summary = ""
        self.started = time.perf_counter()

    def __enter__(self) -> TerminalProgress:
        self.bars.start()
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self._finish()
        self.task = None
        self.bars.stop()

    def phase(self, name: str, total: int) -> None:
        self._finish()
        self.name, self.total, self.count, self.summary = name, total, 0, ""
        self.started = time.perf_counter()
        self.task = self.bars.add_task(name, total=total, label="")

    def advance(self, label: str) -> None:
        """One more item done; `label` names it."""
        self.count += 1
        if self.task is not None:
            self.bars.update(self.task, advance=1, label=label)
        if self.count == self.total:
            self._finish()

    def update(self, completed: int, summary: str) -> None:
        """`completed` items done so far; `summary` (e.g. a running count) is shown next
        to the bar and ends the phase's line on a stream that is not a terminal."""
        self.count, self.summary = completed, summary
        if self.task is not None:
            self.bars.update(self.task, completed=completed, label=summary)

    def _finish(self) -> None:
        if self.task is not None and not self.live:
            seconds = time.perf_counter() - self.started
            line = f"{self.name}: {self.count}/{self.total} in {seconds:.1f} s"
            print(line + (f", {self.summary}" if self.summary else ""), file=sys.stderr)
        self.task = None
