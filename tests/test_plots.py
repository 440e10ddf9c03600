"""What the plots say, read from their matplotlib figures: `report --plot` of a tuning cache
(a bar per measured variant, none for a variant never measured) and of a tune-model report
(each dispatch's speedup, or why nothing was kept)."""

from __future__ import annotations

from autotune_model.report import (
    KEPT,
    NOISE,
    REFERENCE,
    SLOWER,
    CandidateResult,
    DispatchResult,
    ModelTiming,
    TuneReport,
)
from autotune_model.report_view import report_figure, write_plot
from autotune_runtime.report import Panel, build_rows, variant_figure


def texts(figure) -> list[str]:
    """Every annotation of the figure's axes."""
    return [t.get_text() for ax in figure.axes for t in ax.texts]


def test_a_variant_never_measured_has_no_bar_and_the_title_says_so():
    summaries = [
        {"variant": "v0", "samples": 10, "median_ns": 2000.0, "spread_ns": 100.0},
        {"variant": "v1", "samples": 10, "median_ns": 1000.0, "spread_ns": 50.0},
        {"variant": "v2", "failed": True},
        {"variant": "v3"},  # never measured (an imported entry, say)
    ]
    panel = Panel("ex::g", (64,), "v1", build_rows(summaries, "v1"))
    (axes,) = variant_figure([panel]).axes
    assert [t.get_text() for t in axes.get_xticklabels()] == ["v0", "v1", "v2"]
    assert [t.get_text() for t in axes.texts] == ["2.00x", "winner", "failed"]
    assert axes.get_title() == "ex::g [64]\nnot measured (no bar): v3"


def test_a_decision_without_statistics_is_a_winner_not_measured():
    panel = Panel("ex::g", (), "v1", build_rows(None, "v1"))
    assert texts(variant_figure([panel])) == ["winner (not measured)"]


def dispatch(name: str, *candidates: CandidateResult) -> DispatchResult:
    return DispatchResult(name, "linalg.matmul", [8, 8, 8], ["8x8xf32"], list(candidates))


def model_report() -> TuneReport:
    report = TuneReport("m.mlir", "llvm-cpu", None, "online", "local")
    ungrouped = "the model was 3.1 us slower per call with t8 than with IREE's own"
    report.dispatches = [
        dispatch("d0_kept", CandidateResult("default", REFERENCE, 1000.0),
                 CandidateResult("t8", KEPT, 800.0)),
        dispatch("d1_noise", CandidateResult("default", REFERENCE, 1000.0),
                 CandidateResult("t8", NOISE, 990.0), CandidateResult("t4", SLOWER, 1500.0)),
        dispatch("d2_slower_in_the_model", CandidateResult("default", REFERENCE, 1000.0),
                 CandidateResult("t8", SLOWER, 700.0, detail=ungrouped)),
        dispatch("d3_none_faster", CandidateResult("default", REFERENCE, 1000.0),
                 CandidateResult("t8", SLOWER, 1200.0)),
    ]  # fmt: skip
    report.timing = ModelTiming("main", 100_000.0, 80_000.0, 50, settle_calls=0)
    return report


def test_a_model_plot_labels_speedups_and_says_why_nothing_was_kept():
    figure = report_figure(model_report())
    (axes,) = figure.axes
    names = [t.get_text() for t in axes.get_yticklabels()]
    assert names == [
        "d0_kept",
        "d1_noise",
        "d2_slower_in_the_model",
        "d3_none_faster",
        "@main (end to end)",
    ]
    assert texts(figure) == [
        "1.25x",
        "not kept: within noise",
        "not kept: slower in the model",
        "not kept: none faster",
        "1.25x",
    ]
    grayed = [t.get_text() for t in axes.get_yticklabels() if t.get_color() == "tab:gray"]
    assert grayed == ["d1_noise", "d2_slower_in_the_model", "d3_none_faster"]


def test_a_model_plot_is_written_as_its_suffix_says(tmp_path):
    write_plot(model_report(), tmp_path / "m.svg")
    assert (tmp_path / "m.svg").read_text().startswith("<?xml")
    assert "not kept: within noise" in (tmp_path / "m.svg").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.svg"]
