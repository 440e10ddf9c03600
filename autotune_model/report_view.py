"""A tune-model report on the screen and as a picture: the table of dispatches (or two
lines per dispatch where a terminal is too narrow), the summary lines, a bar chart
(`matplotlib`); `iree-autotune report` shows a saved one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from autotune_model.report import (
    CACHE,
    FAILED,
    NOISE,
    REFERENCE,
    CandidateResult,
    DispatchResult,
    TuneReport,
    format_us,
    summary_lines,
)
from autotune_runtime.report import save_figure, show_fitted

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def _shown(d: DispatchResult) -> tuple[CandidateResult | None, str]:
    """The variant a row shows and its name: what a frozen module runs (and where the
    choice came from), else the fastest variant of the group."""
    if not d.frozen:
        best = d.best
        return best, best.name if best else "-"
    sources = sorted({f.source for f in d.frozen})
    named = {c.name: c for c in d.candidates}
    only = named.get(d.frozen[0].variant) if len(d.frozen) == 1 else None
    return only, ", ".join(map(str, d.frozen)) + f" ({', '.join(sources)})"


def _row(d: DispatchResult) -> tuple[str, ...]:
    shown, name = _shown(d)
    time = shown.median_ns if shown else None
    speedup = d.default_ns / time if d.default_ns and time else None
    return (
        d.export,
        d.root_op,
        ", ".join(d.operands),
        format_us(d.default_ns),
        format_us(time),
        name,
        f"{speedup:.2f}x" if speedup else "-",
        "from the cache" if _from_cache(d) else f"{len(d.candidates)}/{d.failed}/{len(d.kept)}",
    )


def _from_cache(d: DispatchResult) -> bool:
    """Whether the tuning cache decided the dispatch (which was then not tuned)."""
    return bool(d.frozen) and all(f.source == CACHE for f in d.frozen)


def _chosen(report: TuneReport) -> str:
    return "frozen" if any(d.frozen for d in report.dispatches) else "best"


def dispatch_table(report: TuneReport) -> Table:
    """One row per tuned dispatch: shape, default and best time, speedup, candidates; for
    a frozen module, what it runs (`frozen`) in place of the best. Names are never cut."""
    table = Table(title=f"tune-model {report.model} ({report.target}, policy {report.policy})")
    chosen = _chosen(report)
    for column in ("dispatch", "root op", "operands"):
        table.add_column(column, overflow="fold")
    for column in ("default us", f"{chosen} us"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column(chosen, overflow="fold")
    table.add_column("speedup", justify="right", no_wrap=True)
    table.add_column("tried/failed/kept", justify="right", no_wrap=True)
    for d in report.dispatches:
        table.add_row(*_row(d))
    return table


def dispatch_lines(report: TuneReport) -> list[str]:
    """The table's rows as lines, for a terminal too narrow for the table: two lines per
    dispatch, its whole name first."""
    chosen = _chosen(report)
    lines = [f"tune-model {report.model} ({report.target}, policy {report.policy})"]
    for d in report.dispatches:
        export, root, operands, default, time, name, speedup, counts = _row(d)
        lines.append(f"{export} ({root}: {operands})")
        lines.append(
            f"  default {default} us, {chosen} {name} {time} us, speedup {speedup}, "
            f"tried/failed/kept {counts}"
        )
    return lines


def not_kept(d: DispatchResult) -> str:
    """Why a dispatch runs IREE's own configuration, in a few words (for the plot)."""
    if _from_cache(d):
        return "from the tuning cache"
    tried = [c for c in d.candidates if c.fate != REFERENCE and c.fate not in FAILED]
    timed = [c for c in tried if c.median_ns]
    if not timed:
        return "not kept: no candidate ran"
    fastest = min(timed, key=lambda c: c.median_ns or 0.0)
    detail = fastest.detail or ""
    if fastest.fate == NOISE:
        return "not kept: within noise"
    if detail.startswith("the model was"):
        return "not kept: slower in the model"
    if detail.startswith("the tuned module failed"):
        return "not kept: the module failed its check"
    return "not kept: none faster"


def plot_rows(report: TuneReport) -> list[tuple[str, float | None, float | None, str]]:
    """The plot's bars: name, default and tuned time (ns), and the tuned bar's label (the
    speedup, or why nothing was kept); the model end to end last, where it was timed."""
    rows = []
    for d in report.dispatches:
        tuned = d.best_ns
        if d.kept or _from_cache(d):
            speedup = d.speedup
            label = f"{speedup:.2f}x" if speedup else "-"
            label += " (from the tuning cache)" if _from_cache(d) else ""
        else:
            label = not_kept(d)
        rows.append((d.export, d.default_ns, tuned, label))
    timing = report.timing
    if timing is not None:
        label = f"{timing.stock_ns / timing.tuned_ns:.2f}x" if timing.tuned_ns else "-"
        rows.append((f"@{timing.function} (end to end)", timing.stock_ns, timing.tuned_ns, label))
    return rows


def report_figure(report: TuneReport) -> Figure:
    """A bar chart: default and tuned time of every dispatch, and the model end to end;
    each tuned bar says its speedup, or why nothing was kept (those names in gray)."""
    from matplotlib.figure import Figure

    rows = plot_rows(report)
    figure = Figure(figsize=(9, 0.5 * len(rows) + 1.5), dpi=100)
    axes = figure.add_subplot()
    ys = range(len(rows))
    axes.barh(
        [y + 0.2 for y in ys],
        [(r[1] or 0) / 1000 for r in rows],
        height=0.4,
        label="default / stock",
    )
    tuned = axes.barh(
        [y - 0.2 for y in ys], [(r[2] or 0) / 1000 for r in rows], height=0.4, label="tuned"
    )
    for bar, (_, _, _, label) in zip(tuned, rows, strict=True):
        axes.annotate(
            label,
            (bar.get_width(), bar.get_y() + bar.get_height() / 2),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
            color="tab:gray" if label.startswith("not kept") else "black",
        )
    axes.set_yticks(list(ys), [r[0] for r in rows], fontsize=7)
    for tick, row in zip(axes.get_yticklabels(), rows, strict=True):
        if row[3].startswith("not kept"):
            tick.set_color("tab:gray")
    axes.invert_yaxis()
    axes.margins(x=0.3)  # room for the labels
    axes.set_xlabel("median time (us)")
    axes.set_title(f"tune-model {report.model} ({report.target})")
    axes.legend(loc="lower right", fontsize=7)
    figure.tight_layout()
    return figure


def write_plot(report: TuneReport, path: str | Path) -> None:
    """`report_figure`, written atomically to `path` (the format follows the suffix)."""
    save_figure(report_figure(report), path)


def print_report(report: TuneReport, console: Console | None = None) -> None:
    """The table (or its lines, where the screen or `COLUMNS` is too narrow for it) and
    the summary lines on standard output (or `console`)."""
    console = console or Console(highlight=False)
    if report.dispatches:  # (a file or a pipe without COLUMNS: one line per row)
        show_fitted(console, dispatch_table(report), dispatch_lines(report))
    else:
        console.print("no dispatch was tuned")
    for line in summary_lines(report):
        console.print(line, markup=False)


def show_report(path: str, plot: str | None) -> int:
    """`iree-autotune report TUNED.tune.json [--plot FILE.png]`: a saved report."""
    from autotune_contracts.errors import DiagnosticError
    from autotune_contracts.files import read_source

    try:
        report = TuneReport.from_json(read_source(path))
    except ValueError as err:
        raise DiagnosticError(f"{path}: {err}") from None
    print_report(report)
    if plot:
        try:
            write_plot(report, plot)
        except OSError as err:
            raise DiagnosticError(f"cannot write {plot}: {err.strerror or err}") from None
        except ValueError as err:  # a suffix of no format matplotlib writes
            raise DiagnosticError(f"{plot}: {err}") from None
        print(f"plot written to {plot}")
    return 0
