"""Tables and plots of tuning results: per (group, workload key), every variant's timings.

The data comes from the tuning cache (`Entry.stats`, as `Tuner` writes it) or from a loaded
module's `stats()`; both carry per-variant summaries in nanoseconds (`median_ns`, `min_ns`,
`spread_ns`, `samples`, `failed`, `rejected`, `eliminated`). Entries imported from elsewhere
may lack some of it: what is missing is shown as such, never guessed.

A table is shown where the screen is wide enough for it; else each row as a line or two,
its names first and whole (`show_decisions`, `show_variants`). `rich` is imported when a
table is built and `matplotlib` (Agg, no display) only when a plot is written, so
importing this module is cheap.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autotune_contracts.files import atomic_output

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
    from rich.console import Console
    from rich.table import Table

    from autotune_runtime.cache import Entry

MISSING = "-"


@dataclass(frozen=True)
class VariantRow:
    """One variant of one (group, workload key)."""

    name: str
    samples: int | None
    median_us: float | None
    spread_us: float | None
    min_us: float | None
    failed: bool = False
    rejected: bool = False
    eliminated: bool = False
    winner: bool = False
    ratio: float | None = None

    @property
    def status(self) -> str:
        if self.winner:
            return "winner"
        if self.failed:
            return "failed"
        if self.rejected:
            return "rejected"
        if self.eliminated:
            return "eliminated"
        return ""


@dataclass(frozen=True)
class Panel:
    """The results of one group at one workload key (one table, one subplot)."""

    group: str
    workload: tuple[int, ...]
    decision: str | None
    rows: list[VariantRow] = field(default_factory=list)
    device: str = ""
    explored_calls: int | None = None
    source: str = ""
    tie: dict | None = None
    """The tie band and the variants within it of the fastest, when the tie-break chose
    among several (`Tuner._tie`)."""

    @property
    def title(self) -> str:
        text = f"{self.group} workload {workload_text(self.workload)}"
        return f"{text} on {self.device}" if self.device else text

    @property
    def short_title(self) -> str:
        return f"{self.group} {workload_text(self.workload)}"

    @property
    def winner_row(self) -> VariantRow | None:
        return next((r for r in self.rows if r.winner), None)

    @property
    def tie_text(self) -> str | None:
        """What the tie-break did, in words (None without a tie)."""
        if not self.tie:
            return None
        tied = ", ".join(str(name) for name in self.tie["tied"])
        return (
            f"tie: {tied} within {float(self.tie['band']):.1%} of the fastest "
            f"({self.tie.get('fastest')}); the tie-break (the reference, then variant order) "
            f"chose {self.decision}"
        )


def workload_text(workload: Iterable[int]) -> str:
    """A workload as the commands print it: `[128, 256]`."""
    return "[" + ", ".join(str(w) for w in workload) + "]"


def _us(value) -> float | None:
    """Nanoseconds (possibly missing, infinite or malformed) to microseconds, or None."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number / 1000.0 if math.isfinite(number) else None


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def build_rows(summaries: list[dict] | None, decision: str | None) -> list[VariantRow]:
    """Rows from per-variant summaries; the decided variant is the winner and ratios are
    medians over the winner's median."""
    raw = []
    for item in summaries or []:
        if not isinstance(item, dict) or "variant" not in item:
            continue
        failed = bool(item.get("failed", False))
        rejected = bool(item.get("rejected", False))
        median = None if failed else _us(item.get("median_ns"))
        raw.append(
            VariantRow(
                name=str(item["variant"]),
                samples=_int(item.get("samples")),
                median_us=median,
                # Without a median (no samples, or a failed run) a spread means nothing.
                spread_us=None if median is None else _us(item.get("spread_ns")),
                min_us=None if median is None else _us(item.get("min_ns")),
                failed=failed,
                rejected=rejected,
                eliminated=bool(item.get("eliminated", False)),
                winner=decision is not None and str(item["variant"]) == decision,
            )
        )
    if decision is not None and not any(r.winner for r in raw):
        # The decision came without statistics for it (an imported or hand-written entry).
        raw.append(VariantRow(decision, None, None, None, None, winner=True))
    best = next((r.median_us for r in raw if r.winner), None)
    rows = []
    for r in raw:
        ratio = r.median_us / best if best and r.median_us is not None else None
        rows.append(
            VariantRow(
                r.name,
                r.samples,
                r.median_us,
                r.spread_us,
                r.min_us,
                r.failed,
                r.rejected,
                r.eliminated,
                r.winner,
                ratio,
            )
        )
    return rows


def _device_text(info: dict) -> str:
    if not isinstance(info, dict):
        return ""
    driver, name = info.get("driver"), info.get("name")
    if driver and name and name != "default":
        return f"{driver} ({name})"
    return str(driver or "")


def panels_from_entries(entries: Iterable[Entry]) -> list[Panel]:
    """One panel per cache entry (group, workload key, device, module fingerprint)."""
    panels = []
    for entry in entries:
        stats = entry.stats if isinstance(entry.stats, dict) else {}
        summaries = stats.get("variants")
        panels.append(
            Panel(
                group=entry.key.group,
                workload=tuple(entry.key.workload),
                decision=entry.variant,
                rows=build_rows(summaries if isinstance(summaries, list) else None, entry.variant),
                device=_device_text(entry.device_info),
                explored_calls=_int(stats.get("explored_calls")),
                source="cache",
                tie=_tie(stats.get("tie")),
            )
        )
    return panels


def _tie(value: object) -> dict | None:
    """A decision's `tie`, when it is well formed (an imported entry may have anything)."""
    if not isinstance(value, dict) or not isinstance(value.get("tied"), list):
        return None
    return value if isinstance(value.get("band"), int | float) else None


def panels_from_stats(stats: Iterable[dict]) -> list[Panel]:
    """One panel per (group, workload key) of `LoadedModule.stats()`."""
    return [
        Panel(
            group=str(item["group"]),
            workload=tuple(item["workload"]),
            decision=item["decision"],
            rows=build_rows(item["variants"], item["decision"]),
            # A decision read from the cache took no exploration calls in this session.
            explored_calls=None if item.get("from_cache") else _int(item.get("explored_calls")),
            source="cache" if item.get("from_cache") else "tuned",
            tie=_tie(item.get("tie")),
        )
        for item in stats
    ]


# --- tables ---------------------------------------------------------------------------


def _num(value: float | None, digits: int = 2) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def variant_table(panel: Panel) -> Table:
    """Variant, samples, median, spread (MAD), min, status and ratio to the winner."""
    from rich.table import Table

    table = Table(title=panel.title, title_justify="left", show_edge=True)
    table.add_column("variant", overflow="fold")
    for header in ("samples", "median\n(µs)", "spread\n(µs)", "min\n(µs)", "vs\nwinner"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for row in panel.rows:
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else MISSING
        style = "bold green" if row.winner else ("red" if row.failed or row.rejected else None)
        table.add_row(
            row.name,
            MISSING if row.samples is None else str(row.samples),
            _num(row.median_us),
            _num(row.spread_us),
            _num(row.min_us),
            ratio,
            ("* " if row.winner else "") + row.status,
            style=style,
        )
    return table


def decision_table(panels: list[Panel], title: str = "decisions") -> Table:
    """One row per (group, workload key): the decision and how it compares."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_edge=False)  # (80 columns, ties too)
    for header in ("group", "workload", "decision"):
        table.add_column(header, overflow="fold")
    for header in ("median\n(µs)", "next\nbest", "calls"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("source", overflow="fold")
    for panel in panels:
        table.add_row(*_decision_cells(panel))
    return table


def _decision_cells(panel: Panel) -> tuple[str, ...]:
    """Group, workload, decision, its median, the next best's ratio to it, calls, source."""
    winner = panel.winner_row
    others = [r.ratio for r in panel.rows if not r.winner and r.ratio is not None]
    return (
        panel.group,
        workload_text(panel.workload),
        panel.decision or "exploring",
        _num(winner.median_us if winner else None),
        f"{min(others):.2f}x" if others else MISSING,
        MISSING if panel.explored_calls is None else str(panel.explored_calls),
        panel.source + (", tie-break" if panel.tie else ""),
    )


def decision_lines(panels: list[Panel], title: str = "decisions") -> list[str]:
    """`decision_table` for a screen too narrow for it: two lines per row, the group
    first, then its workload, the decision and the rest."""
    lines = [title]
    for panel in panels:
        group, workload, decision, median, other, calls, source = _decision_cells(panel)
        lines.append(group)
        lines.append(
            f"  {workload}: {decision}, median {median} µs, next best {other}, calls {calls}, "
            + source
        )
    return lines


def variant_lines(panel: Panel) -> list[str]:
    """`variant_table` for a screen too narrow for it: two lines per variant, its name and
    status first."""
    lines = [panel.title]
    for row in panel.rows:
        status = ("* " if row.winner else "") + row.status
        lines.append(row.name + (f" ({status})" if status else ""))
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else MISSING
        lines.append(
            f"  samples {MISSING if row.samples is None else row.samples}, median "
            f"{_num(row.median_us)} µs, spread {_num(row.spread_us)} µs, min "
            f"{_num(row.min_us)} µs, vs winner {ratio}"
        )
    return lines


WIDEST = 10_000
"""The most characters a table's line may take when its width is measured."""


def unbounded(console: Console) -> bool:
    """Whether `console` writes to a file or a pipe without `COLUMNS` set: no screen's
    width to fit (the tables are written one line per row, however long)."""
    return not console.is_terminal and not os.environ.get("COLUMNS")


def show_fitted(console: Console, table: Table, lines: list[str]) -> None:
    """`table` where the console is wide enough for it, else `lines` (wrapped at the
    width, never cut); on a file or a pipe without `COLUMNS`, the table, however wide."""
    width = console.measure(table, options=console.options.update(max_width=WIDEST)).maximum
    if unbounded(console):
        console.width = max(console.width, width)
    if width <= console.width:
        console.print(table)
        return
    for line in lines:
        console.print(line, markup=False, highlight=False)


def show_decisions(console: Console, panels: list[Panel]) -> None:
    """The decisions: `decision_table`, or `decision_lines` on a narrow screen."""
    show_fitted(console, decision_table(panels), decision_lines(panels))


def show_variants(console: Console, panel: Panel) -> None:
    """A panel's variants: `variant_table`, or `variant_lines` on a narrow screen."""
    show_fitted(console, variant_table(panel), variant_lines(panel))


# --- plots ----------------------------------------------------------------------------


def write_plot(panels: list[Panel], path: str | Path) -> None:
    """`variant_figure`, written atomically to `path`; the format follows the suffix (PNG
    when there is none)."""
    save_figure(variant_figure(panels), path)


def save_figure(fig: Figure, path: str | Path) -> None:
    """`fig` written atomically to `path` in the format of its suffix (PNG when there is
    none); a format matplotlib cannot write is a ValueError naming those it can."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    canvas = FigureCanvasAgg(fig)
    if fmt not in canvas.get_supported_filetypes():
        raise ValueError(
            f"cannot write a .{fmt} plot; use one of: "
            + ", ".join(sorted(canvas.get_supported_filetypes()))
        )
    with atomic_output(target) as tmp, open(tmp, "wb") as out:
        fig.savefig(out, format=fmt)


def _bar_label(row: VariantRow) -> str:
    """What a variant's bar says: its ratio to the winner, or what became of it."""
    if row.winner:
        return "winner" if row.median_us is not None else "winner (not measured)"
    if row.failed or row.rejected:
        return row.status
    return f"{row.ratio:.2f}x" if row.ratio is not None else ""


def variant_figure(panels: list[Panel]) -> Figure:
    """A bar chart per panel: each measured variant's median (error bar = spread, winner
    in green, failed or rejected in red, with its ratio to the winner or its status). A
    variant never measured has no bar: the panel's title names it (`not measured: v3`)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4 * min(len(panels), 2), 3.6 * math.ceil(len(panels) / 2)), dpi=100)
    columns = min(len(panels), 2)
    rows = math.ceil(len(panels) / columns)
    for index, panel in enumerate(panels, start=1):
        ax = fig.add_subplot(rows, columns, index)
        shown = [
            r for r in panel.rows if r.median_us is not None or r.failed or r.rejected or r.winner
        ]
        unmeasured = [r.name for r in panel.rows if r not in shown]
        colors = [
            "tab:green" if r.winner else ("tab:red" if r.failed or r.rejected else "tab:gray")
            for r in shown
        ]
        bars = ax.bar(
            [r.name for r in shown],
            [r.median_us or 0.0 for r in shown],
            yerr=[r.spread_us or 0.0 for r in shown],
            color=colors,
            capsize=4,
        )
        for bar, row in zip(bars, shown, strict=True):
            ax.annotate(
                _bar_label(row),
                (bar.get_x() + bar.get_width() / 2, bar.get_height() + (row.spread_us or 0.0)),
                ha="center",
                va="bottom",
                fontsize=8,
                xytext=(0, 2),
                textcoords="offset points",
            )
        title = panel.short_title
        if unmeasured:
            title += "\nnot measured (no bar): " + ", ".join(unmeasured)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("median (µs)")
        ax.margins(y=0.15)
    fig.tight_layout()
    return fig
