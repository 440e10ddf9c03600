"""What the commands show fits the screen and cuts no name: the progress bars, the
runtime's tables (`tune`'s decisions, `report`'s variants) and tune-model's report, on a
terminal of 80 columns and on a pipe with `COLUMNS` set."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from test_tune_model_output import long_named_report

from autotune_model.report_view import print_report
from autotune_runtime.cli_common import console
from autotune_runtime.progress import TerminalProgress
from autotune_runtime.report import Panel, build_rows, show_decisions, show_variants

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LABEL = "mlp_dispatch_0_matmul_16x512x256_f32 r4_t16x64"


def progress_lines(progress: TerminalProgress, width: int) -> list[str]:
    """What the bars show now, as lines of text."""
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(progress.bars.get_renderable())
    return out.getvalue().splitlines()


@pytest.mark.parametrize("width", [80, 60])
def test_progress_shows_whole_names_within_the_width(width):
    console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system=None)
    phase = "tuning 1 group, 1 workload key (3 variants)"
    with TerminalProgress(console) as progress:
        progress.phase(phase, 3)
        progress.update(1, "5 samples")
        progress.phase("benchmark dispatches", 9)
        for _ in range(3):
            progress.advance(LABEL)
        progress.status("choosing build options: building and timing stock, data-tiling")
        lines = progress_lines(progress, width)
    assert all(len(line) <= width for line in lines), lines
    assert "…" not in "".join(lines)
    assert any(phase in line and "1/3" in line for line in lines) or (
        phase in lines and any(line.lstrip("━╸ ").startswith("1/3") for line in lines)
    ), lines
    assert "  5 samples" in lines
    bar = re.compile(r"benchmark dispatches ━+.* 3/9 \d:\d\d:\d\d eta .*")
    assert any(bar.fullmatch(line) for line in lines), lines
    assert f"  {LABEL}" in lines
    status = "choosing build options: building and timing stock, data-tiling"
    assert status in " ".join(line.strip() for line in lines)  # (folded at 60 columns)


def test_a_status_shows_its_time_and_goes_at_the_next_phase(capsys):
    console = Console(file=io.StringIO(), width=80, force_terminal=True, color_system=None)
    with TerminalProgress(console) as progress:
        progress.status("compiling the stock build")
        assert re.fullmatch(
            r"compiling the stock build \S+ +\d:\d\d:\d\d", progress_lines(progress, 80)[0]
        )
        progress.phase("compile candidates", 2)
        assert progress_lines(progress, 80)[0].startswith("compile candidates ")
        assert len(progress_lines(progress, 80)) == 1
    piped = Console(file=io.StringIO(), force_terminal=False)
    with TerminalProgress(piped) as progress:  # a status writes no line to a pipe
        progress.status("compiling the stock build")
        progress.phase("compile candidates", 1)
        progress.advance("d0 t8")
    assert re.fullmatch(r"compile candidates: 1/1 in \d+\.\d s\n", capsys.readouterr().err)


# --- tables -------------------------------------------------------------------------------


def panels() -> list[Panel]:
    """A group of a tuned model (long names) and one decided in a tie-break."""
    summaries = [
        {"variant": "r4_t16x64_vector8", "samples": 12, "median_ns": 12e3, "spread_ns": 300},
        {"variant": "default", "samples": 9, "median_ns": 20e3, "eliminated": True},
    ]
    return [
        Panel(
            "module::mlp_dispatch_0_matmul_16x512x256_f32__tuned",
            (16, 512, 256),
            "r4_t16x64_vector8",
            build_rows(summaries, "r4_t16x64_vector8"),
            device="local-task",
            explored_calls=21,
            source="tuned",
        ),
        Panel(
            "kernels::matmul",
            (128,),
            "default",
            build_rows(summaries, "default"),
            explored_calls=None,
            source="cache",
            tie={"tied": ["default", "r4_t16x64_vector8"], "band": 0.03},
        ),
    ]


def shown(show, console_width: int | None = None, terminal: bool = True) -> list[str]:
    """What `show(console)` prints, as lines of text."""
    out = io.StringIO()
    console = Console(file=out, width=console_width, force_terminal=terminal, color_system=None)
    show(console)
    return ANSI.sub("", out.getvalue()).splitlines()


def assert_whole_within(lines: list[str], names: list[str], width: int) -> None:
    assert all(len(line) <= width for line in lines), lines
    assert "…" not in "".join(lines), lines
    for name in names:
        assert any(name in line for line in lines), (name, lines)


NAMES = [
    "module::mlp_dispatch_0_matmul_16x512x256_f32__tuned",
    "kernels::matmul",
    "r4_t16x64_vector8",
    "[16, 512, 256]",
    "tie-break",
]


@pytest.mark.parametrize("width", [80, 60])
def test_tunes_decisions_show_whole_names_on_a_narrow_terminal(width):
    lines = shown(lambda console: show_decisions(console, panels()), width)
    assert_whole_within(lines, NAMES, width)
    joined = " ".join(line.strip() for line in lines)
    assert (
        "[16, 512, 256]: r4_t16x64_vector8, median 12.00 µs, next best 1.67x, calls 21, tuned"
        in joined
    )


def test_tunes_decisions_are_a_table_where_they_fit():
    lines = shown(lambda console: show_decisions(console, panels()), 160)
    assert_whole_within(lines, NAMES, 160)
    row = next(line for line in lines if "mlp_dispatch_0" in line)
    assert [c.strip() for c in row.split("│")] == [
        "module::mlp_dispatch_0_matmul_16x512x256_f32__tuned",
        "[16, 512, 256]",
        "r4_t16x64_vector8",
        "12.00",
        "1.67x",
        "21",
        "tuned",
    ]


@pytest.mark.parametrize("width", [80, 50])
def test_reports_variants_show_whole_names_on_a_narrow_terminal(width):
    panel = panels()[0]
    panel.rows.append(build_rows([{"variant": "t8x8_unrolled_eliminated"}], None)[0])
    lines = shown(lambda console: show_variants(console, panel), width)
    names = ["r4_t16x64_vector8", "default", "t8x8_unrolled_eliminated", "eliminated", "winner"]
    assert_whole_within(lines, names, width)


def test_a_short_variant_table_fits_80_columns_as_a_table():
    summaries = [
        {"variant": "mm_tile8", "samples": 10, "median_ns": 2e4, "eliminated": True},
        {"variant": "mm_tile64", "samples": 12, "median_ns": 1.2e4},
    ]
    panel = Panel("kernels::matmul", (), "mm_tile64", build_rows(summaries, "mm_tile64"))
    lines = shown(lambda console: show_variants(console, panel), 80)
    assert_whole_within(lines, ["mm_tile8", "mm_tile64", "eliminated", "* winner"], 80)
    assert any(line.startswith("│ mm_tile8 ") for line in lines), lines


def test_a_pipe_honours_columns_and_else_takes_120_or_more(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    show_decisions(console(), panels())
    lines = capsys.readouterr().out.splitlines()
    assert_whole_within(lines, NAMES, 80)
    monkeypatch.delenv("COLUMNS")
    show_decisions(console(), panels())
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split()[0] for line in lines if "│" in line and line.strip()[0] != "│"]
    assert rows == [panel.group for panel in panels()]  # a table, one line per row
    assert_whole_within(lines, NAMES, 200)


def test_tune_models_report_on_a_pipe_honours_columns(monkeypatch):
    report = long_named_report()
    monkeypatch.setenv("COLUMNS", "80")
    lines = shown(lambda console: print_report(report, console), terminal=False)
    names = [d.export for d in report.dispatches] + [d.kept[0] for d in report.dispatches]
    assert_whole_within(lines, names, 80)
    monkeypatch.delenv("COLUMNS")  # one line per row, however long
    lines = shown(lambda console: print_report(report, console), terminal=False)
    assert max(len(line) for line in lines) > 80
    rows = [line for line in lines if line.startswith("│ mlp_dispatch_")]
    assert [row.split()[1] for row in rows] == [d.export for d in report.dispatches]
