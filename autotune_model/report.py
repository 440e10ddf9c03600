"""What tuning a model found: per dispatch, each candidate's fate and time; for the model,
its end-to-end time against the stock build; the wall time spent. Written as JSON next to
the tuned module, shown as a table (`rich`) and as a bar chart (`matplotlib`)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.table import Table

REPORT_VERSION = 1

# The fate of a candidate.
REFERENCE = "reference"  # IREE's own configuration: always a variant, first
KEPT = "kept"  # a variant of the tuned dispatch's group
SLOWER = "slower"  # correct, but not among the top-k faster than the default
FAILED_TO_COMPILE = "failed to compile"
FAILED_TO_RUN = "failed to run"
WRONG = "wrong results"
FAILED = (FAILED_TO_COMPILE, FAILED_TO_RUN, WRONG)


@dataclass
class CandidateResult:
    """One candidate of a dispatch: its name, what became of it, its median time."""

    name: str
    fate: str
    median_ns: float | None = None
    detail: str | None = None


@dataclass
class DispatchResult:
    """One tuned dispatch: its export, the sizes it was benchmarked at, its candidates."""

    export: str
    root_op: str
    workload: list[int]
    operands: list[str]  # the tensor operands' shapes, as `16x256xf32`
    candidates: list[CandidateResult] = field(default_factory=list)

    @property
    def default_ns(self) -> float | None:
        return self.candidates[0].median_ns if self.candidates else None

    @property
    def best(self) -> CandidateResult | None:
        """The fastest variant of the tuned module (IREE's own when none was kept)."""
        timed = [c for c in self.candidates if c.fate in (REFERENCE, KEPT) and c.median_ns]
        return min(timed, key=lambda c: c.median_ns) if timed else None  # type: ignore[arg-type, return-value]

    @property
    def speedup(self) -> float | None:
        best = self.best
        if best is None or not self.default_ns or not best.median_ns:
            return None
        return self.default_ns / best.median_ns

    @property
    def failed(self) -> int:
        return sum(1 for c in self.candidates if c.fate in FAILED)

    @property
    def kept(self) -> list[str]:
        return [c.name for c in self.candidates if c.fate == KEPT]


@dataclass
class ModelTiming:
    """End to end: median time of one call of the model, stock build and tuned module,
    measured interleaved in one run."""

    function: str
    stock_ns: float
    tuned_ns: float
    calls: int
    settle_calls: int | None = None
    """`online`: the calls the tuned module took until every group had decided for the
    sizes it saw (before the timing); None for the other policies."""
    settled: bool = True
    """Whether it did within the calls allowed (`time_model`'s `warmup_calls`)."""

    @property
    def ratio(self) -> float:
        return self.tuned_ns / self.stock_ns


@dataclass
class TuneReport:
    """Everything `tune_model` measured and decided."""

    model: str
    target: str
    arch: str | None
    policy: str
    executor: str
    dispatches: list[DispatchResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # export -> why not tuned
    notes: list[str] = field(default_factory=list)
    timing: ModelTiming | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> wall time
    # Largest resident memory while tuning (MB): this process, and the largest of the
    # processes it started (iree-compile); None where not measured.
    peak_rss_mb: dict[str, int] | None = None

    def to_json(self) -> str:
        data = asdict(self)
        data["version"] = REPORT_VERSION
        return json.dumps(data, indent=2, allow_nan=False, default=str)

    @classmethod
    def from_json(cls, text: str) -> TuneReport:
        """A report written by `to_json`; ValueError names what is wrong."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"not JSON ({err.msg} at line {err.lineno})") from None
        if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
            raise ValueError(f"not a tune-model report of version {REPORT_VERSION}")
        try:
            dispatches = [
                DispatchResult(
                    d["export"],
                    d["root_op"],
                    list(d["workload"]),
                    list(d["operands"]),
                    [CandidateResult(**c) for c in d["candidates"]],
                )
                for d in data["dispatches"]
            ]
            timing = ModelTiming(**data["timing"]) if data.get("timing") else None
            return cls(
                data["model"],
                data["target"],
                data["arch"],
                data["policy"],
                data["executor"],
                dispatches,
                dict(data["skipped"]),
                list(data["notes"]),
                timing,
                dict(data["seconds"]),
                data.get("peak_rss_mb"),
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"a tune-model report with a missing or bad field ({err})") from None


def _us(ns: float | None) -> str:
    return "-" if ns is None or not math.isfinite(ns) else f"{ns / 1000:.1f}"


def dispatch_table(report: TuneReport) -> Table:
    """One row per tuned dispatch: shape, default and best time, speedup, candidates."""
    table = Table(title=f"tune-model {report.model} ({report.target}, policy {report.policy})")
    for column in ("dispatch", "root op", "operands", "default us", "best us", "best", "speedup"):
        table.add_column(
            column, justify="right" if "us" in column or column == "speedup" else "left"
        )
    table.add_column("tried / failed / kept", justify="right")
    for d in report.dispatches:
        best = d.best
        table.add_row(
            d.export,
            d.root_op,
            ", ".join(d.operands),
            _us(d.default_ns),
            _us(best.median_ns if best else None),
            best.name if best else "-",
            f"{d.speedup:.2f}x" if d.speedup else "-",
            f"{len(d.candidates)} / {d.failed} / {len(d.kept)}",
        )
    return table


def summary_lines(report: TuneReport) -> list[str]:
    """The model's end-to-end result, the time spent, and what was dropped or skipped."""
    lines = []
    if report.timing is not None:
        t = report.timing
        lines.append(
            f"end to end (@{t.function}, {t.calls} calls each): stock {_us(t.stock_ns)} us, "
            f"tuned {_us(t.tuned_ns)} us, tuned/stock {t.ratio:.3f} "
            f"({1 / t.ratio:.2f}x)"
        )
        if t.settle_calls is not None:
            state = "every group settled" if t.settled else "not every group had settled"
            lines.append(f"online tuning: {state} after {t.settle_calls} calls")
    spent = ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in report.seconds.items())
    lines.append(f"tuning time: {spent}")
    if report.peak_rss_mb:
        memory = report.peak_rss_mb
        lines.append(
            f"peak memory: {memory['tuner']} MB (tuner), {memory['compiler']} MB (largest "
            "iree-compile)"
        )
    for d in report.dispatches:
        for c in d.candidates:
            if c.fate in FAILED:
                lines.append(
                    f"dropped {d.export} {c.name}: {c.fate}"
                    + (f" ({c.detail})" if c.detail else "")
                )
    for export, why in report.skipped.items():
        lines.append(f"not tuned {export}: {why}")
    return lines + report.notes


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


def print_report(report: TuneReport) -> None:
    """The table and the summary lines on standard output."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 160)
    if report.dispatches:
        console.print(dispatch_table(report))
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
