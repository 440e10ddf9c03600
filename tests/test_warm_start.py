"""Warm start of new workload keys, early drop of far slower variants.

The rule is driven with synthetic timings (a cost model per variant whose best variant
changes with the size), then end to end on a compiled dynamic module.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from autotune_contracts.workloads import key_distance
from autotune_runtime import StopRule, TuningCache, load
from autotune_runtime.fingerprint import DeviceFingerprint
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.stats import VariantStats, next_or_winner
from autotune_runtime.tuner import Tuner
from lowering.driver import compile
from tests.modules import tagged_module

VARIANTS = ("a", "b", "c")
# time = fixed + per_element * n: `a` is best below n = 750, `b` up to 1500, `c` above.
CROSSING = {"a": (0.0, 4.0), "b": (1500.0, 2.0), "c": (3000.0, 1.0)}
# `a` beats `b` at every size; `c`, far slower at small sizes, is best at large ones.
HIDDEN = {"a": (0.0, 1.0), "b": (0.0, 1.4), "c": (6000.0, 0.2)}


def group(policy: str = "online", **params) -> dict[int, GroupInfo]:
    return {0: GroupInfo(0, "g", None, VARIANTS, policy, workload_arity=1, params=params)}


def tune_key(tuner: Tuner, n: int, model: dict) -> tuple[str, Counter]:
    """Call the group at size n until it commits; the winner and the runs per variant."""
    runs: Counter = Counter()
    for _ in range(10_000):
        variant, committed, _ = tuner.select(0, (n,))
        if committed:
            return VARIANTS[variant], runs
        runs[VARIANTS[variant]] += 1
        fixed, per = model[VARIANTS[variant]]
        tuner.record(0, variant, fixed + per * n, (n,))
    raise AssertionError("no decision")


def best(model: dict, n: int) -> str:
    return min(VARIANTS, key=lambda v: model[v][0] + model[v][1] * n)


def test_a_new_key_starts_from_the_nearest_decided_winner_and_skips_ruled_out_variants():
    tuner = Tuner(group())
    assert tune_key(tuner, 400, CROSSING)[0] == "a" == best(CROSSING, 400)
    winner, runs = tune_key(tuner, 500, CROSSING)
    state = tuner.states[(0, (500,))]
    assert winner == "a" == best(CROSSING, 500)
    assert state.prior is not None and state.prior.neighbour == (400,)
    assert not state.confirmation_failed
    # at 400, c was 2.1x slower than a: more than the bound (500/400)**3 = 1.95 allows
    assert [VARIANTS[i] for i in state.prior.contenders] == ["a", "b"]
    # the confirmation: a's cold run (the key's first), then one timed sample of b
    # (`confirm_samples`), not `min_samples` of each; b is slower than a's cold run, so
    # a needs no timed sample of its own (a cold run is never faster than a warm one)
    assert runs == Counter({"a": 1, "b": 1})

    scratch = Tuner(group(), warm_start=False)
    tune_key(scratch, 400, CROSSING)
    winner, cold_runs = tune_key(scratch, 500, CROSSING)
    assert winner == "a" and scratch.states[(0, (500,))].prior is None
    # from scratch: min_samples (c ran at 400: only the key's first run, a's, warms up)
    assert cold_runs == Counter({"a": 1 + 3, "b": 3, "c": 3})
    assert sum(runs.values()) < sum(cold_runs.values())


def test_the_likely_winner_is_not_kept_where_another_variant_is_faster():
    tuner = Tuner(group())
    for n in (400, 550, 700):
        assert tune_key(tuner, n, CROSSING)[0] == "a" == best(CROSSING, n)
    # a's time grew like n from 400 to 700: the bounds allow (800/700)**1.5 = 1.22 more
    # at 800, where c's time at 700 already exceeds a's bound: c is ruled out; a is the
    # likely winner, and b beats it on its one confirming sample
    winner, runs = tune_key(tuner, 800, CROSSING)
    state = tuner.states[(0, (800,))]
    assert tuner.warm.exponent(0) == pytest.approx(1.5)
    assert state.prior is not None and state.prior.informative
    assert state.prior.winner == VARIANTS.index("a") and state.confirmation_failed
    assert winner == "b" == best(CROSSING, 800)
    assert runs["c"] == 0 and runs["b"] >= 3  # explored with the full rule, c still out


def test_bounds_that_rule_nothing_out_explore_with_the_full_rule_the_guess_first():
    tuner = Tuner(group())
    tune_key(tuner, 400, CROSSING)
    winner, runs = tune_key(tuner, 1200, CROSSING)
    state = tuner.states[(0, (1200,))]
    assert state.prior is not None and not state.prior.informative
    assert state.guess == VARIANTS.index("a")  # a's time at 400, grown like n, is lowest
    assert winner == "b" == best(CROSSING, 1200)
    assert runs == Counter({"a": 1 + 3, "b": 3, "c": 3})


def test_confirm_samples_sets_the_samples_per_contender_of_a_confirmation():
    tuner = Tuner(group(), rule=StopRule(confirm_samples=3))
    tune_key(tuner, 400, CROSSING)
    winner, runs = tune_key(tuner, 500, CROSSING)
    assert winner == "a" and not tuner.states[(0, (500,))].confirmation_failed
    assert runs == Counter({"a": 4, "b": 3})  # min_samples each, as a full exploration
    with pytest.raises(ValueError, match="confirm_samples must be >= 1"):
        StopRule(confirm_samples=0)


def test_a_neighbour_too_far_to_rule_anything_out_is_confirmed_on_min_samples():
    tuner = Tuner(group())
    assert tune_key(tuner, 1000, HIDDEN)[0] == "a"
    winner, runs = tune_key(tuner, 5000, HIDDEN)  # 2.3 octaves: the bound allows 128x
    state = tuner.states[(0, (5000,))]
    assert len(state.prior.contenders) == len(VARIANTS) and not state.confirmation_failed
    assert winner == "a" == best(HIDDEN, 5000)
    assert runs == Counter({"a": 1 + 3, "b": 3, "c": 3})  # as from scratch


def test_the_likely_winner_slower_than_a_contender_cold_takes_its_timed_sample():
    """Where another contender is not slower than the likely winner's cold run, the
    winner's cold run decides nothing: it gets its timed sample, which decides."""
    tuner = Tuner(group())
    tune_key(tuner, 400, CROSSING)
    cold = {"a": 1.3}  # a's cold run 2600 at 500, b's sample 2500: not beaten cold
    runs: Counter = Counter()
    for _ in range(100):
        variant, committed, _ = tuner.select(0, (500,))
        if committed:
            break
        name = VARIANTS[variant]
        fixed, per = CROSSING[name]
        slow = cold.pop(name, 1.0) if runs[name] == 0 else 1.0
        runs[name] += 1
        tuner.record(0, variant, slow * (fixed + per * 500), (500,))
    assert VARIANTS[tuner.states[(0, (500,))].decision] == "a"
    assert runs == Counter({"a": 2, "b": 1})


def test_a_confirmation_that_fails_on_one_slow_sample_explores_with_the_full_rule():
    """The neighbour's winner, slowed once (one noisy sample), loses its confirmation;
    the full exploration that follows no longer counts that one sample against it: it
    is the winner again, on `min_samples` samples of each variant."""
    tuner = Tuner(group())
    tune_key(tuner, 400, CROSSING)
    slow_once = {"done": False}

    def timed(variant: str, n: int) -> float:
        fixed, per = CROSSING[variant]
        runs = tuner.states[(0, (n,))].variants[0].runs
        if variant == "a" and runs == 0:
            return 1.3 * (fixed + per * n)  # its cold run: slower than b's sample
        if variant == "a" and runs == 1:
            if not slow_once["done"]:
                slow_once["done"] = True
                return 1.5 * (fixed + per * n)  # the first timed sample of a: noise
        return fixed + per * n

    runs: Counter = Counter()
    for _ in range(1000):
        variant, committed, _ = tuner.select(0, (500,))
        if committed:
            break
        runs[VARIANTS[variant]] += 1
        tuner.record(0, variant, timed(VARIANTS[variant], 500), (500,))
    state = tuner.states[(0, (500,))]
    assert state.confirmation_failed
    assert VARIANTS[state.decision] == "a" == best(CROSSING, 500)
    assert runs["a"] >= 1 + 3 and runs["b"] >= 3  # explored in full after the failure


def test_a_key_still_confirming_takes_up_a_nearer_neighbour_decided_later():
    """Keys explored side by side: the first decision is far from most of them, and a
    nearer one decided later replaces it (before, a key kept the first warm start it took
    up, however far, and its confirmation against a winner from 8x away often failed)."""
    tuner = Tuner(group())
    tune_key(tuner, 100, CROSSING)
    tuner.select(0, (2600,))  # starts confirming against 100's winner, 26x away
    state = tuner.states[(0, (2600,))]
    assert state.prior is not None and state.prior.neighbour == (100,)
    assert tune_key(tuner, 2400, CROSSING)[0] == "c" == best(CROSSING, 2400)
    winner, runs = tune_key(tuner, 2600, CROSSING)
    assert state.prior.neighbour == (2400,) and not state.confirmation_failed
    assert winner == "c" == best(CROSSING, 2600)
    assert runs["a"] <= 1  # a, 2.1x slower at 2400, is outside the bound there


def test_a_key_exploring_from_scratch_drops_a_sampled_variant_its_neighbours_rule_out():
    """A key that began before any neighbour was measured (every variant sampled there
    once) stops running a variant once the neighbours measured later bound it above the
    likely winner, and its own samples there are slower than that bound too (before, a
    variant with a sample at the key was kept to the rule's `min_samples`)."""
    tuner = Tuner(group())
    tune_key(tuner, 10, CROSSING)  # 5.6 octaves away: it rules nothing out at 500
    ran: Counter = Counter()
    for _ in range(4):  # the key's cold run, then one timed sample of each variant
        variant, committed, _ = tuner.select(0, (500,))
        assert not committed
        ran[VARIANTS[variant]] += 1
        fixed, per = CROSSING[VARIANTS[variant]]
        tuner.record(0, variant, fixed + per * 500, (500,))
    assert ran == Counter({"a": 2, "b": 1, "c": 1})
    assert all(len(v.samples) == 1 for v in tuner.states[(0, (500,))].variants)
    for n in (400, 600):  # measured later, at another call site of the group
        for variant, (fixed, per) in enumerate(CROSSING.values()):
            tuner.warm.observe(0, (n,), variant, fixed + per * n)
    winner, runs = tune_key(tuner, 500, CROSSING)
    state = tuner.states[(0, (500,))]
    assert winner == "a" == best(CROSSING, 500)
    # c: at least 3400 at 500 (its time at 400), a at most 2400 (its time at 600)
    assert runs["c"] == 0 and state.bounds.keys() == {VARIANTS.index("c")}
    assert state.variants[VARIANTS.index("c")].eliminated
    assert runs["b"] <= 1  # b (1.25x a) stays a contender: one confirming sample at most


def test_a_look_costs_what_is_new_and_the_nearest_keys_only(monkeypatch):
    """A key takes the bounds again only when a time changed since its last look, and
    in a one-dimensional workload from the nearest measured keys on each side, however
    many keys were measured."""
    import autotune_runtime.warm_start as warm_start

    tuner = Tuner(group())
    sizes = [int(n) for n in np.geomspace(100, 3000, 12)]
    for n in sizes:
        tune_key(tuner, n, CROSSING)
    looks, points = Counter(), []
    bounds, near = tuner.warm._bounds, tuner.warm._near
    monkeypatch.setattr(tuner.warm, "_bounds", lambda *a: looks.update(["look"]) or bounds(*a))
    monkeypatch.setattr(tuner.warm, "_near", lambda *a: points.append(near(*a)) or points[-1])
    state = tuner.state(0, (1000,))
    tuner.warm.look(0, (1000,), state)
    assert looks["look"] == 1 and len(points) == len(VARIANTS)
    assert all(len(below) == len(above) == warm_start.NEAREST for below, above in points)
    below, above = points[0]
    assert [k[0] < 1000 for _, k in below + above] == [True] * 2 + [False] * 2
    tuner.warm.look(0, (1000,), state)
    assert looks["look"] == 1  # nothing changed since
    tuner.warm.observe(0, (2900,), 0, 1.0)  # beyond the nearest keys on that side
    tuner.warm.look(0, (1000,), state)
    assert looks["look"] == 1
    tuner.warm.observe(0, (1010,), 0, 1.0)  # nearer than them
    tuner.warm.look(0, (1000,), state)
    assert looks["look"] == 2


def test_a_variant_far_slower_at_a_distant_neighbour_is_still_tried():
    tuner = Tuner(group())
    assert tune_key(tuner, 1000, HIDDEN)[0] == "a"
    state = tuner.states[(0, (1000,))]
    # dropped after its cold run and one timed run, both slow (never on one run alone)
    assert state.variants[VARIANTS.index("c")].runs == 2
    winner, runs = tune_key(tuner, 1100, HIDDEN)
    assert winner == "a" and runs == Counter()  # b (1.4x) and c ruled out nearby: at once
    winner, _ = tune_key(tuner, 20000, HIDDEN)
    state = tuner.states[(0, (20000,))]
    assert state.prior.neighbour == (1000,)  # where a was timed
    assert not state.bounds and not state.prior.informative  # 4.3 octaves: nothing ruled out
    assert state.variants[VARIANTS.index("c")].samples
    assert winner == "c" == best(HIDDEN, 20000)


def test_a_two_dimensional_workload_takes_bounds_from_keys_within_its_window():
    tuner = Tuner({0: GroupInfo(0, "g", None, VARIANTS, "online", workload_arity=2)})

    def tune(n: int, m: int) -> tuple[str, Counter]:
        runs: Counter = Counter()
        while True:
            variant, committed, _ = tuner.select(0, (n, m))
            if committed:
                return VARIANTS[variant], runs
            runs[VARIANTS[variant]] += 1
            fixed, per = CROSSING[VARIANTS[variant]]
            tuner.record(0, variant, fixed + per * n * m / 8, (n, m))

    assert tune(400, 8)[0] == "a"
    # (410, 8): as the one-dimensional 410 next to 400, b and c are ruled out at once
    winner, runs = tune(410, 8)
    assert winner == "a" and sum(runs.values()) == 0
    assert tuner.states[(0, (410, 8))].prior.neighbour == (400, 8)
    # (200, 16) has the same total size: bounds from (400, 8) grow by 2 ** 3 in each of
    # its two differing values (64x), ruling nothing out
    tune(200, 16)
    assert not tuner.states[(0, (200, 16))].bounds
    # a key 32x larger in total size is outside every measured key's window: no bound
    tuner.select(0, (400, 256))
    assert tuner.states[(0, (400, 256))].prior is None


def test_warm_start_from_the_tuning_cache_of_an_earlier_process(tmp_path):
    fingerprint = DeviceFingerprint("local-task", "cpu", "test", "0")
    cache = TuningCache(tmp_path / "c.sqlite")
    tune_key(Tuner(group(), cache=cache, device=fingerprint), 400, CROSSING)
    cache.close()

    cache = TuningCache(tmp_path / "c.sqlite")
    tuner = Tuner(group(), cache=cache, device=fingerprint)
    winner, runs = tune_key(tuner, 500, CROSSING)
    state = tuner.states[(0, (500,))]
    assert winner == "a" and state.prior.neighbour == (400,)
    assert runs["c"] == 0
    other_device = Tuner(
        group(), cache=cache, device=DeviceFingerprint("local-task", "cpu", "other", "0")
    )
    tune_key(other_device, 500, CROSSING)
    assert other_device.states[(0, (500,))].prior is None  # decisions of another device
    cache.close()


@pytest.mark.parametrize(
    "make",
    [
        lambda: Tuner(group(warm_start=False)),
        lambda: Tuner(group(), warm_start=False),
    ],
    ids=["group attribute", "load option"],
)
def test_warm_start_turned_off_tunes_every_key_from_scratch(make):
    tuner = make()
    tune_key(tuner, 400, CROSSING)
    _, runs = tune_key(tuner, 500, CROSSING)
    assert tuner.states[(0, (500,))].prior is None
    assert runs == Counter({"a": 4, "b": 3, "c": 3})  # the key's first run warms up


def test_explicit_groups_confirm_against_the_reference():
    tuner = Tuner({0: GroupInfo(0, "g", None, VARIANTS, "explicit", reference=2, workload_arity=1)})
    tune_key(tuner, 400, CROSSING)
    tune_key(tuner, 500, CROSSING)
    assert 2 in tuner.states[(0, (500,))].prior.contenders


def test_key_distance_compares_sizes_by_ratio():
    assert key_distance((100, 8), (200, 8)) == pytest.approx(1.0)
    assert key_distance((100,), (50,)) == key_distance((100,), (200,))
    assert key_distance((0,), (1,)) == 0.0


# --- early drop -----------------------------------------------------------------------


def drive(rule: StopRule, times: list[float], cold: float = 0.0) -> tuple[int, list[int]]:
    """The stop rule on fixed times (a cold run costs `cold` more): winner, runs."""
    variants = [VariantStats() for _ in times]
    for _ in range(10_000):
        nxt, winner = next_or_winner(rule, variants)
        if winner is not None:
            return winner, [v.runs for v in variants]
        extra = cold if variants[nxt].runs < rule.warmup else 0.0
        variants[nxt].add(times[nxt] + extra, rule.warmup)
    raise AssertionError("no decision")


def test_far_slower_variants_run_once_and_close_ones_are_kept():
    rule = StopRule(warmup=1, min_samples=3)
    winner, runs = drive(rule, [16.0, 1.0, 64.0, 32.0], cold=2.0)
    assert winner == 1
    # the reference runs first; the others are dropped after a cold run and a timed one
    assert runs == [2, 4, 2, 2]
    winner, runs = drive(rule, [1.0, 1.9, 1.5], cold=0.5)
    assert winner == 0 and runs == [4, 4, 4]  # within 2x: never dropped early


def test_a_large_cold_penalty_keeps_a_variant_that_only_looks_slow_cold():
    rule = StopRule(warmup=1, min_samples=3)
    # every cold run costs 6 more; variant 1 is best warm though its cold run is slower
    # than 2x the reference's warm time
    winner, runs = drive(rule, [3.0, 1.0], cold=6.0)
    assert winner == 1 and runs[1] == 4


def test_early_drop_off_is_the_plain_rule():
    winner, runs = drive(StopRule(warmup=1, min_samples=3, early_drop=float("inf")), [16.0, 1.0])
    assert winner == 1 and runs == [4, 4]


# --- end to end ------------------------------------------------------------------------


@pytest.mark.parametrize("attrs", ["", "{warm_start = false}"])
def test_a_compiled_dynamic_group_warm_starts_unless_told_not_to(tmp_path, attrs):
    vmfb = compile(tagged_module(3, dynamic=True, group_attrs=attrs), target="llvm-cpu")
    with load(vmfb, "local-sync", cache=tmp_path / "c.sqlite") as module:
        for n in (1000, 1100):
            x = np.arange(n, dtype=np.float32)
            while ("tagged::add", (n,)) not in module.decisions():
                module.run(x)
        stats = {tuple(s["workload"]): s for s in module.stats()}
    assert stats[(1000,)]["warm_start"] is None
    warm = stats[(1100,)]["warm_start"]
    if attrs:
        assert warm is None
    else:
        assert warm["from"] == [1000]
        # the lowest bound at 1100: the variant fastest at 1000 (a later sample under 1%
        # faster is no news to the neighbours)
        fastest = min(v["min_ns"] for v in stats[(1000,)]["variants"])
        near = [v["variant"] for v in stats[(1000,)]["variants"] if v["min_ns"] <= fastest / 0.99]
        assert warm["variant"] in near


def test_variants_within_the_indifference_commit_without_sampling_to_the_cap():
    close = [100.0, 100.5, 150.0]
    winner, runs = drive(StopRule(warmup=1, min_samples=3, max_samples=30), close)
    assert winner == 0 and runs[0] == runs[1] == 1 + 3  # 0.5% apart: not worth sampling
    winner, runs = drive(StopRule(warmup=1, min_samples=3, max_samples=30, indifference=0.0), close)
    assert winner == 0 and runs[0] == 1 + 30  # the plain rule samples them to the cap


def test_noisy_variants_within_the_tie_band_tie_after_tie_samples():
    """Two variants 1.5% apart, each sample off by up to 8%: the interval test cannot tell
    them apart, and before `tie_samples` both were sampled to `max_samples`."""
    base = [101.5, 100.0, 150.0]
    noise = [-0.08, 0.06, -0.02, 0.08, -0.06, 0.0, 0.04, -0.04]

    def tune(rule: StopRule) -> tuple[int, list[int]]:
        variants = [VariantStats() for _ in base]
        for _ in range(10_000):
            nxt, winner = next_or_winner(rule, variants)
            if winner is not None:
                return winner, [len(v.samples) for v in variants]
            k = variants[nxt].runs + nxt
            variants[nxt].add(base[nxt] * (1.0 + noise[k % len(noise)]), rule.warmup)
        raise AssertionError("no decision")

    winner, samples = tune(StopRule(warmup=1, min_samples=3, max_samples=30))
    # the reference, 1.5% slower, is within the tie band: the tie-break picks it
    assert winner == 0 and samples[:2] == [10, 10]
    winner, samples = tune(StopRule(warmup=1, min_samples=3, max_samples=30, tie_samples=1000))
    assert samples[:2] == [30, 30]  # without: both sampled to the cap
    with pytest.raises(ValueError, match="tie_samples must be >= 1"):
        StopRule(tie_samples=0)


@pytest.mark.parametrize(
    "stats",
    [{}, {"variants": "junk"}, {"variants": [{"variant": "a", "median_ns": "fast"}, 7]}],
    ids=["no statistics", "not a list", "bad values"],
)
def test_a_neighbour_without_usable_statistics_tells_nothing(tmp_path, stats):
    import time

    from autotune_runtime.cache import Entry

    fingerprint = DeviceFingerprint("local-task", "cpu", "test", "0")
    cache = TuningCache(tmp_path / "c.sqlite")
    tuner = Tuner(group(), cache=cache, device=fingerprint)
    cache.put(Entry(tuner.cache_key(0, (400,)), "a", stats, {}, time.time()))
    winner, runs = tune_key(tuner, 500, CROSSING)
    state = tuner.states[(0, (500,))]
    assert state.prior is None and state.guess is None
    assert winner == "a" == best(CROSSING, 500)
    assert runs["b"] >= 1 and runs["c"] >= 1
    cache.close()


def test_a_neighbour_whose_bound_rules_out_every_other_variant_is_taken_at_once():
    tuner = Tuner(group())
    assert tune_key(tuner, 400, CROSSING)[0] == "a"
    # at 410 the bound allows (410/400)**3 = 1.08: b (1.44x) and c (2.1x) are ruled out
    winner, runs = tune_key(tuner, 410, CROSSING)
    state = tuner.states[(0, (410,))]
    assert winner == "a" and sum(runs.values()) == 0 and state.explored_calls == 0
    assert state.prior.contenders == (0,)
    # the next key scales from the key where `a` was timed, not from the one taken at once
    winner, runs = tune_key(tuner, 420, CROSSING)
    assert winner == "a" and sum(runs.values()) == 0
    assert tuner.states[(0, (420,))].prior.neighbour == (400,)
    # farther away the bound lets b contend again, and the key is confirmed by running
    winner, runs = tune_key(tuner, 500, CROSSING)
    assert winner == "a" and runs["a"] > 0 and runs["b"] > 0


def test_warm_up_runs_are_each_variants_first_and_then_each_keys_first():
    """A variant's first runs in the process are warm-up runs (the rule's `warmup`); at a
    later key only the key's first run is, whichever variant makes it: a variant that ran
    elsewhere is timed from its first run there."""
    tuner = Tuner(group(warmup=2), warm_start=False)
    for variant in (0, 1, 0, 1, 0, 1):
        tuner.record(0, variant, 100.0 + variant, (400,))
    first = tuner.states[(0, (400,))].variants
    assert [len(v.cold) for v in first] == [2, 2, 0]
    assert [len(v.samples) for v in first] == [1, 1, 0]
    for variant in (1, 0, 1, 2, 2, 2):
        tuner.record(0, variant, 100.0 + variant, (800,))
    later = tuner.states[(0, (800,))].variants
    # b warms the key up; a and b ran at 400, so they are timed; c is new: two warm-ups
    assert [len(v.cold) for v in later] == [0, 1, 2]
    assert [len(v.samples) for v in later] == [1, 1, 1]
