"""`python -m benchmarks.run`'s arguments: which files a run writes (a partial run, `--quick`
or `--only`, never the tracked results, page and plots unless `--write-docs`), checked
without running a benchmark (`outputs`, `--dry-run`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.common import DOCS, PLOTS, RESULTS, Settings
from benchmarks.models import whole_models
from benchmarks.run import CASES, ORDER, PARTIAL, Outputs, main, outputs, parse_args

TRACKED = Outputs(RESULTS / "latest.json", DOCS / "benchmarks.md", PLOTS, merge=True)


def partial_in(folder: Path) -> Outputs:
    return Outputs(folder / "results.json", folder / "benchmarks.md", folder / "plots", False)


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], TRACKED),  # `make bench`: every case at full size
        (["--quick"], partial_in(PARTIAL)),
        (["--only", "B13"], partial_in(PARTIAL)),
        (["--only", "b2,B3", "--quick"], partial_in(PARTIAL)),
        (["--only", "B2,B3", "--write-docs"], TRACKED),
        (["--only", "B2", "--out", "/tmp/bench"], partial_in(Path("/tmp/bench"))),
        (["--out", "/tmp/bench"], partial_in(Path("/tmp/bench"))),
        (["--only", ",".join(CASES)], TRACKED),  # every case named is a whole run
        (["--models", "mlp"], partial_in(PARTIAL)),  # some models: a partial run
        (["--only", "B13", "--models", "mlp", "--write-docs"], TRACKED),
    ],
)
def test_a_partial_run_writes_apart_from_the_tracked_files(argv, expected):
    assert outputs(parse_args(argv)) == expected


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--quick", "--write-docs"], "--write-docs with --quick"),
        (["--only", "B2", "--write-docs", "--out", "x"], "--write-docs writes the tracked"),
        (["--only", "B99"], "unknown case(s) B99"),
        (["--models", "mlp,bert"], "unknown model(s) bert; known: mlp, convnet"),
        (["--models", ","], "unknown model(s) ','"),
    ],
)
def test_conflicting_arguments_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        parse_args(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_a_dry_run_names_the_cases_and_files_and_runs_nothing(capsys, monkeypatch):
    def refuse(*_):
        raise AssertionError("a dry run ran a case")

    monkeypatch.setattr("benchmarks.run.run_cases", refuse)
    assert main(["--quick", "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"would run {', '.join(ORDER)} (--quick) and write",
        "  benchmarks/out/partial/results.json",
        "  benchmarks/out/partial/benchmarks.md",
        "  benchmarks/out/partial/plots/*.png",
    ]
    assert main(["--only", "B9,B2", "--write-docs", "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "would run B2, B9 and write",
        "  benchmarks/results/latest.json",
        "  docs/benchmarks.md",
        "  docs/benchmarks/*.png",
    ]


def test_the_partial_folder_is_not_tracked():
    root = Path(__file__).parent.parent
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(PARTIAL / "results.json")], cwd=root, check=False
    )
    assert ignored.returncode == 0


@pytest.mark.parametrize(
    "quick, models, expected",
    [
        (True, None, ["mlp"]),
        (False, {"convnet", "bert_flax", "qwen2_turbine_dynamic"}, ["convnet", "bert_flax"]),
        (False, {"dynamic", "mlp"}, ["mlp", "dynamic"]),  # in the case's order
        (True, {"convnet"}, []),  # not among a quick run's models
    ],
)
def test_the_models_named_are_those_the_model_cases_take(quick, models, expected, tmp_path):
    settings = Settings(quick=quick, scratch=tmp_path, models=models)
    assert [m.name for m in whole_models(settings.quick, settings.chosen)] == expected
    named = parse_args(["--models", ",".join(sorted(models))]) if models else None
    assert named is None or named.models == frozenset(models)
