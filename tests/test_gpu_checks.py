"""The GPU checks in benchmarks/gpu build their modules on a machine with the compiler and
run them prebuilt where only IREE's runtime is: the build step writes what the run step
reads, and the run step (tried on the CPU, where the tuned-model check accepts llvm-cpu
modules) checks results, times variants and settles the online module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DATA
from small_models import candidates_ranked_by_order

from benchmarks.gpu import check_triton, check_tune_model
from lowering.triton import ImportedKernel


def test_triton_check_saves_what_its_prebuilt_run_needs(tmp_path):
    assert check_triton.main(["--build", str(tmp_path), "--arch", "sm_80"]) == 0
    for case in check_triton.cases(quick=False):
        built = check_triton.load_built(tmp_path, case.kernel, "sm_80")
        kernel = ImportedKernel.load_bundle(DATA / "triton" / f"{case.kernel}.sm_80.json")
        assert [c["name"] for c in built.configs] == [v.name for v in kernel.group_variants]
        assert built.dims == list(kernel.spec.dims)
        assert set(built.vmfbs) == {"explicit", "online"}
        for policy, vmfb in built.vmfbs.items():
            assert b"cuda" in vmfb, policy
            assert built.setter.encode() in built.vmfbs["explicit"]
        aligned = [built.aligned[check_triton._workload_key(w)] for w in case.workloads]
        assert aligned == [True, False], case.kernel  # an aligned and an odd workload


def test_triton_check_without_a_gpu_says_so(tmp_path, capsys):
    assert check_triton.main(["--prebuilt", str(tmp_path)]) == 2
    assert "no NVIDIA GPU" in capsys.readouterr().err


SMALL = check_tune_model.Case(
    "matmul_f32_64",
    lambda: check_tune_model._matmul(64, 96, 128, "f32"),
    [([64, 128], "float32"), ([128, 96], "float32")],
    3,
    (64, 96, 128),
)


@pytest.fixture(scope="module")
def built_small(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tuned")
    check_tune_model.build(SMALL, folder, "llvm-cpu", benchmark_job=candidates_ranked_by_order)
    return folder


def test_tune_model_check_runs_every_variant_and_settles(built_small, tmp_path, monkeypatch):
    monkeypatch.setattr(check_tune_model, "CASES", [SMALL])
    out = tmp_path / "check.json"
    argv = ["--prebuilt", str(built_small), "--device", "local-sync", "--budget", "0.02"]
    assert check_tune_model.main([*argv, "--json", str(out)]) == 0
    (result,) = json.loads(out.read_text())["results"]
    assert result["ok"] and result["stock_ok"] and result["stock_max_err"] < 1e-3
    meta = json.loads((built_small / "matmul_f32_64.json").read_text())
    built = [
        c[0] for d in meta["dispatches"] for c in d["candidates"] if c[1] != "failed to compile"
    ]
    (group,) = result["groups"]
    variants = [v["variant"] for v in group["variants"]]
    assert len(variants) == len(built) >= 2  # every candidate that built is in the group
    assert all(v["ok"] for v in group["variants"])
    assert sorted(v["vs_iree"] for v in group["variants"]).count(1.0) >= 1  # IREE's own
    assert result["best"][group["group"]] in variants
    online = result["online"]
    assert online["settled"] and online["ok"] and 0 < online["calls_to_settle"] < 3000
    assert set(online["decisions"].values()) <= set(variants)


def test_tune_model_check_reports_a_broken_case_and_goes_on(built_small, tmp_path, monkeypatch):
    missing = check_tune_model.Case("absent", SMALL.source, SMALL.operands, 3, SMALL.matmul)
    monkeypatch.setattr(check_tune_model, "CASES", [missing, SMALL])
    out = tmp_path / "check.json"
    argv = ["--prebuilt", str(built_small), "--device", "local-sync", "--budget", "0.02"]
    assert check_tune_model.main([*argv, "--json", str(out)]) == 1
    absent, small = json.loads(out.read_text())["results"]
    assert "absent.json" in absent["error"] and small["ok"]
