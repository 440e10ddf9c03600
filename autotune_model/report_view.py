"""A tune-model report on the screen and as a picture: the table of dispatches (or two
lines per dispatch where a terminal is too narrow), the summary lines, a bar chart
(`matplotlib`); `iree-autotune report` shows a saved one."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from autotune_model.report import (
    CACHE,
    CandidateResult,
    DispatchResult,
    TuneReport,
    format_us,
    summary_lines,
)
from autotune_runtime.report import show_fitted


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


def write_plot(report: TuneReport, path: str | Path) -> None:
    """A bar chart: default and best time of every dispatch, and the model end to end."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [
        (d.export, d.default_ns, d.best.median_ns if d.best else None) for d in report.dispatches
    ]
    if report.timing is not None:
        rows.append(
            (
                f"@{report.timing.function} (end to end)",
                report.timing.stock_ns,
                report.timing.tuned_ns,
            )
        )
    figure, axes = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.5))
    names = [r[0] for r in rows]
    ys = range(len(rows))
    default = [(r[1] or 0) / 1000 for r in rows]
    best = [(r[2] or 0) / 1000 for r in rows]
    axes.barh([y + 0.2 for y in ys], default, height=0.4, label="default / stock")
    axes.barh([y - 0.2 for y in ys], best, height=0.4, label="tuned")
    axes.set_yticks(list(ys), names, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("median time (us)")
    axes.set_title(f"tune-model {report.model} ({report.target})")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


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
        print(f"plot written to {plot}")
    return 0
