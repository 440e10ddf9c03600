"""`tune-model`: candidates around IREE's configuration, the jobs that judge them, the
tuned module built from the survivors, through the Python API, the command line, Ray and
JAX. Small models and few candidates; the benchmark jobs are injected where a test needs
a verdict that the machine's noise must not decide."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, runtime_tool
from rich.console import Console

from autotune_contracts.errors import DiagnosticError
from autotune_dialect.iree_configs import tile_lists
from autotune_dialect.iree_ir import iree_context
from autotune_model import TuneOptions, tune_model
from autotune_model.bench import BenchmarkJob, Measured, benchmark_dispatch
from autotune_model.candidates import candidates
from autotune_model.executors import LocalExecutor, SerialExecutor
from autotune_model.pipeline import flow_phase
from autotune_model.report import (
    CACHE,
    FAILED_TO_COMPILE,
    KEPT,
    REFERENCE,
    TUNING,
    WRONG,
    FrozenChoice,
    TuneReport,
    print_report,
)
from autotune_runtime.session import load
from lowering.dispatch_configs import default_configs
from lowering.driver import compile_lowered

SRC = DATA / "flow" / "src"
MLP = (SRC / "mlp.mlir").read_text()
DYNAMIC = (SRC / "dynamic.mlir").read_text()
MLP_SHAPES = [(16, 256), (256, 512), (512,), (512, 128), (128,)]
IREE_AUTOTUNE = str(Path(sys.executable).parent / "iree-autotune")
SMALL = TuneOptions(candidates=3, top_k=1, time_model=False, combine=False)


def mlp_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.standard_normal(s).astype(np.float32) for s in MLP_SHAPES]


def mlp_reference(args: list[np.ndarray]) -> np.ndarray:
    x, w1, b1, w2, b2 = args
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def assert_close(got: np.ndarray, want: np.ndarray) -> None:
    """Equal up to float reassociation: within 1e-5 of the largest magnitude."""
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


def fake_time(dispatch: str, name: str) -> int:
    """A deterministic 'time' for a candidate; `t*` candidates beat IREE's own."""
    base = 1000 + zlib.crc32(f"{dispatch}/{name}".encode()) % 100
    return base // 2 if name.startswith("t") else base


def fake_benchmark(job: BenchmarkJob) -> list[Measured]:
    """Times that do not depend on the machine, outputs that all agree."""
    return [
        Measured(job.dispatch, candidate, [fake_time(job.dispatch, candidate.name)], [])
        for candidate, _ in job.candidates
    ]


def table_text(report: TuneReport) -> str:
    """The report as `tune-model` prints it into a pipe."""
    out = io.StringIO()
    print_report(report, Console(file=out, width=80, color_system=None, highlight=False))
    return out.getvalue()


def table(report: TuneReport) -> list:
    return [
        (d.export, d.workload, d.operands, [(c.name, c.fate, c.median_ns) for c in d.candidates])
        for d in report.dispatches
    ]


# --- candidates ---------------------------------------------------------------------------


def test_candidates_are_distinct_valid_configs_that_iree_builds():
    from iree.compiler import ir

    configs = default_configs(flow_phase(MLP, "llvm-cpu", None, "mlp.mlir"))
    assert len(configs) == 2
    for config in configs.values():
        found = candidates(config, limit=8)
        assert found[0].is_default and len(found) == 9
        names = [c.name for c in found]
        infos = [c.compilation_info for c in found]
        assert len(set(names)) == len(names) and len(set(infos)) == len(infos)
        default = tile_lists(config.lowering_config)
        volume = np.prod([t for t in default["vector_common_parallel"] if t]) * np.prod(
            [t for t in default["vector_reduction"] if t]
        )
        for candidate in found[1:]:
            with iree_context():
                ir.Attribute.parse(candidate.compilation_info)  # IREE reads it
            lists = tile_lists(candidate.compilation_info)
            assert lists != default
            for tile, vec in zip(
                lists["distribution"], lists["vector_common_parallel"], strict=True
            ):
                assert tile == 0 or vec == 0 or tile % vec == 0
            mine = np.prod([t for t in lists["vector_common_parallel"] if t]) * np.prod(
                [t for t in lists["vector_reduction"] if t]
            )
            assert mine <= volume  # IREE refuses larger vectors than its own
    # ... and IREE builds every one of them.
    options = TuneOptions(candidates=8, top_k=1, time_model=False, combine=False)
    report = tune_model(MLP, options, benchmark_job=fake_benchmark).report
    fates = [c.fate for d in report.dispatches for c in d.candidates]
    assert len(fates) == 18 and FAILED_TO_COMPILE not in fates


def test_round_two_joins_the_best_changes_to_different_tile_lists():
    rounds = []

    def favouring_joined(job: BenchmarkJob) -> list[Measured]:
        rounds.append([c.name for c, _ in job.candidates])

        def time(name: str) -> int:
            if "_" in name:
                return 400  # a joined candidate
            return {"t": 600, "r": 700}.get(name[0], 1000) + zlib.crc32(name.encode()) % 50

        return [Measured(job.dispatch, c, [time(c.name)], []) for c, _ in job.candidates]

    options = TuneOptions(candidates=4, top_k=2, time_model=False)
    tuned = tune_model(MLP, options, benchmark_job=favouring_joined)
    assert len(rounds) == 4  # two dispatches, two rounds
    for dispatch in tuned.report.dispatches:
        first = min(
            (c for c in dispatch.candidates if c.name[0] == "t" and "_" not in c.name),
            key=lambda c: c.median_ns,
        )
        joined = dispatch.best
        assert joined.name.startswith(first.name + "_r") and joined.fate == KEPT
        assert dispatch.kept == [first.name, joined.name]
        info = next(
            line
            for line in tuned.lowered.splitlines()
            if f"{dispatch.export}__{joined.name}" in line
        )
        assert info
    second_round = rounds[2:]
    for names in second_round:  # IREE's own, the kept ones of round one, the joined one
        assert names[0] == "default" and "_" in names[-1] and len(names) == 4


def test_gpu_candidates_change_the_gpu_config_fields():
    configs = default_configs(flow_phase(MLP, "cuda", "sm_80", "mlp.mlir"), "cuda", "sm_80")
    config = next(iter(configs.values()))
    assert "#iree_gpu.lowering_config" in config.lowering_config
    found = candidates(config, limit=6)
    assert len(found) >= 3
    default = tile_lists(config.lowering_config)
    for candidate in found[1:]:
        lists = tile_lists(candidate.compilation_info)
        changed = {k for k in default if lists.get(k) != default[k]}
        assert changed and changed <= {"reduction", "workgroup", "thread"}
        if "workgroup" in changed:  # the thread tile follows, so the thread count holds
            assert "thread" in changed


# --- judging the candidates -----------------------------------------------------------------


def test_a_candidate_with_wrong_results_is_dropped_and_the_model_stays_right():
    perturbed = []

    def perturbing(job: BenchmarkJob) -> list[Measured]:
        results = benchmark_dispatch(job)
        victim = results[1]  # the first candidate after IREE's own
        victim.outputs = [o + 1.0 for o in victim.outputs]
        perturbed.append((job.dispatch, victim.candidate.name))
        for r in results:  # every survivor looks faster, so that it would be kept
            r.times_ns = [1000] if r.candidate.is_default else [100]
        return results

    tuned = tune_model(MLP, SMALL, executor=SerialExecutor(), benchmark_job=perturbing)
    assert len(perturbed) == 2
    for dispatch in tuned.report.dispatches:
        fates = {c.name: c.fate for c in dispatch.candidates}
        victim = dict(perturbed)[dispatch.export]
        assert fates[victim] == WRONG
        assert fates["default"] == REFERENCE
        assert dispatch.kept and victim not in dispatch.kept
        assert f"{dispatch.export}__{victim}" not in tuned.lowered
        assert f"{dispatch.export}__{dispatch.kept[0]}" in tuned.lowered
    args = mlp_inputs()
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        for _ in range(40):  # online tuning runs every variant
            got = module.function("mlp")(*args)
        assert_close(got, mlp_reference(args))


def test_candidates_that_fail_are_reported_not_fatal(monkeypatch):
    import autotune_model.pipeline as pipeline

    real = pipeline.candidates

    def with_a_broken_one(config, limit):
        found = real(config, limit)
        broken = found[1].compilation_info.replace("distribution = [", "distribution = [99999, ")
        return [*found[:1], type(found[1])("broken", broken), *found[1:]]

    monkeypatch.setattr(pipeline, "candidates", with_a_broken_one)
    report = tune_model(MLP, SMALL, benchmark_job=fake_benchmark).report
    for dispatch in report.dispatches:
        broken = next(c for c in dispatch.candidates if c.name == "broken")
        assert broken.fate == FAILED_TO_COMPILE and broken.detail
        assert dispatch.failed == 1 and dispatch.kept


def test_a_group_that_slows_the_model_is_taken_back(monkeypatch):
    import autotune_model.pipeline as pipeline
    from autotune_model.report import ModelTiming

    timings = iter([1.5, 1.2, 1.0])  # model time with 2 groups, 1 group, none

    def fake_time_model(stock, tuned, function, inputs, policy, device):
        return ModelTiming(function, 1000.0, 1000.0 * next(timings), 10)

    monkeypatch.setattr(pipeline, "time_model", fake_time_model)
    options = TuneOptions(candidates=3, top_k=1)
    tuned = tune_model(MLP, options, benchmark_job=fake_benchmark)
    assert tuned.report.timing.ratio == 1.0
    assert all(not d.kept for d in tuned.report.dispatches)
    taken_back = [
        c
        for d in tuned.report.dispatches
        for c in d.candidates
        if "stock build" in (c.detail or "")
    ]
    assert len(taken_back) == 2  # the one kept of each dispatch
    assert "__tuned" not in tuned.lowered  # no group left: the model as IREE builds it


# --- the tuned module ---------------------------------------------------------------------------


def test_frozen_module_runs_under_stock_iree_run_module_like_the_default_build(tmp_path):
    options = TuneOptions(candidates=3, top_k=2, freeze=True, time_model=False)
    tuned = tune_model(MLP, options, benchmark_job=fake_benchmark)
    for dispatch in tuned.report.dispatches:
        best = dispatch.best
        assert best is not None and best.fate == KEPT and best.name.startswith("t")
        assert f"@{dispatch.export}__{best.name}" in tuned.lowered  # the frozen choice
    assert "@autotune." not in tuned.lowered  # no host import: stock tools run it
    stock = compile_lowered(MLP, "llvm-cpu")
    inputs = []
    for index, array in enumerate(mlp_inputs()):
        np.save(tmp_path / f"in{index}.npy", array)
        inputs.append(f"--input=@{tmp_path / f'in{index}.npy'}")
    outputs = {}
    for name, vmfb in (("tuned", tuned.vmfb), ("stock", stock)):
        (tmp_path / f"{name}.vmfb").write_bytes(vmfb)
        subprocess.run(
            [
                runtime_tool("iree-run-module"),
                "--device=local-task",
                f"--module={tmp_path / f'{name}.vmfb'}",
                "--function=mlp",
                *inputs,
                f"--output=@{tmp_path / f'{name}.npy'}",
            ],
            check=True,
            capture_output=True,
        )
        outputs[name] = np.load(tmp_path / f"{name}.npy")
    assert_close(outputs["tuned"], outputs["stock"])
    assert_close(outputs["stock"], mlp_reference(mlp_inputs()))


def test_a_dynamic_model_is_tuned_at_the_example_shapes_and_runs_at_others():
    options = replace(SMALL, candidates=2, policy="explicit", input_shapes=((40, 256), (256, 256)))
    tuned = tune_model(DYNAMIC, options, benchmark_job=fake_benchmark)
    (dispatch,) = tuned.report.dispatches
    assert dispatch.operands == ["40x256xf32", "256x256xf32"]
    assert dispatch.workload == [40]
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, 256)).astype(np.float32)
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        module.tune()
        for rows in (40, 7):
            x = rng.standard_normal((rows, 256)).astype(np.float32)
            got = module.function("dynamic")(x, w)
            assert_close(got, np.maximum(x @ w, 0))


def test_a_cuda_tuned_model_builds_with_gpu_candidates_without_a_gpu():
    options = TuneOptions(target="cuda", arch="sm_80", candidates=3, top_k=2)
    tuned = tune_model(MLP, options)
    assert tuned.vmfb[:64] and b"cuda" in tuned.vmfb  # a CUDA executable inside
    assert any("not benchmarked: no cuda device" in note for note in tuned.report.notes)
    assert tuned.report.timing is None
    for dispatch in tuned.report.dispatches:
        assert len(dispatch.kept) == 2
        for name in dispatch.kept:
            assert f"@{dispatch.export}__{name}" in tuned.lowered
    assert tuned.lowered.count("#iree_gpu.lowering_config") >= 4


# --- executors ------------------------------------------------------------------------------


def test_ray_executor_gives_the_same_table_as_local_workers():
    pytest.importorskip("ray", reason="Ray is the optional extra iree-autotune[ray]")
    from autotune_model.executors import RayExecutor

    local = tune_model(MLP, SMALL, executor=LocalExecutor(), benchmark_job=fake_benchmark)
    tests = str(Path(__file__).parent)
    ray = RayExecutor(None, num_cpus=2, runtime_env={"env_vars": {"PYTHONPATH": tests}})
    try:
        assert ray.ray.is_initialized()
        remote = tune_model(MLP, SMALL, executor=ray, benchmark_job=fake_benchmark)
    finally:
        ray.close()
    assert not ray.ray.is_initialized()  # the test's cluster is stopped
    assert remote.report.executor == "ray" and local.report.executor == "local"
    assert table(remote.report) == table(local.report)
    assert any(d.kept for d in local.report.dispatches)
    assert remote.lowered == local.lowered


# --- frontends ------------------------------------------------------------------------------


def test_a_jax_model_is_tuned_from_python_and_computes_what_jax_computes():
    jax = pytest.importorskip("jax", reason="JAX is the optional extra iree-autotune[jax]")
    import jax.numpy as jnp

    from autotune_model.frontends import from_jax

    def mlp(x, w1, w2):
        return jnp.maximum(x @ w1, 0) @ w2

    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((8, 64), (64, 128), (128, 32))]
    text = from_jax(mlp, *args)
    assert "stablehlo." in text
    tuned = tune_model(text, SMALL, benchmark_job=fake_benchmark)
    assert len(tuned.report.dispatches) == 2 and all(d.kept for d in tuned.report.dispatches)
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        for _ in range(40):
            got = module.function("main")(*args)
    assert_close(got, np.asarray(jax.jit(mlp)(*args)))


# --- command line ---------------------------------------------------------------------------


def cli(*args) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IREE_AUTOTUNE, *map(str, args)], capture_output=True, text=True)


def assert_error(result, *fragments) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def test_cli_tunes_a_model_writes_its_report_and_shows_it(tmp_path):
    model = tmp_path / "mlp.mlir"
    model.write_text(MLP)
    out = tmp_path / "mlp.vmfb"
    result = cli("tune-model", model, "-o", out, "--candidates", "2", "--top-k", "1", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress
    assert "mlp_dispatch_0_matmul_16x512x256_f32" in result.stdout
    report = json.loads((tmp_path / "mlp.tune.json").read_text())
    kept = any(c["fate"] == "kept" for d in report["dispatches"] for c in d["candidates"])
    said = "tuned/stock" if kept else "no variant was kept, so the module is the stock build"
    assert "end to end (@mlp" in result.stdout and said in result.stdout
    assert report["model"] == str(model) and len(report["dispatches"]) == 2
    assert report["timing"]["stock_ns"] > 0 and report["timing"]["tuned_ns"] > 0
    with load(out.read_bytes(), device="local-sync", cache=False) as module:
        args = mlp_inputs()
        assert_close(module.function("mlp")(*args), mlp_reference(args))
    shown = cli("report", tmp_path / "mlp.tune.json", "--plot", tmp_path / "tune.png")
    assert shown.returncode == 0, shown.stderr
    assert "mlp_dispatch_1_matmul_16x128x512_f32" in shown.stdout
    assert (tmp_path / "tune.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_errors_name_what_is_wrong(tmp_path):
    model = tmp_path / "dynamic.mlir"
    model.write_text(DYNAMIC)
    out = tmp_path / "out.vmfb"
    assert_error(
        cli("tune-model", model, "-o", out),
        "argument 0 of @dynamic is tensor<?x256xf32>",
        "--input",
    )
    assert_error(cli("tune-model", model, "-o", out, "--input", "40x256xf32"), "2 arguments")
    assert_error(
        cli("tune-model", model, "-o", out, "--input", "40x255xf32", "--input", "256x256xf32"),
        "does not fit argument 0",
    )
    assert_error(cli("tune-model", model, "-o", out, "--input", "4zx3"), "not like 40x256xf32")
    # The element type given must be the argument's; its rank too.
    assert_error(
        cli("tune-model", model, "-o", out, "--input", "40x256xf16", "--input", "256x256xf32"),
        "40x256xf16 does not fit argument 0 of @dynamic (tensor<?x256xf32>)",
    )
    assert_error(
        cli("tune-model", model, "-o", out, "--input", "40x256x1xf32", "--input", "256x256"),
        "does not fit argument 0",
    )
    assert_error(
        cli("tune-model", model, "-o", out, "--function", "nope"), "no public function @nope"
    )
    assert_error(cli("tune-model", model, "-o", out, "--cache", "c.json"), "needs --freeze")
    missing = tmp_path / "tuning.sqlite3"
    assert_error(
        cli("tune-model", model, "-o", out, "--freeze", "--cache", missing),
        f"error: cannot read tuning cache file {missing}: No such file or directory\n",
    )
    assert_error(cli("tune-model", model, "-o", out, "--tolerance", "nan"), "finite")
    broken = tmp_path / "broken.mlir"
    broken.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y\n}\n")
    assert_error(
        cli("tune-model", broken, "-o", out),
        f"{broken}:2:12: error: expected ':'\n  return %y\n           ^\n",
    )
    empty = tmp_path / "empty.mlir"
    empty.write_text("")
    assert_error(
        cli("tune-model", empty, "-o", out),
        f"error: {empty}: the model has no public function to tune (the file is empty)",
    )
    report = tmp_path / "bad.tune.json"
    report.write_text("{not json")
    assert_error(cli("report", report), str(report), "not JSON")
    assert not out.exists()


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

    monkeypatch.setattr("autotune_model.pipeline.flow_phase", no_work)
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


def test_an_architecture_without_code_generation_is_refused_before_any_work():
    def no_compile(job):
        raise AssertionError("nothing is compiled for a refused architecture")

    with pytest.raises(DiagnosticError) as caught:
        tune_model(MLP, TuneOptions(target="cuda", arch="sm_90"), compile_job=no_compile)
    message = str(caught.value)
    assert "cannot tune for sm_90" in message and "such as sm_80" in message


def test_flow_phase_locations_name_the_model_file():
    flow = flow_phase(MLP, "llvm-cpu", None, "models/my mlp.mlir")
    assert '"<stdin>"' not in flow
    line = next(n for n, text in enumerate(MLP.splitlines(), 1) if "linalg.matmul" in text)
    assert f'"models/my mlp.mlir":{line}:' in flow  # (in call-site locations)


ASYNC_MODEL = """module {
  func.func @main_graph(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[4,16],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "2.0"} {
    %0 = torch.operator "onnx.MatMul"(%arg0, %arg1) : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[4,16],f32>
    return %0 : !torch.vtensor<[4,16],f32>
  }
}
"""


def test_the_function_of_a_torch_program_is_the_users_never_its_async_twin():
    """iree-import-onnx output: at the flow phase IREE has @main_graph$async (with fences,
    holding the dispatches) and @main_graph, which calls it: @main_graph is the model,
    its arguments' types come from where @main_graph$async imports them."""
    from autotune_dialect import parse_module
    from autotune_dialect.interop import symbol_name
    from autotune_model.measure import function_inputs, model_function
    from autotune_model.pipeline import flow_phase

    module = parse_module(flow_phase(ASYNC_MODEL, "llvm-cpu", None, "m.mlir"))
    function = model_function(module, None)
    assert function.name == "main_graph"
    assert symbol_name(function.body) == "main_graph$async"
    assert len(function.dispatches()) == 1
    inputs = function_inputs(function, None)
    assert [(o.shape, o.dtype) for o in inputs] == [((4, 8), "float32"), ((8, 16), "float32")]
    assert model_function(module, "main_graph").body is function.body
    with pytest.raises(DiagnosticError, match=r"asynchronous form of @main_graph"):
        model_function(module, "main_graph$async")
    with pytest.raises(DiagnosticError, match=r"8x8xf32 does not fit argument 0"):
        function_inputs(function, ["8x8xf32", (8, 16)])


def test_the_last_check_compares_the_tuned_module_with_the_stock_build():
    from autotune_dialect import parse_module
    from autotune_model.measure import check_model, function_inputs, model_function
    from lowering.driver import compile_lowered

    function = model_function(parse_module(flow_phase(MLP, "llvm-cpu", None, "mlp.mlir")), None)
    inputs = function_inputs(function, None)
    stock = compile_lowered(MLP)
    assert check_model(stock, stock, function.name, inputs, "static", "local-task", 1e-3) is None
    # Another model of the same signature (the first layer's bias not added) is caught.
    other = compile_lowered(
        MLP.replace("%s = arith.addf %a, %b : f32", "%s = arith.addf %a, %a : f32", 1)
    )
    failure = check_model(stock, other, function.name, inputs, "static", "local-task", 1e-3)
    assert failure == "call 1 gave other results than the stock build"


def test_a_tuned_module_that_fails_its_last_check_is_written_as_the_stock_build(monkeypatch):
    import autotune_model.pipeline as pipeline

    seen = []

    def failing(stock, tuned, *args):
        seen.append(len(tuned))
        return "call 2 gave other results than the stock build"

    monkeypatch.setattr(pipeline, "check_model", failing)
    tuned = tune_model(MLP, SMALL, benchmark_job=fake_benchmark)
    assert seen, "the last check did not run"
    assert not any(d.kept for d in tuned.report.dispatches)
    assert any("failed its last check" in n for n in tuned.report.notes)
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        assert not module.groups


def test_a_bench_module_runs_its_copies_in_turn_and_returns_the_last_ones_results():
    """Returning every copy's results kept all but one copy's buffers alive after each call
    (192 MB a call on a 4x2048x2048 result: tuning one batch matmul ran out of memory);
    the copies stay, each one's results passing through the next one's barrier."""
    from autotune_dialect import parse_module
    from autotune_model.bench import (
        BenchmarkJob,
        CompileJob,
        bench_module,
        benchmark_dispatch,
        compile_candidate,
    )
    from autotune_model.candidates import DEFAULT
    from autotune_model.measure import function_inputs, model_function
    from autotune_model.sizes import host_values
    from lowering.driver import target_flags

    module = parse_module(flow_phase(MLP, "llvm-cpu", None, "mlp.mlir"))
    function = model_function(module, None)
    inputs = function_inputs(function, None)
    values = host_values(function.body, function.arguments, [o.shape for o in inputs])
    dispatch = function.dispatches()[0]
    bench = bench_module(module, dispatch, values, repeat=4)
    assert bench.text.count('"flow.dispatch"') == 4
    assert bench.text.count('"util.optimization_barrier"') == 4
    returned = bench.text.split('"util.return"(')[-1].split(")")[0]
    assert len([v for v in returned.split(",") if v.strip()]) == len(dispatch.outputs)
    built = compile_candidate(
        CompileJob(dispatch_name := "d", DEFAULT, bench, tuple(target_flags("llvm-cpu", None)))
    )
    assert built.vmfb is not None, built.error
    (measured,) = benchmark_dispatch(
        BenchmarkJob(
            dispatch_name, ((DEFAULT, built.vmfb),), bench.operands, repeats=2, seconds=0.0
        )
    )
    assert measured.error is None and len(measured.outputs) == len(dispatch.outputs)


def test_the_end_to_end_timing_says_how_many_calls_the_online_module_took_to_settle():
    from modules import tagged_module

    from autotune_model.bench import Operand
    from autotune_model.measure import time_model
    from autotune_model.report import CandidateResult, DispatchResult, ModelTiming, summary_lines
    from lowering.driver import compile

    stock = compile(tagged_module(group_attrs='{policy = "static", choice = @v0}'))
    online = compile(tagged_module(group_attrs="{max_samples = 4}"))
    inputs = [Operand((16,), "float32")]
    timing = time_model(stock, online, "run", inputs, "online", "local-sync", budget_s=0.05)
    # 3 variants: at least one run each, at most warm-up + max_samples each, and the call
    # whose `select` commits
    assert timing.settled and 3 <= timing.settle_calls <= 3 * (1 + 4) + 1
    settled = ModelTiming("run", 1000.0, 900.0, 10, 37, True)
    report = TuneReport("m.mlir", "llvm-cpu", None, "online", "local", timing=settled)
    kept = [CandidateResult("default", REFERENCE, 1000.0), CandidateResult("t8", KEPT, 900.0)]
    report.dispatches = [DispatchResult("d", "linalg.matmul", [4], ["4xf32"], kept)]
    assert "online tuning: every group settled after 37 calls" in summary_lines(report)
    report.timing = ModelTiming("run", 1000.0, 900.0, 10, 400, False)
    assert "online tuning: not every group had settled after 400 calls" in summary_lines(report)
    loaded = TuneReport.from_json(report.to_json())
    assert loaded.timing == report.timing
