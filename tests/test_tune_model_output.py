"""What `tune-model` says: errors at their place in the model's file, the report's table
and summary lines, and its progress (on a terminal, from Python, quiet). The jobs are
injected where a verdict must not depend on the machine."""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest
from conftest import DATA
from rich.console import Console
from small_models import after_where_the_time_is

import autotune_model.pipeline as pipeline
import autotune_model.tuning_pass as tuning_pass
import autotune_model.tuning_setup as tuning_setup
from autotune_dialect.diagnostics import DiagnosticError
from autotune_model import TuneOptions, tune_model
from autotune_model.bench import BenchmarkJob, Compiled, CompileJob, Measured
from autotune_model.report import (
    KEPT,
    NOISE,
    REFERENCE,
    SLOWER,
    CandidateResult,
    DispatchResult,
    ModelTiming,
    TuneReport,
    summary_lines,
)
from autotune_model.report_view import print_report
from lowering.driver import compile

SRC = DATA / "flow" / "src"
MLP = (SRC / "mlp.mlir").read_text()
DYNAMIC = (SRC / "dynamic.mlir").read_text()
SMALL = TuneOptions(candidates=3, top_k=1, time_model=False, combine=False)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# --- errors -------------------------------------------------------------------------------


MATMUL_4X4 = "linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%0 : tensor<4x4xf32>) -> tensor<4x4xf32>"
BAD_MODELS = {
    "undefined value": (
        "func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "  %0 = tensor.empty() : tensor<4x4xf32>\n"
        f"  %1 = {MATMUL_4X4}\n"
        "  return %1 : tensor<4x4xf32>\n}\n",
        "3:30: error: use of undeclared SSA value %w",
    ),
    "matmul shapes": (
        "func.func @f(%x: tensor<4x4xf32>, %w: tensor<8x4xf32>) -> tensor<4x4xf32> {\n"
        "  %0 = tensor.empty() : tensor<4x4xf32>\n"
        f"  %1 = {MATMUL_4X4.replace('tensor<4x4xf32>, tensor<4x4xf32>', 'tensor<4x4xf32>, tensor<8x4xf32>')}\n"
        "  return %1 : tensor<4x4xf32>\n}\n",
        "3:8: error: 'linalg.matmul' op inferred input/output operand #1 has shape's "
        "dimension #0 to be 4, but found 8",
    ),
    "StableHLO typo": (
        "func.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "  %0 = stablehlo.dot_genral %x, %w, contracting_dims = [1] x [0] : "
        "(tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "  return %0 : tensor<4x4xf32>\n}\n",
        "2:8: error: custom op 'stablehlo.dot_genral' is unknown",
    ),
}


@pytest.mark.parametrize("defect", list(BAD_MODELS))
def test_an_error_in_the_model_is_at_its_place_in_the_file_as_compile_says_it(defect):
    text, expected = BAD_MODELS[defect]
    with pytest.raises(DiagnosticError) as caught:
        tune_model(text, SMALL, filename="models/bad.mlir")
    line, column = (int(n) for n in expected.split(":")[:2])
    source_line = text.splitlines()[line - 1]
    assert str(caught.value) == (
        f"models/bad.mlir:{expected}\n{source_line}\n{' ' * (column - 1)}^"
    )
    with pytest.raises(DiagnosticError) as compiled:
        compile(text, filename="models/bad.mlir")
    assert str(compiled.value) == str(caught.value)


TWO_FUNCTIONS = """func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
"""


def test_input_and_function_errors_point_at_the_signature_of_the_function():
    signature = DYNAMIC.splitlines()[1]
    assert signature.startswith("func.func @dynamic(")

    def error(text, **options) -> str:
        with pytest.raises(DiagnosticError) as caught:
            tune_model(text, replace(SMALL, **options), filename="dyn.mlir")
        return str(caught.value)

    assert error(DYNAMIC) == (
        "dyn.mlir:2:1: error: argument 0 of @dynamic is tensor<?x256xf32>: give the example "
        f"shape of every argument (--input 40x256xf32, one per argument)\n{signature}\n^"
    )
    assert error(DYNAMIC, input_shapes=("4x256",)) == (
        f"dyn.mlir:2:1: error: @dynamic takes 2 arguments; 1 input shape was given\n{signature}\n^"
    )
    assert error(DYNAMIC, input_shapes=("4x255", "256x256")) == (
        "dyn.mlir:2:1: error: input shape 4x255 does not fit argument 0 of @dynamic "
        f"(tensor<?x256xf32>)\n{signature}\n^"
    )
    assert error(DYNAMIC, function="nope") == (
        f"dyn.mlir:2:1: error: the model has no public function @nope (it has @dynamic)\n"
        f"{signature}\n^"
    )
    assert error(TWO_FUNCTIONS) == (
        "dyn.mlir:4:1: error: the model has 2 public functions (@a, @b); name the one to tune "
        "with --function\nfunc.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {\n^"
    )
    assert (
        error("") == "error: dyn.mlir: the model has no public function to tune (the file is empty)"
    )


# --- the report ---------------------------------------------------------------------------


def fake_compile(job: CompileJob) -> Compiled:
    """Every candidate builds (the benchmark below needs no module)."""
    return Compiled(job.dispatch, job.candidate, b"", None, 0.0)


def noise_benchmark(job: BenchmarkJob) -> list[Measured]:
    """IREE's own takes 1000 ns, the first other candidate 2% less, the others more."""
    times = [
        1000 if candidate.is_default else 980 if index == 1 else 1100
        for index, (candidate, _) in enumerate(job.candidates)
    ]
    return [
        Measured(job.dispatch, c, [t], []) for (c, _), t in zip(job.candidates, times, strict=True)
    ]


class Recorder:
    """A progress that records its phases, counted and not."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, int]] = []
        self.statuses: list[str] = []

    def phase(self, name: str, total: int) -> None:
        self.phases.append((name, total))

    def advance(self, label: str) -> None:
        pass

    def status(self, name: str) -> None:
        self.statuses.append(name)


def test_a_candidate_within_noise_is_said_so_and_no_phase_is_empty():
    recorder = Recorder()
    tuned = tune_model(
        MLP,
        replace(SMALL, combine=True),  # round two finds nothing to join
        progress=recorder,
        compile_job=fake_compile,
        benchmark_job=noise_benchmark,
    )
    assert len(tuned.report.dispatches) == 2
    for dispatch in tuned.report.dispatches:
        default, noise, *others = dispatch.candidates
        assert default.fate == REFERENCE
        assert (noise.fate, noise.detail) == (
            NOISE,
            "2.0% faster than IREE's own: within noise (< 3%)",
        )
        assert [c.fate for c in others] == [SLOWER] * len(others) and others
        assert dispatch.kept == []
    assert recorder.phases == [("compile candidates", 8), ("benchmark dispatches", 2)]
    assert recorder.statuses == [
        "compiling the model to the flow phase",
        "analysing the dispatches",
        "building the tuned module",
        "compiling the stock build",
        "checking the tuned module's results against the stock build's",
    ]


class Chosen(Exception):
    """Raised where the option sets would be built and timed."""


def test_choosing_build_options_is_shown_while_it_runs(monkeypatch):
    recorder = Recorder()

    def choose_base(*args, **kwargs):
        raise Chosen(recorder.statuses[-1])

    monkeypatch.setattr(
        tuning_setup, "model_builds_timer", lambda *args: lambda stock, other, resolve=None: [1.0]
    )
    monkeypatch.setattr(tuning_pass, "compile_lowered", lambda *args, **kwargs: b"vmfb")
    monkeypatch.setattr(tuning_pass, "choose_base", choose_base)
    with pytest.raises(Chosen) as shown:
        tune_model(MLP, replace(SMALL, time_model=True, base="auto"), progress=recorder)
    assert str(shown.value) == (
        "choosing build options: building and timing stock, data-tiling, data-tiling+ukernels"
    )


def test_candidates_are_timed_on_the_device_named_and_the_report_says_so():
    devices = []

    def benchmark(job: BenchmarkJob) -> list[Measured]:
        devices.append(job.device)
        return noise_benchmark(job)

    for device, timed_on in ((None, "local-task"), ("local-sync", "local-sync")):
        devices.clear()
        tuned = tune_model(
            MLP,
            replace(SMALL, device=device, base="stock"),
            compile_job=fake_compile,
            benchmark_job=benchmark,
        )
        assert devices == [timed_on] * 2
        assert tuned.report.device == timed_on
        assert TuneReport.from_json(tuned.report.to_json()).device == timed_on
        assert any(f"benchmarked on {timed_on} in" in line for line in summary_lines(tuned.report))
    with pytest.raises(DiagnosticError, match="device 'local-sync' does not run cuda modules"):
        tune_model(MLP, replace(SMALL, target="cuda", arch="sm_80", device="local-sync"))


def test_a_model_with_no_variant_kept_is_said_to_be_the_stock_build():
    report = TuneReport("m.mlir", "llvm-cpu", None, "online", "local")
    candidates = [CandidateResult("default", REFERENCE, 1000.0), CandidateResult("t8", SLOWER)]
    report.dispatches = [DispatchResult("d_matmul", "linalg.matmul", [4], ["4xf32"], candidates)]
    report.timing = ModelTiming("mlp", 100_000.0, 106_300.0, 50, settle_calls=0)
    lines = after_where_the_time_is(report)
    assert lines[0] == (
        "end to end (@mlp, 50 calls each): no variant was kept, so the module is the stock "
        "build (stock 100.0 us, this build 106.3 us: the difference is noise)"
    )
    assert not any("tuned/stock" in line or "online tuning" in line for line in lines)
    candidates[1].fate = KEPT
    assert after_where_the_time_is(report)[:2] == [
        "end to end (@mlp, 50 calls each): stock 100.0 us, tuned 106.3 us, tuned/stock "
        "1.063 (0.94x)",
        "online tuning: every group settled after 0 calls",
    ]


def long_named_report() -> TuneReport:
    report = TuneReport("models/mlp.mlir", "llvm-cpu", None, "online", "local")
    report.dispatches = [
        DispatchResult(
            f"mlp_dispatch_{i}_matmul_16x512x256_f32",
            "linalg.matmul",
            [16, 512, 256],
            ["16x256xf32", "256x512xf32", "512xf32"],
            [
                CandidateResult("default", REFERENCE, 1000.0),
                CandidateResult(f"r4_t16x6{i}", KEPT, 800.0),
            ],
        )
        for i in range(2)
    ]
    return report


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
@pytest.mark.parametrize("width", [80, 200])
def test_names_in_the_report_are_never_cut(terminal, width):
    report = long_named_report()
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system=None)
    print_report(report, console)
    lines = ANSI.sub("", out.getvalue()).splitlines()
    assert "…" not in out.getvalue()
    for dispatch in report.dispatches:
        assert any(dispatch.export in line for line in lines), lines
        assert any(dispatch.kept[0] in line for line in lines), lines


def test_tune_model_shows_progress_where_a_person_watches_unless_quiet(monkeypatch, capsys):
    jobs = {"compile_job": fake_compile, "benchmark_job": noise_benchmark}
    monkeypatch.setattr(pipeline, "watched", lambda: True)
    tune_model(MLP, SMALL, **jobs)
    phases = re.findall(r"^(.+): (\d+)/(\d+) in ", capsys.readouterr().err, re.MULTILINE)
    assert phases == [("compile candidates", "8", "8"), ("benchmark dispatches", "2", "2")]
    tune_model(MLP, SMALL, quiet=True, **jobs)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(pipeline, "watched", lambda: False)  # a script's output, say
    tune_model(MLP, SMALL, **jobs)
    assert capsys.readouterr().err == ""
