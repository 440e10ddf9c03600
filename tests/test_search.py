"""The search beyond round one (`autotune_model/search.py`): within `--budget` it climbs,
one step at a time from each dispatch's best candidate, to configurations that round one
cannot reach. The benchmark job is a cost model of the tile sizes, so that the verdicts do
not depend on the machine's noise."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from conftest import DATA

from autotune_bridge.iree_configs import tile_lists
from autotune_model import TuneOptions, tune_model
from autotune_model.bench import BenchmarkJob, Measured
from autotune_model.candidates import Candidate, around, candidates
from autotune_model.report import KEPT
from autotune_model.search import _within
from autotune_model.time_shares import smallest
from autotune_model.tuning_setup import flow_phase
from autotune_runtime.session import load
from lowering.dispatch_configs import default_configs

MLP = (DATA / "flow" / "src" / "mlp.mlir").read_text()
MLP_SHAPES = [(16, 256), (256, 512), (512,), (512, 128), (128,)]
OPTIONS = TuneOptions(candidates=4, top_k=1, time_model=False, combine=False, freeze=True)


def configs():
    return default_configs(flow_phase(MLP, "llvm-cpu", None, "mlp.mlir"))


def cost(candidate: Candidate, default: dict[str, list[int]]) -> int:
    """Fastest with the first distribution tile at 4x IREE's and nothing else changed:
    a point two steps from IREE's configuration."""
    if candidate.is_default:
        return 1000
    lists = tile_lists(candidate.compilation_info)
    tiles = lists["distribution"]
    best = 4 * default["distribution"][0]
    time = 1000 * (1 + abs(math.log2(tiles[0] / best))) / 3
    time += 20 * abs(math.log2(tiles[1] / default["distribution"][1]))
    time += 20 * sum(lists[k] != default[k] for k in ("vector_common_parallel", "vector_reduction"))
    return int(time)


def cost_model(defaults: dict[str, dict[str, list[int]]], rounds: list[list[str]]):
    def benchmark(job: BenchmarkJob) -> list[Measured]:
        rounds.append([c.name for c, _ in job.candidates])
        default = defaults[job.dispatch]
        return [
            Measured(job.dispatch, c, [cost(c, default)], [np.zeros(1, np.float32)])
            for c, _ in job.candidates
        ]

    return benchmark


def test_around_steps_from_a_candidate_and_names_every_change():
    for config in configs().values():
        default = tile_lists(config.lowering_config)
        first = next(c for c in candidates(config, 4) if c.name.startswith("t"))
        near = around(config, first)
        assert near and len({c.compilation_info for c in near}) == len(near)
        assert around(config, candidates(config, 1)[0]) == []  # round one covers IREE's own
        for candidate in near:
            lists = tile_lists(candidate.compilation_info)
            changed = [k for k in default if k != "cache_parallel" and lists.get(k) != default[k]]
            letters = {"distribution": "t", "vector_common_parallel": "v", "vector_reduction": "r"}
            assert [part[0] for part in candidate.name.split("_")] == [letters[k] for k in changed]
        twice = tile_lists(first.compilation_info)["distribution"]
        twice = [
            2 * t if t != d else t for t, d in zip(twice, default["distribution"], strict=True)
        ]
        assert any(tile_lists(c.compilation_info)["distribution"] == twice for c in near)


def test_a_budget_climbs_past_round_one_to_a_faster_configuration():
    defaults = {e: tile_lists(c.lowering_config) for e, c in configs().items()}
    plain_rounds: list[list[str]] = []
    plain = tune_model(MLP, OPTIONS, benchmark_job=cost_model(defaults, plain_rounds), quiet=True)
    rounds: list[list[str]] = []
    options = replace(OPTIONS, budget=3600.0)
    climbed = tune_model(MLP, options, benchmark_job=cost_model(defaults, rounds), quiet=True)

    assert len(plain_rounds) == 2  # round one only: one job per dispatch
    assert len(rounds) > 2
    for before, after in zip(plain.report.dispatches, climbed.report.dispatches, strict=True):
        d0, d1 = defaults[after.export]["distribution"][:2]
        assert before.best.name == f"t{2 * d0}x{d1}"  # one step: round one's best
        assert after.best.name == f"t{4 * d0}x{d1}" and after.best.fate == KEPT
        assert after.best.median_ns < before.best.median_ns
        assert f"{after.export}__{after.best.name}" in climbed.lowered
        assert f"distribution = [{4 * d0}, {d1}, 0]" in climbed.lowered
    assert any("more round" in note and "3600 s" in note for note in climbed.report.notes)
    # The frozen module runs the climbed configurations and computes the model.
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s).astype(np.float32) for s in MLP_SHAPES]
    with load(climbed.vmfb, device="local-sync", cache=False) as module:
        got = module.function("mlp")(*args)
    x, w1, b1, w2, b2 = args
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


def test_a_round_takes_what_the_budget_allows_one_dispatch_at_a_time():
    a = [Candidate(f"a{i}", f"#a{i}") for i in range(3)]
    b = [Candidate(f"b{i}", f"#b{i}") for i in range(2)]
    assert _within({"x": a, "y": b}, 3) == {"x": a[:2], "y": b[:1]}
    assert _within({"x": a, "y": b}, 10) == {"x": a, "y": b}
    assert _within({"x": a, "y": b}, 0) == {}


def test_the_smallest_times_adding_up_to_at_most_the_share_are_named():
    times = {"a": 50.0, "b": 30.0, "c": 10.0, "d": 5.0, "e": 3.0, "f": 2.0}
    assert smallest(times, 0.05) == {"e", "f"}
    assert smallest(times, 0.10) == {"d", "e", "f"}
    assert smallest(times, 0.0) == set()
    assert smallest({"alone": 7.0}, 0.99) == set()


def test_a_dispatch_whose_time_cannot_pay_is_left_as_iree_builds_it():
    # IREE's own second matmul takes 1/50 of the first's time: 2% of the two together
    jobs: list[tuple[str, list[str]]] = []

    def benchmark(job: BenchmarkJob) -> list[Measured]:
        jobs.append((job.dispatch, [c.name for c, _ in job.candidates]))
        scale = 20 if "dispatch_1" in job.dispatch else 1000
        return [
            Measured(job.dispatch, c, [scale if c.is_default else scale // 2], [])
            for c, _ in job.candidates
        ]

    # (where the model is timed: the stock build, IREE's thread count, no gains measured)
    options = replace(OPTIONS, time_model=True, base="stock", threads="iree", dispatch_gains=False)
    assert options.small_share == 0.05
    report = tune_model(MLP, options, benchmark_job=benchmark).report
    small = "mlp_dispatch_1_matmul_16x128x512_f32"
    assert [d.export for d in report.dispatches] == ["mlp_dispatch_0_matmul_16x512x256_f32"]
    assert "cannot pay" in report.skipped[small] and "2.0%" in report.skipped[small]
    # its candidates never built nor timed: IREE's own alone, once
    assert [names for dispatch, names in jobs if dispatch == small] == [["default"]]
    jobs.clear()
    report = tune_model(MLP, replace(options, small_share=0.0), benchmark_job=benchmark).report
    assert small in [d.export for d in report.dispatches] and small not in report.skipped
    assert all(len(names) > 1 for _, names in jobs)


def test_a_dispatch_with_a_small_share_of_the_time_tries_half_its_candidates():
    """IREE's own second matmul takes 150/1150 = 13% of the two together: above the 5% left
    untuned, within `FEWER_SHARE`: its first half of the candidates only is built and timed;
    the first matmul's all."""
    from autotune_model.time_shares import FEWER_SHARE

    assert 0.05 < 150 / 1150 <= FEWER_SHARE
    jobs: dict[str, list[str]] = {}

    def benchmark(job: BenchmarkJob) -> list[Measured]:
        jobs.setdefault(job.dispatch, []).extend(c.name for c, _ in job.candidates)
        scale = 150 if "dispatch_1" in job.dispatch else 1000
        return [
            Measured(job.dispatch, c, [scale if c.is_default else scale // 2], [])
            for c, _ in job.candidates
        ]

    options = replace(
        OPTIONS, candidates=6, time_model=True, base="stock", threads="iree", dispatch_gains=False
    )
    report = tune_model(MLP, options, benchmark_job=benchmark).report
    small, large = "mlp_dispatch_1_matmul_16x128x512_f32", "mlp_dispatch_0_matmul_16x512x256_f32"
    timed = {d.export: [c.name for c in d.candidates] for d in report.dispatches}
    assert len(timed[small]) == 1 + 3 and len(timed[large]) == 1 + 6
    assert set(jobs[small]) == set(timed[small])  # the other half never built nor timed
    assert report.jobs.compiled == 2 + 3 + 6
    assert any(small in note and "first 3 candidates" in note for note in report.notes)
