"""`iree-autotune spec`: a tuned model's choices written as an IREE tuning spec after the
fact, from its tune-model report, and from the decisions a tuning cache holds of the
module's runs (an online module's choice where it ran). Benchmarks are faked
(`small_models.fake_benchmark`): nothing here is timed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from small_models import MLP, fake_benchmark

from autotune_model import TuneOptions, tune_model
from autotune_model.candidates import candidates
from autotune_model.freeze import ALL_CANDIDATES, report_decisions
from autotune_model.report import TuneReport
from autotune_model.spec_command import spec_from_report
from autotune_model.tuning_setup import flow_phase
from lowering.dispatch_configs import default_configs

FROZEN = TuneOptions(
    candidates=3, top_k=1, time_model=False, combine=False, freeze=True, spec_out=True
)
ONLINE = replace(FROZEN, freeze=False, policy="online", top_k=2, spec_out=False)


@pytest.fixture(scope="module")
def frozen():
    return tune_model(MLP, FROZEN, benchmark_job=fake_benchmark)


@pytest.fixture(scope="module")
def online():
    return tune_model(MLP, ONLINE, benchmark_job=fake_benchmark)


def saved(report: TuneReport) -> TuneReport:
    """The report as `tune-model` writes it and reads it back."""
    return TuneReport.from_json(report.to_json())


def test_the_spec_of_a_frozen_models_report_is_the_one_tune_model_wrote(frozen):
    assert frozen.spec is not None
    spec, notes = spec_from_report(MLP, "mlp.mlir", saved(frozen.report))
    assert spec == frozen.spec and notes == []


def test_a_cache_decision_replaces_the_reports_choice_of_its_dispatch(online, tmp_path):
    """The online module kept two candidates of each dispatch, the report's winner the
    fastest offline; where it ran it chose the other one of the first dispatch (the cache's
    decision): the spec carries that one for the first dispatch and the report's winner for
    the second."""
    report = saved(online.report)
    first, second = report.dispatches
    assert len(first.kept) == 2 and first.best is not None
    other = next(name for name in first.kept if name != first.best.name)
    cache = tmp_path / "decisions.json"
    group = f"{first.export}__tuned"  # (as a cache names it without its executable)
    decided = {"group": group, "variant": f"{first.export}__{other}", "workload": []}
    cache.write_text(json.dumps({"decisions": [decided]}))
    spec, _ = spec_from_report(MLP, "mlp.mlir", report, str(cache))
    assert spec is not None
    configs = default_configs(flow_phase(MLP, "llvm-cpu", None, ""), "llvm-cpu", None, [])
    info = {
        (export, c.name): c.compilation_info
        for export in (first.export, second.export)
        for c in candidates(configs[export], ALL_CANDIDATES)
    }
    assert configured(spec, first.export) == info[(first.export, other)]  # the cache's choice
    assert second.best is not None
    assert configured(spec, second.export) == info[(second.export, second.best.name)]
    # Without the cache: the report's winners.
    spec, _ = spec_from_report(MLP, "mlp.mlir", report)
    assert spec is not None
    assert configured(spec, first.export) == info[(first.export, first.best.name)]


def configured(spec: str, export: str) -> str:
    """The compilation info a spec gives the dispatch `export` (its matcher's constant;
    two dispatches may have the same one)."""
    matcher = spec.split(f"transform.named_sequence @match_{export}(", 1)[1]
    constant = matcher.split("transform.param.constant ", 1)[1]
    return constant.split(" -> !transform.any_param", 1)[0]


def test_a_report_that_keeps_nothing_has_a_spec_that_configures_nothing(frozen):
    report = saved(frozen.report)
    report.dispatches = []
    assert report_decisions(report) == []
    spec, notes = spec_from_report(MLP, "mlp.mlir", report)
    assert spec is not None and "configures no dispatch" in spec
    assert "compilation_info" not in spec
    assert notes == [
        "the tuning spec configures no dispatch: no dispatch keeps a tuned configuration"
    ]


def test_the_spec_command_writes_the_spec_and_refuses_what_would_destroy(frozen, tmp_path, capsys):
    from autotune_cli.main import main

    model, report = tmp_path / "mlp.mlir", tmp_path / "mlp.tune.json"
    model.write_text(MLP)
    report.write_text(frozen.report.to_json())
    out = tmp_path / "mlp.spec.mlir"
    assert main(["spec", str(model), "--report", str(report), "-o", str(out)]) == 0
    assert out.read_text() == frozen.spec
    assert f"wrote {out}" in capsys.readouterr().out
    # The report named as the output: refused, the report left as it was.
    before = report.read_bytes()
    assert main(["spec", str(model), "--report", str(report), "-o", str(report)]) == 1
    assert "-o" in capsys.readouterr().err and report.read_bytes() == before
    # A damaged report: its name and what is wrong, no file written, no traceback.
    damaged = tmp_path / "damaged.tune.json"
    damaged.write_text("{")
    missing = tmp_path / "nothing.spec.mlir"
    assert main(["spec", str(model), "--report", str(damaged), "-o", str(missing)]) == 1
    err = capsys.readouterr().err
    assert f"{damaged}: not JSON" in err and "Traceback" not in err
    assert not missing.exists()
