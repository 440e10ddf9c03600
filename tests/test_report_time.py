"""The report's first lines say where the model's time is: the tuned dispatches that hold
most of it (time alone times runs per call, against the build's time per call) and what
tuning did to each."""

from __future__ import annotations

from small_models import MLP, SMALL, fake_benchmark

from autotune_model import tune_model
from autotune_model.report import (
    KEPT,
    NOISE,
    REFERENCE,
    SLOWER,
    CandidateResult,
    DispatchResult,
    ModelGain,
    ModelTiming,
    TuneReport,
    summary_lines,
    where_the_time_is,
)


def a_report() -> TuneReport:
    small = DispatchResult(
        "small",
        "linalg.matmul",
        [4],
        ["4xf32"],
        [CandidateResult("default", REFERENCE, 10_000.0), CandidateResult("t1", KEPT, 5_000.0)],
    )
    conv = DispatchResult(
        "conv",
        "linalg.depthwise_conv_2d_nhwc_hwc",
        [8],
        ["8xf32"],
        [
            CandidateResult("default", REFERENCE, 100_000.0),
            CandidateResult("t1", SLOWER, 40_000.0, "the model was 12.0 us slower per call"),
            CandidateResult("t2", NOISE, 80_000.0),
        ],
        per_call=3,
    )
    gained = ModelGain(4_000.0, 3_500.0, 800.0, 1, 400_000.0, "as promised")
    small.model_gain = gained
    report = TuneReport("m.mlir", "llvm-cpu", None, "static", "serial", [small, conv])
    report.skipped["norm"] = "elementwise work or data movement"
    report.timing = ModelTiming("f", 400_000.0, 395_000.0, 20)
    return report


def test_the_dispatches_holding_most_of_the_time_come_first_with_what_tuning_did():
    lines = where_the_time_is(a_report())
    assert lines[0] == (
        "where the time is: the 2 tuned dispatches take 310.0 us per call alone, 78% of the "
        "stock build's time per call (400.0 us); the largest:"
    )
    # conv runs 3 times a call: 300 us of the 400, before `small`'s 10 us
    assert lines[1].startswith("  conv (linalg.depthwise_conv_2d_nhwc_hwc, 3 times per call): 75%")
    assert lines[1].endswith(
        "IREE's own: the fastest candidate, t1, ran 2.50x alone (the model was 12.0 us slower "
        "per call)"
    )
    assert lines[2] == (
        "  small (linalg.matmul): 2%, 10.0 us each; runs t1, 2.00x faster alone, 3.5 us per "
        "call in the model"
    )
    assert "1 dispatch not tuned" in lines[3]
    assert summary_lines(a_report())[: len(lines)] == lines


def test_how_often_a_call_runs_each_dispatch_is_kept_in_the_saved_report():
    report = a_report()
    again = TuneReport.from_json(report.to_json())
    assert [d.per_call for d in again.dispatches] == [1, 3]
    assert where_the_time_is(again) == where_the_time_is(report)


def test_tune_model_reports_how_often_a_call_runs_each_tuned_dispatch():
    tuned = tune_model(MLP, SMALL, benchmark_job=fake_benchmark)
    assert [d.per_call for d in tuned.report.dispatches] == [1, 1]
    first = summary_lines(tuned.report)[0]
    assert first.startswith("where the time is: the 2 tuned dispatches take ")
