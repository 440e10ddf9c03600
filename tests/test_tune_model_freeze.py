"""`tune-model --freeze` with a tuning cache: the choices of a cache file or of an export
are frozen, over this run's offline winner, and the cache is read before any work.

Small models and few candidates; the benchmark jobs are injected where a test needs a
verdict that the machine's noise must not decide."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace

import pytest
from rich.console import Console
from small_models import (
    MLP,
    SMALL,
    fake_benchmark,
    mlp_inputs,
)

from autotune_contracts.errors import DiagnosticError
from autotune_model import TuneOptions, tune_model
from autotune_model.report import (
    CACHE,
    TUNING,
    FrozenChoice,
    TuneReport,
)
from autotune_model.report_view import print_report
from autotune_runtime.session import load


def table_text(report: TuneReport) -> str:
    """The report as `tune-model` prints it into a pipe."""
    out = io.StringIO()
    print_report(report, Console(file=out, width=80, color_system=None, highlight=False))
    return out.getvalue()


def test_freeze_takes_the_choices_of_a_tuning_cache(tmp_path):
    options = TuneOptions(candidates=3, top_k=2, time_model=False, combine=False)
    online = tune_model(MLP, options, benchmark_job=fake_benchmark)
    cache = tmp_path / "tuning.sqlite3"
    args = mlp_inputs()
    with load(online.vmfb, device="local-sync", cache=cache) as module:
        calls = 0
        while len(module.decisions()) < 2 and calls < 500:
            module.function("mlp")(*args)
            calls += 1
        decided = {
            group.split("::")[1]: (v, list(workload))
            for (group, workload), v in module.decisions().items()
        }
    assert len(decided) == 2

    def no_job(job):
        raise AssertionError("a dispatch the cache decided is not tuned again")

    frozen = tune_model(
        MLP,
        replace(options, freeze=True, cache=str(cache)),
        compile_job=no_job,
        benchmark_job=no_job,
    )
    assert frozen.report.policy == "static" and frozen.report.cache == str(cache)
    shown = table_text(frozen.report)
    saved = json.loads(frozen.report.to_json())
    for index, dispatch in enumerate(frozen.report.dispatches):
        chosen, workload = decided[f"{dispatch.export}__tuned"]
        executable = dispatch.export.rsplit("_matmul", 1)[0]
        assert f"flow.dispatch @{executable}::@{chosen}" in frozen.lowered
        name = (
            chosen.removeprefix(f"{dispatch.export}__") if chosen != dispatch.export else "default"
        )
        assert dispatch.frozen == [FrozenChoice(name, CACHE, workload)]
        assert saved["dispatches"][index]["frozen"] == [
            {"variant": name, "source": "cache", "workload": workload}
        ]
        row = rf"{dispatch.export} .* {re.escape(name)} \(cache\) .* from the cache "
        assert re.search(row, shown), shown
    assert TuneReport.from_json(frozen.report.to_json()) == frozen.report
    assert f"frozen: 2 dispatches as the tuning cache {cache} decided, 0 as this run's" in shown


def test_freeze_prefers_a_cache_export_over_the_offline_winner(tmp_path):
    options = TuneOptions(candidates=3, top_k=2, time_model=False, combine=False, freeze=True)
    offline = tune_model(MLP, options, benchmark_job=fake_benchmark)
    decisions, other = [], {}
    for dispatch in offline.report.dispatches:
        executable = dispatch.export.rsplit("_matmul", 1)[0]
        (second,) = [k for k in dispatch.kept if k != dispatch.best.name]
        other[dispatch.export] = f"{dispatch.export}__{second}"
        decisions.append(
            {
                "group": f"{executable}::{dispatch.export}__tuned",
                "workload": [],
                "variant": other[dispatch.export],
            }
        )
        assert f"flow.dispatch @{executable}::@{dispatch.export}__{dispatch.best.name}(" in (
            offline.lowered
        )
    export = tmp_path / "decisions.json"
    export.write_text(json.dumps({"decisions": decisions}))
    frozen = tune_model(MLP, replace(options, cache=str(export)), benchmark_job=fake_benchmark)
    shown = table_text(frozen.report)
    assert "│ frozen " in shown.replace("┃", "│") and " best " not in shown
    for dispatch in frozen.report.dispatches:
        executable = dispatch.export.rsplit("_matmul", 1)[0]
        assert f"flow.dispatch @{executable}::@{other[dispatch.export]}(" in frozen.lowered
        second = other[dispatch.export].split("__")[1]
        assert re.search(rf"{dispatch.export} .* {second} \(cache\) ", shown), shown
    # A cache that decides one dispatch: the other is tuned, and runs this run's winner.
    export.write_text(json.dumps({"decisions": decisions[:1]}))
    mixed = tune_model(MLP, replace(options, cache=str(export)), benchmark_job=fake_benchmark)
    first, tuned = mixed.report.dispatches
    assert first.frozen == [FrozenChoice(other[first.export].split("__")[1], CACHE, [])]
    assert len(tuned.candidates) == 4 and tuned.frozen == [FrozenChoice(tuned.best.name, TUNING)]
    assert "frozen: 1 dispatch as the tuning cache" in table_text(mixed.report)


def test_a_cache_to_freeze_is_read_before_any_work(tmp_path, monkeypatch):
    def no_work(*args):
        raise AssertionError("no work before the cache is read")

    monkeypatch.setattr("autotune_model.tuning_setup.flow_phase", no_work)
    missing = tmp_path / "missing.sqlite3"
    for path, why in ((missing, "No such file or directory"), (tmp_path, "Is a directory")):
        with pytest.raises(DiagnosticError) as caught:
            tune_model(MLP, replace(SMALL, freeze=True, cache=str(path)))
        assert str(caught.value) == f"error: cannot read tuning cache file {path}: {why}"
    monkeypatch.undo()
    other = tmp_path / "other.json"
    decision = {
        "group": "net_dispatch_0::net_dispatch_0_conv__tuned",
        "workload": [],
        "variant": "x",
    }
    other.write_text(json.dumps({"decisions": [decision]}))
    with pytest.raises(DiagnosticError) as caught:
        tune_model(MLP, replace(SMALL, freeze=True, cache=str(other)), compile_job=no_work)
    assert str(caught.value) == (
        f"error: no decision of the tuning cache {other} names a tuned dispatch of this model "
        "(its groups: mlp_dispatch_0::mlp_dispatch_0_matmul_16x512x256_f32__tuned, "
        "mlp_dispatch_1::mlp_dispatch_1_matmul_16x128x512_f32__tuned); freeze with the cache "
        "of this model's module, built with the same build options (`--base`, which its "
        "tune-model report names)"
    )
