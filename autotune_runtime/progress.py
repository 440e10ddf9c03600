"""Progress on the terminal: one bar per phase, with counts and an estimate of the time
left (`rich`), readable in a line of 80 characters. On a stream that is not a terminal
(or in a notebook without ipywidgets) there is no bar and no control character: one line
per finished phase, with its counts."""

from __future__ import annotations

import importlib.util
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
from rich.table import Column

BAR_WIDTH = 20
"""Characters of the bar: with the counts and times, a line of 80 characters still shows
them whole (the name of the item done last takes the rest)."""


def watched(console: Console | None = None) -> bool:
    """Whether a person watches: standard error (or `console`) is a terminal, or this
    runs in a notebook."""
    console = console or Console(stderr=True)
    return console.is_terminal or console.is_jupyter


def _live(console: Console) -> bool:
    """Whether bars can be drawn: on a terminal, or in a notebook with ipywidgets (which
    rich draws them with there)."""
    if console.is_jupyter:
        return importlib.util.find_spec("ipywidgets") is not None
    return console.is_terminal


class TerminalProgress:
    """Progress on standard error, phase by phase; a context manager."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.live = _live(self.console)
        fixed = Column(no_wrap=True)
        self.bars = Progress(
            TextColumn("{task.description}", table_column=fixed),
            BarColumn(bar_width=BAR_WIDTH, table_column=fixed),
            MofNCompleteColumn(table_column=fixed),
            TimeElapsedColumn(table_column=fixed),
            TextColumn("eta", table_column=fixed),
            TimeRemainingColumn(table_column=fixed),
            # The item's name takes what is left of the line, cut at its end.
            TextColumn(
                "{task.fields[label]}",
                table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis"),
            ),
            console=self.console,
            disable=not self.live,
            expand=True,
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
