"""Progress on the terminal: one bar per phase, with counts and an estimate of the time
left (`rich`), and for a phase without a count (compiling, timing) its name and the time
it has taken. Every line fits the terminal's width and no name is cut: a phase's name
goes on a line of its own where the bar does not fit beside it, and the name of the item
done last on the next line, folded. On a stream that is not a terminal (or in a notebook
without ipywidgets) there is no bar and no control character: one line per finished
counted phase, with its counts."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterable

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.progress import Progress, ProgressBar, Task, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

BAR_WIDTH = 20
"""The most characters of a bar."""
MIN_BAR = 8
"""The fewest characters of a bar beside a phase's name: with less room the name goes on
a line of its own."""


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


class FittedBars(Progress):
    """rich's bars, each phase drawn in lines of the console's width at most: its name,
    bar and counts on one line where a bar of `MIN_BAR` fits beside the name (else the
    name alone first), then the item done last (the task's `label`), folded."""

    def __init__(self, console: Console, disable: bool):
        super().__init__(console=console, disable=disable)
        self.elapsed, self.remaining = TimeElapsedColumn(), TimeRemainingColumn()

    def get_renderables(self) -> Iterable[RenderableType]:
        for task in self.tasks:
            if task.visible:
                yield from self.task_lines(task)

    def task_lines(self, task: Task) -> Iterable[RenderableType]:
        """The lines of one phase."""
        width = self.console.width
        counts = self.counts(task)
        room = width - cell_len(counts) - 1  # for the name and the bar
        name = cell_len(task.description)
        if name + 1 + MIN_BAR <= room:
            yield self.bar_line(task, min(BAR_WIDTH, room - name - 1), counts)
        else:
            yield Text(task.description, overflow="fold")
            if room >= MIN_BAR:
                yield self.bar_line(task, min(BAR_WIDTH, room), counts, named=False)
            else:
                yield Text(counts, overflow="fold")
        label = task.fields.get("label")
        if label and not task.finished:
            yield Text("  " + label, overflow="fold")

    def counts(self, task: Task) -> str:
        """`3/9 0:00:12 eta 0:00:30`; the time taken alone for a phase without a count."""
        elapsed = self.elapsed(task).plain
        if task.total is None:
            return elapsed
        return f"{int(task.completed)}/{int(task.total)} {elapsed} eta {self.remaining(task).plain}"

    def bar_line(self, task: Task, bar: int, counts: str, named: bool = True) -> Table:
        """The phase's name (where `named`), a bar of `bar` characters and the counts."""
        line = Table.grid(padding=(0, 1))
        cells: list[RenderableType] = [Text(task.description)] if named else []
        cells += [
            ProgressBar(
                total=task.total,
                completed=task.completed,
                width=bar,
                pulse=task.total is None or not task.started,
                animation_time=task.get_time(),
            ),
            Text(counts),
        ]
        for _ in cells:
            line.add_column(no_wrap=True)
        line.add_row(*cells)
        return line


class TerminalProgress:
    """Progress on standard error, phase by phase; a context manager."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.live = _live(self.console)
        self.bars = FittedBars(self.console, disable=not self.live)
        self.task = None
        self.name = ""
        self.total: int | None = 0
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
        """A phase of `total` items (`advance` counts them)."""
        self._start(name, total)

    def status(self, name: str) -> None:
        """A phase without a count (compiling the model, timing two builds): its name and
        the time it has taken, until the next phase begins, then nothing (on a stream that
        is not a terminal, nothing at all)."""
        self._start(name, None)

    def advance(self, label: str) -> None:
        """One more item done; `label` names it."""
        self.count += 1
        if self.task is not None:
            self.bars.update(self.task, advance=1, label=label)
        if self.count == self.total:
            self._finish()

    def update(self, completed: int, summary: str) -> None:
        """`completed` items done so far; `summary` (e.g. a running count) is shown under
        the bar and ends the phase's line on a stream that is not a terminal."""
        self.count, self.summary = completed, summary
        if self.task is not None:
            self.bars.update(self.task, completed=completed, label=summary)

    def _start(self, name: str, total: int | None) -> None:
        self._finish()
        self.name, self.total, self.count, self.summary = name, total, 0, ""
        self.started = time.perf_counter()
        self.task = self.bars.add_task(name, total=total, label="")

    def _finish(self) -> None:
        if self.task is not None and self.total is None:
            self.bars.remove_task(self.task)  # a finished status says nothing more
        elif self.task is not None and not self.live:
            seconds = time.perf_counter() - self.started
            line = f"{self.name}: {self.count}/{self.total} in {seconds:.1f} s"
            print(line + (f", {self.summary}" if self.summary else ""), file=sys.stderr)
        self.task = None
