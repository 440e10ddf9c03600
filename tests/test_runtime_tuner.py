"""The tuner's decisions without the cache: the stop rule, the statistics it keeps as
samples come, and numeric validation of each variant against the reference (whole-array
rule, once per size bucket)."""

from __future__ import annotations

import math
import statistics
import warnings

import numpy as np
import pytest
from modules import tagged_module

from autotune_runtime import StopRule, load
from autotune_runtime import stats as stats_module
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.stats import VariantStats, next_or_winner
from autotune_runtime.tuner import Tuner, TuningWarning
from lowering.driver import compile


def run_rule(rule: StopRule, cost, limit: int = 10_000) -> tuple[int, int]:
    """Drive the stop rule with `cost(variant, run)`; returns (winner, total runs)."""
    variants = [VariantStats() for _ in range(3)]
    for runs in range(limit):
        nxt, winner = next_or_winner(rule, variants)
        if winner is not None:
            return winner, runs
        variants[nxt].add(cost(nxt, variants[nxt].runs), rule.warmup)
    raise AssertionError("no decision")


# --- the stop rule ----------------------------------------------------------------------


def test_clearly_separated_variants_commit_after_min_samples():
    rng = np.random.default_rng(0)
    base = [300.0, 100.0, 900.0]
    rule = StopRule(warmup=1, min_samples=3, max_samples=100)
    winner, runs = run_rule(rule, lambda v, _: base[v] * (1 + 0.02 * rng.standard_normal()))
    assert winner == 1
    # the winner runs its warm-up and min_samples; the others, over 2x slower, are dropped
    # early, each after its cold run and one timed run, both slow (never on a cold run or
    # one run alone)
    assert runs == (1 + 3) + 2 + 2
    plain = StopRule(warmup=1, min_samples=3, max_samples=100, early_drop=math.inf)
    winner, runs = run_rule(plain, lambda v, _: base[v] * (1 + 0.02 * rng.standard_normal()))
    assert winner == 1
    assert runs == 3 * (1 + 3)  # nothing beyond the minimum: the others are eliminated at once


def test_close_variants_are_sampled_more_and_capped_by_max_samples():
    rng = np.random.default_rng(1)
    base = [100.0, 101.0, 100.5]
    rule = StopRule(warmup=0, min_samples=3, max_samples=12)
    winner, runs = run_rule(rule, lambda v, _: base[v] * (1 + 0.05 * rng.standard_normal()))
    assert 3 * 3 < runs <= 3 * 12
    assert winner in (0, 1, 2)


def test_noisy_but_separated_variants_need_fewer_runs_than_a_fixed_budget():
    rng = np.random.default_rng(2)
    base = [130.0, 100.0, 115.0]
    rule = StopRule(warmup=1, min_samples=3, max_samples=200)
    winner, runs = run_rule(rule, lambda v, _: base[v] * (1 + 0.05 * abs(rng.standard_normal())))
    assert winner == 1
    assert runs < 3 * 201 / 4


def test_a_failed_run_eliminates_the_variant():
    rule = StopRule(warmup=0, min_samples=2, max_samples=5)
    winner, _ = run_rule(rule, lambda v, _: math.inf if v == 1 else [50.0, 1.0, 60.0][v])
    assert winner == 0


def test_statistics_of_a_variant():
    stats = VariantStats()
    for t in (1000.0, 10.0, 12.0, 11.0, 50.0):
        stats.add(t, warmup=1)
    assert stats.samples == [10.0, 12.0, 11.0, 50.0]
    assert stats.median == 11.5
    assert stats.minimum == 10.0
    assert stats.spread == 1.0  # median of |x - 11.5| = [1.5, 0.5, 0.5, 38.5]


def test_statistics_kept_incrementally_equal_those_of_all_samples():
    rng = np.random.default_rng(3)
    stats = VariantStats()
    for i, t in enumerate(rng.choice([1.0, 2.0, 2.5, 7.0], size=60) * rng.random(60)):
        stats.add(float(t), warmup=0)
        assert stats.median == statistics.median(stats.samples), i
        assert stats.minimum == min(stats.samples)
        if i:
            m = statistics.median(stats.samples)
            assert stats.spread == statistics.median(abs(s - m) for s in stats.samples)


def test_tuning_work_grows_linearly_with_the_samples(monkeypatch):
    """Every statistic the stop rule reads is kept as samples come: the elements that
    medians are computed over stay a bounded number per sample, at 10x the samples."""
    visited = []

    class Counting:
        def __getattr__(self, name):
            return getattr(statistics, name)

        def median(self, data):
            data = list(data)
            visited.append(len(data))
            return statistics.median(data)

    monkeypatch.setattr(stats_module, "statistics", Counting())
    per_sample = []
    for cap in (300, 3000):
        visited.clear()
        groups = {0: GroupInfo(0, "g", None, ("a", "b", "c"), "explicit")}
        rule = StopRule(warmup=1, min_samples=3, max_samples=cap, indifference=0, tie_samples=cap)
        tuner = Tuner(groups, rule)
        samples = 0
        while not tuner.select(0, ())[1]:
            variant = tuner.in_flight[2]
            # the same times for every variant: none is eliminated, all run to the cap (no
            # tie before it)
            tuner.record(0, variant, 1000.0 + tuner.states[(0, ())].variants[variant].runs % 7, ())
            samples += 1
        assert samples == 3 * (1 + cap)
        per_sample.append(sum(visited) / samples)
    # each spread is recomputed over all samples only when they grew by 1/32 (and at
    # every sample up to 64): about 33 elements per sample, not a multiple of the count
    assert max(per_sample) < 48, per_sample
    assert per_sample[1] < 1.2 * per_sample[0], per_sample


@pytest.mark.parametrize(
    "options",
    [{"min_samples": 0}, {"min_samples": 5, "max_samples": 4}, {"confidence": 1.0}],
)
def test_bad_stop_rule_parameters_are_rejected(options):
    with pytest.raises(ValueError):
        StopRule(**options)


def test_group_attributes_override_load_options():
    rule = StopRule(min_samples=5).with_overrides({"min_samples": 2, "tolerance": 0.1})
    assert rule.min_samples == 2 and rule.max_samples == StopRule().max_samples


# --- numeric validation -------------------------------------------------------------------


def _whole_array_verdict(got: np.ndarray, expected: np.ndarray, tolerance: float):
    """The rule on whole arrays in float64: (agrees, largest difference)."""
    with np.errstate(all="ignore"):
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        scale = max(1.0, float(np.max(np.abs(expected.astype(np.float64)))))
        largest = float(np.max(diff))
    return bool(np.all(np.isfinite(diff)) and largest <= tolerance * scale), largest


def _compared_pairs():
    rng = np.random.default_rng(3)
    n = 2 * 16384 + 5  # three chunks of the comparison, the last one short
    for dtype in (np.float32, np.float64, np.float16, np.int32, np.int8):
        expected = (rng.standard_normal(n) * 50).astype(dtype)
        yield dtype, "equal", expected.copy(), expected
        off = expected.copy()
        off[-1] += 1 if dtype == np.int8 else 5  # only in the last, short chunk
        yield dtype, "last element", off, expected
        if np.dtype(dtype).kind == "f":
            close = (expected * (1 + 2e-5)).astype(dtype)
            yield dtype, "within tolerance", close, expected
            for special in (np.nan, np.inf):
                bad = expected.copy()
                bad[16384] = special  # the first element of the second chunk
                yield dtype, f"{special} in the result", bad, expected
                yield dtype, f"{special} on both sides", bad, bad.copy()


@pytest.mark.parametrize(
    "dtype, case, got, expected",
    [pytest.param(*p, id=f"{np.dtype(p[0]).name}-{p[1]}") for p in _compared_pairs()],
)
def test_validation_judges_as_the_whole_array_rule(dtype, case, got, expected):
    tuner = Tuner({0: GroupInfo(0, "f", "e", ("ref", "other"), "online")})
    agrees, largest = _whole_array_verdict(got, expected, 1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tuner.compare(0, (), 1, 0, got, expected)
    stats = tuner.state(0, ()).variants[1]
    assert stats.rejected is not agrees
    # the only warning is the rejection (no numpy warning on inf - inf or an overflow)
    messages = [str(w.message) for w in caught]
    if agrees:
        assert messages == []
    else:
        (message,) = messages
        assert message.startswith("variant other of e::f disagrees with the reference ref")
        shown = message.split("largest difference ")[1].split(",")[0]
        assert shown == f"{largest:.3g}"


def _validations(tuner: Tuner, n: int, wrong: int | None = None) -> list[int]:
    """Tune size n of a dynamic group to its commit; the variants whose runs asked to be
    compared with the reference, in order (variant `wrong` gives other results)."""
    expected = np.ones(8, np.float32)
    asked = []
    for _ in range(1000):
        variant, committed, validate = tuner.select(0, (n,))
        if committed:
            return asked
        tuner.record(0, variant, 1000.0 + 50.0 * variant, (n,))
        if validate:
            asked.append(variant)
            got = expected + (1.0 if variant == wrong else 0.0)
            tuner.compare(0, (n,), variant, 0, got, expected)
    raise AssertionError("no decision")


def test_online_variants_are_validated_once_per_size_bucket():
    group = GroupInfo(0, "f", "e", ("ref", "a", "b"), "online", workload_arity=1)
    tuner = Tuner({0: group}, warm_start=False)
    assert _validations(tuner, 1100) == [1, 2]
    assert _validations(tuner, 1500) == []  # 1024 <= n < 2048: validated at 1100
    with pytest.warns(TuningWarning, match="variant b of e::f disagrees .* workload \\[3000\\]"):
        assert _validations(tuner, 3000, wrong=2) == [1, 2]  # 2048 <= n < 4096
    assert tuner.states[(0, (3000,))].variants[2].rejected
    # b disagreed in this bucket: it is compared again at every key of it, a is not
    assert _validations(tuner, 4000) == [2]


def test_a_variant_validated_in_its_size_bucket_returns_its_own_results(tmp_path):
    text = tagged_module(3, dynamic=True, group_attrs="{warm_start = false}")
    vmfb = compile(text, target="llvm-cpu")
    options = {"warmup": 1, "min_samples": 2, "max_samples": 2, "early_drop": float("inf")}
    with load(vmfb, "local-sync", cache=tmp_path / "c.sqlite", **options) as module:
        tags = {}
        for n in (1100, 1500):
            x = np.arange(n, dtype=np.float32)
            tags[n] = []
            while ("tagged::add", (n,)) not in module.decisions():
                out = module.run(x)
                offset = np.unique(out - x)
                assert offset.size == 1 and offset[0] in (1.0, 2.0, 3.0)  # x + tag
                tags[n].append(int(offset[0]) - 1)
    # at 1100 the first runs of v1 and v2 return the reference's result, v0's (checked);
    # at 1500, in the same bucket, every run returns its own variant's
    assert tags[1100][:7] == [0, 0, 0, 0, 1, 2, 0]
    assert tags[1500][:7] == [0, 1, 2, 0, 1, 2, 0]
