"""A dynamic model tuned at several sizes (`--also-at`): each size tuned with the build
options the first chose, and one frozen module that runs, at each workload tuned, the
variant that won there (compared at run time, no host call), the nearest size's elsewhere.
Benchmarks are faked: the winner depends on the rows of the matmul's left operand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from small_models import DYNAMIC, assert_close

from autotune_contracts.errors import DiagnosticError
from autotune_model import TuneOptions, tune_model
from autotune_model.bench import BenchmarkJob, Measured
from autotune_model.report import TUNING, FrozenChoice
from autotune_runtime.session import load

SIZES = TuneOptions(
    candidates=3,
    top_k=1,
    time_model=False,
    combine=False,
    input_shapes=("40x256xf32", "256x256xf32"),
    also_at=(("7x256xf32", "256x256xf32"),),
)


def winner_by_rows(job: BenchmarkJob) -> list[Measured]:
    """`t128x64` the fastest at 32 rows or more, `t32x64` below."""
    favoured = "t128x64" if job.operands[0].shape[0] >= 32 else "t32x64"
    return [
        Measured(job.dispatch, c, [400 if c.name == favoured else 1000], [])
        for c, _ in job.candidates
    ]


def test_each_size_runs_the_variant_that_won_there():
    tuned = tune_model(DYNAMIC, SIZES, benchmark_job=winner_by_rows)
    (dispatch,) = tuned.report.dispatches
    assert tuned.report.policy == "static" and tuned.report.cache is None
    assert dispatch.frozen == [
        FrozenChoice("t128x64", TUNING, [40]),
        FrozenChoice("t32x64", TUNING, [7]),
    ]
    assert any(n.startswith("tuned at 2 sizes (40x256xf32") for n in tuned.report.notes)
    # The site runs the nearest size's variant (in log2: rows^2 against 7 * 40 = 280, the
    # geometric mean's square) and dispatches either variant.
    lowered = tuned.lowered
    assert "arith.muli" in lowered and "%c280_i64" in lowered and "arith.cmpi sge" in lowered
    for name in ("t128x64", "t32x64"):
        assert f"@{dispatch.export}__{name}[" in lowered
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, 256)).astype(np.float32)
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        for rows in (40, 7, 96):
            x = rng.standard_normal((rows, 256)).astype(np.float32)
            assert_close(module.function("dynamic")(x, w), np.maximum(x @ w, 0))


def test_sizes_need_the_first_size_and_take_no_cache():
    without = TuneOptions(also_at=(("7x256xf32", "256x256xf32"),))
    with pytest.raises(DiagnosticError, match="needs the first size's input shapes"):
        tune_model(DYNAMIC, without, filename="dynamic.mlir")


def test_a_size_that_does_not_fit_is_refused_before_any_size_is_tuned():
    def no_job(job):
        raise AssertionError("nothing is built before every size is checked")

    wrong = replace(SIZES, also_at=(("7x128xf32", "256x256xf32"),))
    with pytest.raises(DiagnosticError, match="7x128xf32"):
        tune_model(DYNAMIC, wrong, filename="dynamic.mlir", compile_job=no_job)


def test_the_command_line_refuses_sizes_that_do_not_match_the_arguments(tmp_path, capsys):
    from autotune_cli.main import main

    model = tmp_path / "dynamic.mlir"
    model.write_text(DYNAMIC)
    out = tmp_path / "dynamic.vmfb"
    common = ["tune-model", str(model), "-o", str(out), "--input", "40x256xf32"]
    common += ["--input", "256x256xf32"]
    assert main([*common, "--also-at", "7x256xf32"]) == 1
    err = capsys.readouterr().err
    assert "--also-at 7x256xf32: 1 shapes, but --input gave 2" in err
    assert main([*common, "--also-at", "7x256xf32,256x256xf32", "--cache", "c.json"]) == 1
    assert "takes no --cache" in capsys.readouterr().err
    assert not out.exists()
