"""What the commands show fits the screen and cuts no name: the progress bars, the
runtime's tables (`tune`'s decisions, `report`'s variants) and tune-model's report, on a
terminal of 80 columns and on a pipe with `COLUMNS` set."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from autotune_runtime.progress import TerminalProgress

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
