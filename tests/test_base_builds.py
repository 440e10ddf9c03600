"""IREE's whole-compilation options that a tuned model starts from: the fastest of the
stock build, data tiling and data tiling with micro-kernels (timed by an injected ratio
here, so that the machine's noise decides nothing), and a model tuned within the chosen
options computes what the model computes."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from conftest import DATA
from small_models import after_where_the_time_is, assert_computes_the_mlp, fake_benchmark

from autotune_contracts.errors import DiagnosticError
from autotune_model import TuneOptions, tune_model
from autotune_model.base_builds import (
    BASES,
    CONVOLUTION_BASES,
    IREE_THREADS,
    STOCK,
    THREADS_FLAG,
    bases_for,
    bases_of_decisions,
    choose_base,
    device_threads,
)
from autotune_model.executors import SerialExecutor
from autotune_model.report import BaseBuild, ModelTiming, TuneReport, summary_lines
from autotune_model.steadiness import Comparison, median_interval
from autotune_model.tuning_setup import PACKING_OPS
from autotune_runtime.session import load

MLP = (DATA / "flow" / "src" / "mlp.mlir").read_text()
MATMUL_BASES = (STOCK, "data-tiling", "data-tiling+ukernels")  # a model without convolutions
# IREE's thread count: these tests look at the option sets (the count has tests of its own)
SMALL = TuneOptions(candidates=2, top_k=1, time_model=False, combine=False, threads=IREE_THREADS)


def loads_of(value: float | list[float] | Comparison) -> Comparison:
    """A timing whose loads measured `value` (a number: every load; a list: each load's),
    its interval the loads' extremes (or `value` itself, a comparison)."""
    if isinstance(value, Comparison):
        return value
    loads = list(value) if isinstance(value, list) else [value] * 3
    return Comparison(loads, (min(loads), max(loads)))


def ratios_in_turn(*values: float | list[float] | Comparison):
    """A `ratio` that gives `values` in turn (`loads_of`) and records the builds it was
    handed."""
    seen: list[tuple[bytes, bytes]] = []
    given = iter(values)

    def ratio(stock: bytes, other: bytes, resolve: float | None = None) -> Comparison:
        seen.append((stock, other))
        return loads_of(next(given))

    return ratio, seen


def timings_against_stock(*ratios: float, seen: list | None = None):
    """A `time_model_loads` whose loads measure `ratios` (the median counts); records
    the (stock, tuned) modules it was handed in `seen`."""

    def time_loads(stock, tuned, function, inputs, policy, device, loads, budget_s):
        if seen is not None:
            seen.append((stock, tuned))
        timings = [ModelTiming(function, 1000.0, 1000.0 * r, 10, rounds=[r] * 10) for r in ratios]
        return sorted(timings, key=lambda t: t.ratio)[len(ratios) // 2], timings

    return time_loads


def fake_time_model(stock, tuned, function, inputs, policy, device, resolve=None):
    """A `tuning_pass.time_model` that finds the tuned module as fast as its reference."""
    return ModelTiming(function, 1000.0, 1000.0, 10)


def data_tiling_timed_fastest(timed: list, first: float = 0.5, later: float = 0.9):
    """A `timed_ratio` under which the first option set timed (data tiling) takes `first`
    of the stock build's time and every later one `later`; the builds timed go to
    `timed`."""

    def fake_ratio(function, inputs, device):
        def ratio(stock: bytes, other: bytes, resolve: float | None = None) -> Comparison:
            timed.append(other)
            return loads_of(first if len(timed) == 1 else later)

        return ratio

    return fake_ratio


def tuned_with_data_tiling_chosen(
    monkeypatch,
    *against_stock: float,
    seen: list | None = None,
    untuned: float = 0.5,
    stock_tuned: tuple[float, ...] = (),
):
    """The MLP tuned under `--base auto` with data tiling timed `untuned` of the stock
    build's time, the other sets 1.2x, the guard's timing (against that build) at 1.0, and
    the last timing against the stock build measuring `against_stock` in its loads, then
    `stock_tuned` for the stock build's dispatches tuned, where they are (no gains in the
    model measured)."""
    import autotune_model.tuning_pass as tuning_pass
    import autotune_model.tuning_setup as tuning_setup

    in_turn = iter([against_stock, stock_tuned])

    def time_loads(*args):
        return timings_against_stock(*next(in_turn), seen=seen)(*args)

    later = 0.9 if untuned == 0.5 else 1.2  # not taken: no two sets close
    monkeypatch.setattr(tuning_setup, "timed_ratio", data_tiling_timed_fastest([], untuned, later))
    monkeypatch.setattr(tuning_pass, "time_model", fake_time_model)
    monkeypatch.setattr(tuning_pass, "time_model_loads", time_loads)
    # The gains in the model would be timed for real (a small MLP's noise could leave
    # every winner out); the option set's choice is what these tests look at.
    options = replace(SMALL, time_model=True, dispatch_gains=False)
    return tune_model(MLP, options, executor=SerialExecutor(), benchmark_job=fake_benchmark)


def test_a_module_built_with_other_options_that_is_slower_than_the_stock_build_gives_way(
    monkeypatch,
):
    """The option set won its timing, but the tuned module built with it is slower than
    the stock build over fresh loads (the median of 1.3, 0.95, 1.1): the stock build's
    dispatches are tuned instead, and the report says why, with both runs' work."""
    seen: list = []
    tuned = tuned_with_data_tiling_chosen(monkeypatch, 1.3, 0.95, 1.1, seen=seen)
    report = tuned.report
    assert len(seen) == 1 and seen[0][1] != seen[0][0]
    assert report.base.name == STOCK and report.base.flags == []
    assert report.base.tuned_over_stock == [1.3, 0.95, 1.1]
    assert report.base.ratios["data-tiling"] == 0.5  # what the choice was made on
    # The report is the stock build's: its matmul dispatches, tuned, and no mmt4d.
    exports = [d.export for d in report.dispatches]
    assert exports and all("_matmul_" in e for e in exports), exports
    assert any(d.kept for d in report.dispatches) and "__tuned" in tuned.lowered
    assert "mmt4d" not in tuned.lowered
    note = next(n for n in report.notes if "took 1.100x (median of 3 fresh loads" in n)
    assert "it may be slower, so the stock build's dispatches were tuned instead" in note
    # Both runs' candidates are counted (two mmt4d and two matmul dispatches, two each).
    assert report.jobs.compiled >= 8 and report.seconds["build"] > 0
    assert_computes_the_mlp(tuned.vmfb)


def test_a_set_little_faster_than_the_stock_build_has_the_stock_build_tuned_too(monkeypatch):
    """Data tiling took 0.9x the stock build's time untuned (at least `UNTILED_TUNED_TOO`),
    and its tuned module 0.9x; the stock build's dispatches are tuned too, and their module
    (0.7x the stock build over fresh loads) is kept, with both runs' work counted."""
    from autotune_model.tuning_pass import UNTILED_TUNED_TOO

    assert 0.9 >= UNTILED_TUNED_TOO > 0.5
    seen: list = []
    tuned = tuned_with_data_tiling_chosen(
        monkeypatch, 0.9, 0.9, 0.9, seen=seen, untuned=0.9, stock_tuned=(0.7, 0.7, 0.7)
    )
    report = tuned.report
    assert len(seen) == 2 and seen[0][0] == seen[1][0] and seen[0][1] != seen[1][1]
    assert seen[1][1] == tuned.vmfb  # the module kept is the one timed second
    assert report.base.name == STOCK and report.base.ratios["data-tiling"] == 0.9
    exports = [d.export for d in report.dispatches]
    assert exports and all("_matmul_" in e for e in exports), exports
    assert "mmt4d" not in tuned.lowered
    note = next(n for n in report.notes if "tuned too" in n)
    assert "0.700x the stock build's time against 0.900x" in note
    assert note.endswith("kept: the stock build's, tuned")
    assert report.jobs.compiled >= 8
    assert_computes_the_mlp(tuned.vmfb)


def test_a_data_tiled_set_little_faster_has_its_set_without_data_tiling_tuned_too():
    """The second pass hedges a data-tiled build (its `mmt4d`s tune little) with the same
    set without data tiling, where the data-tiled build untuned took 0.7x its time or more:
    the stock set for data tiling, im2col for im2col with data tiling (MobileNetV2 took
    im2col with data tiling and micro-kernels, 0.892x the stock build against im2col's
    0.847x). im2col alone makes matmuls that tune as far as the stock build's dispatches:
    a set with it alone is kept without one, however close to the stock build."""
    from autotune_model.tuning_pass import tuned_too

    def chosen(name: str, **ratios: float) -> BaseBuild:
        return BaseBuild(name, list(BASES[name]), {STOCK: 1.0, **ratios})

    for name in ("data-tiling", "data-tiling+ukernels"):
        assert tuned_too(chosen(name, **{name: 0.9})) == STOCK
        assert tuned_too(chosen(name, **{name: 0.5})) is None
    mobilenet = {"im2col": 0.847, "im2col+data-tiling+ukernels": 0.892}
    assert tuned_too(chosen("im2col+data-tiling+ukernels", **mobilenet)) == "im2col"
    vit = {"im2col": 0.833, "im2col+data-tiling": 0.566}  # 0.68x im2col's time: no second pass
    assert tuned_too(chosen("im2col+data-tiling", **vit)) is None
    assert tuned_too(chosen("im2col", im2col=0.9)) is None
    assert tuned_too(BaseBuild("data-tiling", list(BASES["data-tiling"]), {})) is None
    assert tuned_too(chosen("im2col+data-tiling", **{"im2col+data-tiling": 0.9})) is None


def test_a_set_whose_tuned_module_stays_faster_is_kept_after_the_stock_build_tuned_too(
    monkeypatch,
):
    seen: list = []
    tuned = tuned_with_data_tiling_chosen(
        monkeypatch, 0.8, 0.8, 0.8, seen=seen, untuned=0.9, stock_tuned=(0.95, 0.95, 0.95)
    )
    report = tuned.report
    assert len(seen) == 2 and seen[0][1] == tuned.vmfb
    assert report.base.name == "data-tiling" and report.base.tuned_over_stock == [0.8] * 3
    exports = [d.export for d in report.dispatches]  # the data-tiled build's dispatches
    assert any("_mmt4d_" in e for e in exports) and not any("_matmul_" in e for e in exports)
    note = next(n for n in report.notes if "tuned too" in n)
    assert note.endswith("kept: data-tiling's") and "0.950x" in note
    assert report.jobs.compiled >= 8  # both runs' candidates


def test_a_module_built_with_other_options_that_beats_the_stock_build_stands(monkeypatch):
    tuned = tuned_with_data_tiling_chosen(monkeypatch, 0.7, 0.9, 0.8)
    report = tuned.report
    assert report.base.name == "data-tiling" and report.base.tuned_over_stock == [0.7, 0.9, 0.8]
    assert any(d.kept for d in report.dispatches) and "__tuned" in tuned.lowered
    line = next(ln for ln in summary_lines(report) if "built with them" in ln)
    assert "0.800x (median of 3 fresh loads: 0.700, 0.900, 0.800; 95% interval 0.700-0.900)" in line
    assert report.base.tuned_over_stock_interval == [0.7, 0.9]
    # The report keeps the loads through its JSON form, and refuses a damaged one.
    text = report.to_json()
    assert TuneReport.from_json(text).base.tuned_over_stock == [0.7, 0.9, 0.8]
    damaged = json.loads(text)
    damaged["base"]["tuned_over_stock"][1] = "0.9"
    with pytest.raises(ValueError, match=r"base\.tuned_over_stock is not a list of numbers"):
        TuneReport.from_json(json.dumps(damaged))


def test_model_timings_over_loads_take_the_median_load(monkeypatch):
    import autotune_model.measure as measure
    from autotune_model.base_builds import timed_ratio

    ratios = iter([1.35, 0.9, 1.01, 0.8, 0.85, 0.95, 0.9, 0.99, 0.5])

    def fake_time_model(stock, tuned, function, inputs, policy, device, budget_s, resolve=None):
        assert resolve == expected_resolve  # a load goes on while its interval holds it
        ratio = next(ratios)  # the load's rounds: 10 around its median
        rounds = [ratio * (1 + d / 100) for d in range(-5, 5)]
        return ModelTiming(function, 1000.0, 1000.0 * ratio, 10, rounds=rounds)

    monkeypatch.setattr(measure, "time_model", fake_time_model)
    expected_resolve = None
    timing, loads = measure.time_model_loads(b"s", b"t", "f", [], "static", "local-task", 3, 3.0)
    assert [t.ratio for t in loads] == [1.35, 0.9, 1.01] and timing is loads[2]
    expected_resolve = 1 / 1.03  # an option set's loads: on until they tell it from that bound
    compared = timed_ratio("f", [], "local-task")(b"s", b"t", 1 / 1.03)
    assert compared.loads == [0.8, 0.85, 0.95]  # each load
    # The interval: order statistics of the 30 rounds of all three loads together.
    rounds = sorted(r * (1 + d / 100) for r in (0.8, 0.85, 0.95) for d in range(-5, 5))
    assert compared.interval == median_interval(rounds) == (rounds[9], rounds[20])
    # A load slower than the bound: the set cannot be taken, and no third load is made.
    assert timed_ratio("f", [], "local-task")(b"s", b"t", 1 / 1.03).loads == [0.9, 0.99]
    assert next(ratios) == 0.5


def test_the_fastest_option_set_is_chosen_when_it_beats_the_stock_build():
    ratio, seen = ratios_in_turn(0.8, 0.5)
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert base.name == "data-tiling+ukernels"
    assert base.flags == list(BASES["data-tiling+ukernels"])
    assert base.ratios == {STOCK: 1.0, "data-tiling": 0.8, "data-tiling+ukernels": 0.5}
    assert vmfb == seen[1][1]  # the module of the chosen build
    assert seen[0][0] == seen[1][0] != vmfb  # each timed against the same stock build


def test_an_option_set_is_timed_until_it_is_told_from_the_bound_it_must_beat():
    """Each set's loads against the stock build go on while their interval holds 1 /
    `faster_by` (what eligibility reads); the two fastest sets timed against each other,
    with no bound to reach, are not timed longer."""
    bounds = []

    def ratio(stock: bytes, other: bytes, resolve: float | None = None) -> Comparison:
        bounds.append(resolve)
        return loads_of(0.5 if len(bounds) == 1 else 0.52)

    base, _ = choose_base(MLP, "llvm-cpu", None, [], 1.05, ratio, among=MATMUL_BASES)
    assert base.head_to_head == ["data-tiling", "data-tiling+ukernels"]
    assert bounds == [1 / 1.05, 1 / 1.05, None]


def test_the_stock_build_stays_unless_another_is_faster_than_the_noise():
    ratio, seen = ratios_in_turn(0.99, 1.2)
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert (base.name, base.flags) == (STOCK, [])
    assert vmfb == seen[0][0]


def test_an_option_set_must_beat_the_stock_build_in_every_load():
    """Faster in the median load but not in every one (as stock and data tiling measured
    on the MLP, local-task, idle): the stock build stays. Among the sets faster in every
    load, the median load ranks them (not the slowest)."""
    ratio, seen = ratios_in_turn([1.042, 0.96, 0.95], [0.9, 1.01, 0.9])
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert (base.name, vmfb) == (STOCK, seen[0][0])
    assert base.ratios == {STOCK: 1.0, "data-tiling": 0.96, "data-tiling+ukernels": 0.9}
    line = summary_lines(TuneReport("m", "llvm-cpu", None, "online", "local", base=base))[0]
    assert "taken only when faster in every load and by the interval): data-tiling 0.960x" in line
    assert "data-tiling 0.960x (0.950-1.042)" in line
    ratio, seen = ratios_in_turn([0.9, 0.92, 0.95], [0.9, 0.99, 0.9])
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert (base.name, base.ratios["data-tiling"], vmfb) == ("data-tiling", 0.92, seen[0][1])
    ratio, seen = ratios_in_turn([0.8, 0.9, 0.95], [0.7, 0.72, 0.96])
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert (base.name, vmfb) == ("data-tiling+ukernels", seen[1][1])


@pytest.mark.parametrize(
    ("against", "chosen"), [(0.98, "data-tiling"), (1.01, "data-tiling+ukernels")]
)
def test_the_two_fastest_when_close_are_timed_against_each_other(against, chosen):
    """Data tiling 0.80 and with micro-kernels 0.78 of the stock build's time (within
    `CLOSE`): the second timing, of data tiling against the micro-kernels' build, decides;
    the report keeps it and says so."""
    ratio, seen = ratios_in_turn(0.8, 0.78, against)
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    tiled, ukernels = seen[0][1], seen[1][1]
    assert seen[2] == (ukernels, tiled)  # the third timing: one against the other
    assert base.name == chosen and base.flags == list(BASES[chosen])
    assert vmfb == {"data-tiling": tiled, "data-tiling+ukernels": ukernels}[chosen]
    assert base.head_to_head == ["data-tiling+ukernels", "data-tiling"]
    assert base.head_to_head_loads == [against] * 3
    assert base.ratios == {STOCK: 1.0, "data-tiling": 0.8, "data-tiling+ukernels": 0.78}
    report = TuneReport("m", "llvm-cpu", None, "online", "local", base=base)
    assert TuneReport.from_json(report.to_json()).base == base
    assert summary_lines(report)[1] == (
        "the two fastest, close, timed against each other: data-tiling took "
        f"{against:.3f}x (median of 3 fresh loads: {against:.3f}, {against:.3f}, "
        f"{against:.3f}; 95% interval {against:.3f}-{against:.3f}) the time of "
        "data-tiling+ukernels"
    )
    # Not close (0.8 against 0.5): no third timing.
    ratio, seen = ratios_in_turn(0.8, 0.5)
    base, _ = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert len(seen) == 2 and base.head_to_head == [] and base.name == "data-tiling+ukernels"


def test_an_option_set_faster_in_every_load_but_not_by_the_interval_is_not_taken():
    """Every load's median below the stock build's, but the interval over their rounds
    reaches it (the rounds' noise): the stock build stays; the same loads with an interval
    below 1/1.03 take the set."""
    noisy = Comparison([0.9, 0.92, 0.95], (0.85, 1.01))
    ratio, seen = ratios_in_turn(noisy, 1.2)
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert (base.name, vmfb) == (STOCK, seen[0][0])
    assert base.intervals == {"data-tiling": [0.85, 1.01], "data-tiling+ukernels": [1.2, 1.2]}
    line = summary_lines(TuneReport("m", "llvm-cpu", None, "online", "local", base=base))[0]
    assert "data-tiling 0.920x (0.850-1.010)" in line
    ratio, seen = ratios_in_turn(Comparison([0.9, 0.92, 0.95], (0.88, 0.96)), 1.2)
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert (base.name, vmfb) == ("data-tiling", seen[0][1])


def test_the_second_of_two_close_sets_must_be_shown_faster_to_replace_the_first():
    """BART's head-to-head: the second set measured 1.021, 0.998 and 0.819 of the first in
    three loads; its median is below 1 but not every load nor the interval is, and the
    first stays (the median alone took the second)."""
    against = Comparison([1.021, 0.998, 0.819], (0.83, 1.015))
    ratio, seen = ratios_in_turn(0.8, 0.78, against)
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=MATMUL_BASES)
    assert base.head_to_head == ["data-tiling+ukernels", "data-tiling"]
    assert (base.name, vmfb) == ("data-tiling+ukernels", seen[1][1])
    assert base.head_to_head_interval == [0.83, 1.015]
    report = TuneReport("m", "llvm-cpu", None, "online", "local", base=base)
    assert TuneReport.from_json(report.to_json()).base == base


def test_the_thread_count_faster_in_every_load_but_not_by_the_interval_is_left(monkeypatch):
    noisy = Comparison([0.9, 0.92, 0.95], (0.86, 1.02))
    tuned, timed = tuned_with_threads_timed(monkeypatch, noisy, threads="auto")
    base = tuned.report.base
    assert len(timed) == 1 and base.threads is None and base.flags == []
    assert base.threads_interval == [0.86, 1.02]
    assert after_where_the_time_is(tuned.report)[1].endswith(
        "95% interval 0.860-1.020) the time not told; not taken"
    )


def test_a_module_whose_interval_against_the_stock_build_reaches_slower_gives_way(monkeypatch):
    """The module built with the chosen set: its loads' median below the stock build's
    (0.98), but their rounds' interval reaches above 1: it may be slower, and the stock
    build's dispatches are tuned instead."""
    import autotune_model.tuning_pass as tuning_pass

    def time_loads(stock, tuned, function, inputs, policy, device, loads, budget_s):
        rounds = [0.9, 0.95, 0.98, 1.02, 1.06] * 4  # the median 0.98, the interval to 1.02
        timings = [
            ModelTiming(function, 1000.0, 1000.0 * r, 10, rounds=rounds) for r in (0.97, 0.98, 0.99)
        ]
        return timings[1], timings

    import autotune_model.tuning_setup as tuning_setup

    timed: list = []  # data tiling timed at 0.5 of the stock build, the other sets 1.2
    monkeypatch.setattr(tuning_setup, "timed_ratio", data_tiling_timed_fastest(timed, 0.5, 1.2))
    monkeypatch.setattr(tuning_pass, "time_model", fake_time_model)
    monkeypatch.setattr(tuning_pass, "time_model_loads", time_loads)
    options = replace(SMALL, time_model=True, dispatch_gains=False)
    tuned = tune_model(MLP, options, executor=SerialExecutor(), benchmark_job=fake_benchmark)
    report = tuned.report
    assert len(timed) == 2  # data tiling was chosen, then its module gave way
    assert report.base.name == STOCK, report.notes
    note = next(n for n in report.notes if "it may be slower" in n)
    assert "took 0.980x (median of 3 fresh loads: 0.970, 0.980, 0.990; 95% interval" in note
    assert_computes_the_mlp(tuned.vmfb)


def test_a_report_whose_head_to_head_is_not_two_names_is_refused():
    report = json.loads(TuneReport("m", "llvm-cpu", None, "online", "local").to_json())
    for names in (["data-tiling"], [1, 2]):
        report["base"]["head_to_head"] = names
        with pytest.raises(ValueError, match="head_to_head is not two names"):
            TuneReport.from_json(json.dumps(report))


def test_a_model_tuned_with_data_tiling_tunes_its_mmt4d_dispatches_and_computes_the_model():
    tuned = tune_model(MLP, replace(SMALL, base="data-tiling"), executor=SerialExecutor())
    report = tuned.report
    assert (report.base.name, report.base.flags) == ("data-tiling", list(BASES["data-tiling"]))
    # The packed matmuls are dispatches of their own, tuned in IREE's configured form
    # (with dispatch-creation data tiling they took encoded operands and were left alone).
    mmt4d = [d for d in report.dispatches if "_mmt4d_" in d.export]
    assert len(mmt4d) == 2 and all(d.root_op == "linalg.mmt4d" for d in mmt4d), report.skipped
    assert all(len(d.candidates) >= 2 for d in mmt4d)
    assert not [why for why in report.skipped.values() if "data-tiled" in why]
    # Its packs and unpacks (no reduction loop) are tuned too: on B7's MLP packing a
    # weight took 216 of 1683 us of the data-tiled model, 153 with other tiles.
    packing = [d for d in report.dispatches if d.root_op in PACKING_OPS]
    assert len(packing) >= 3 and all(len(d.candidates) >= 2 for d in packing), report.skipped
    assert not [why for why in report.skipped.values() if why.startswith("packing")]
    assert after_where_the_time_is(report)[0] == (
        "build options: data-tiling (--iree-global-opt-data-tiling "
        "--iree-global-opt-enable-early-materialization)"
    )
    assert TuneReport.from_json(report.to_json()).base == report.base
    assert_computes_the_mlp(tuned.vmfb)


def test_skipping_packing_leaves_packs_as_iree_builds_them_and_says_so():
    options = replace(SMALL, base="data-tiling", packing=False)
    tuned = tune_model(MLP, options, executor=SerialExecutor())
    report = tuned.report
    assert {d.root_op for d in report.dispatches} == {"linalg.mmt4d"}, report.dispatches
    packing = [e for e, why in report.skipped.items() if why.startswith("packing")]
    assert len(packing) >= 3 and all("_pack" in e for e in packing), report.skipped
    assert all("--skip-packing" in report.skipped[e] for e in packing)
    assert_computes_the_mlp(tuned.vmfb)


def test_freezing_a_cache_takes_the_option_sets_whose_dispatches_it_names():
    flows = {
        (): "flow.executable.export public @main_dispatch_0_matmul_64x64\n"
        "flow.executable.export public @main_dispatch_1_softmax_64\n",
        BASES["data-tiling"]: "flow.executable.export public @main_dispatch_0_mmt4d_8x8\n"
        "flow.executable.export public @main_dispatch_1_softmax_64\n",
    }
    flows[BASES["data-tiling+ukernels"]] = flows[BASES["data-tiling"]]

    def flow_of(flags):
        return flows[tuple(flags)]

    def decided(*exports: str) -> list[dict]:
        return [
            {"group": f"main_dispatch::{e}__tuned", "variant": "v", "workload": []} for e in exports
        ]

    assert bases_of_decisions(flow_of, decided("main_dispatch_0_matmul_64x64")) == [STOCK]
    tiled = decided("main_dispatch_0_mmt4d_8x8", "main_dispatch_1_softmax_64")
    assert bases_of_decisions(flow_of, tiled) == ["data-tiling", "data-tiling+ukernels"]
    # A name every build has ties them all; one no build has gives none.
    assert bases_of_decisions(flow_of, decided("main_dispatch_1_softmax_64")) == list(MATMUL_BASES)
    assert bases_of_decisions(flow_of, decided("main_dispatch_0_matmul_64")) == []


def test_choosing_among_some_option_sets_times_only_those():
    ratio, seen = ratios_in_turn(1.5)
    base, vmfb = choose_base(MLP, "llvm-cpu", None, [], 1.03, ratio, among=["data-tiling"])
    # The stock build is the reference of the timing, not a choice: the one set given wins.
    assert base.name == "data-tiling" and len(seen) == 1 and vmfb == seen[0][1]
    assert base.ratios == {STOCK: 1.0, "data-tiling": 1.5}


def test_a_dynamic_model_chooses_its_option_set_too(monkeypatch):
    """A model with dynamic sizes was kept on the stock build under `--base auto` (the
    dispatch-creation data-tiled flow phase refused its host code); with data tiling's
    flow phase over plain tensors it chooses among the option sets, and the build it
    chooses computes the model at other sizes as well."""
    from small_models import DYNAMIC

    import autotune_model.tuning_pass as tuning_pass
    import autotune_model.tuning_setup as tuning_setup

    timed: list = []
    monkeypatch.setattr(tuning_setup, "timed_ratio", data_tiling_timed_fastest(timed))
    monkeypatch.setattr(tuning_pass, "time_model_loads", timings_against_stock(0.8))
    options = replace(SMALL, time_model=True, input_shapes=[(40, 256), (256, 256)])
    tuned = tune_model(DYNAMIC, options, executor=SerialExecutor())
    assert len(timed) == 2 and tuned.report.base.name == "data-tiling"
    rng = np.random.default_rng(5)
    w = rng.standard_normal((256, 256)).astype(np.float32)
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        for n in (40, 7, 96):
            x = rng.standard_normal((n, 256)).astype(np.float32)
            want = np.maximum(x @ w, 0)
            got = module.function("dynamic")(x, w)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


def test_the_im2col_option_sets_are_tried_only_on_a_model_with_a_convolution():
    conv_flow = (DATA / "flow" / "conv.flow.mlir").read_text()
    mlp_flow = (DATA / "flow" / "mlp.flow.mlir").read_text()
    assert bases_for(conv_flow) == tuple(BASES)
    assert bases_for(mlp_flow) == MATMUL_BASES
    assert all("--iree-global-opt-use-im2col-for-convs" in BASES[n] for n in CONVOLUTION_BASES)


def test_a_convolution_tuned_with_im2col_and_tuned_explicitly_computes_the_convolution():
    """With im2col the convolution is a gather and a matmul, whose dispatch is tuned; the
    explicit policy's `__autotune` builds synthetic inputs in host code, which a module
    built from the flow phase (every option set but the stock one) takes only as flow ops
    (its `tensor.empty` and `linalg.fill` failed: "failed to legalize operation
    'tensor.empty'")."""
    conv = (DATA / "flow" / "src" / "conv.mlir").read_text()
    options = replace(SMALL, base="im2col", policy="explicit")
    tuned = tune_model(conv, options, executor=SerialExecutor(), benchmark_job=fake_benchmark)
    report = tuned.report
    assert report.base.name == "im2col"
    kept = [d.export for d in report.dispatches if d.kept]
    assert len(kept) == 1 and "_matmul_" in kept[0], (report.dispatches, report.skipped)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 34, 34, 16)).astype(np.float32)
    w = rng.standard_normal((3, 3, 16, 32)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))
    want = np.maximum(np.einsum("nhwcij,ijcf->nhwf", windows, w) + b, 0)
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        module.tune()
        got = module.function("conv")(x, w, b)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def tuned_with_threads_timed(monkeypatch, loads: list[float] | Comparison | None, **options):
    """The MLP tuned from the stock build with the build told the device's thread count
    timed at `loads` of the build not told (None: a timing would fail the test), the
    model's own timing faked; the builds timed, as (not told, told)."""
    import autotune_model.tuning_pass as tuning_pass
    import autotune_model.tuning_setup as tuning_setup

    timed: list[tuple[bytes, bytes]] = []

    def fake_ratio(function, inputs, device):
        def ratio(build: bytes, told: bytes) -> Comparison:
            assert loads is not None, "the thread count was timed"
            timed.append((build, told))
            return loads_of(loads)

        return ratio

    monkeypatch.setattr(tuning_setup, "timed_ratio", fake_ratio)
    monkeypatch.setattr(tuning_pass, "time_model", fake_time_model)
    chosen = replace(SMALL, time_model=True, dispatch_gains=False, base=STOCK, **options)
    return tune_model(MLP, chosen, executor=SerialExecutor(), benchmark_job=fake_benchmark), timed


def test_the_device_thread_count_is_taken_where_the_model_runs_faster_told_it(monkeypatch):
    """Told the device's thread count, the stock build took 0.9x its time in every load:
    the tuned module is built so (the flag in the build options), and says why."""
    tuned, timed = tuned_with_threads_timed(monkeypatch, [0.88, 0.9, 0.92], threads="auto")
    base = tuned.report.base
    count = device_threads("local-task")
    assert count is not None and count >= 1 and len(timed) == 1 and timed[0][0] != timed[0][1]
    assert (base.name, base.threads, base.threads_tried) == (STOCK, count, count)
    assert base.flags == [f"{THREADS_FLAG}={count}"] and base.label == f"stock ({count} threads)"
    lines = after_where_the_time_is(tuned.report)
    assert lines[0] == f"build options: stock ({THREADS_FLAG}={count})"
    assert lines[1] == (
        f"code generation told {count} threads (the device's): 0.900x (median of 3 fresh "
        "loads: 0.880, 0.900, 0.920; 95% interval 0.880-0.920) the time not told; taken"
    )
    assert TuneReport.from_json(tuned.report.to_json()).base == base
    assert_computes_the_mlp(tuned.vmfb)


def test_the_device_thread_count_is_left_where_one_load_ran_slower_told_it(monkeypatch):
    tuned, timed = tuned_with_threads_timed(monkeypatch, [0.9, 1.01, 0.95], threads="auto")
    base = tuned.report.base
    assert len(timed) == 1 and base.threads is None and base.flags == []
    assert base.threads_tried == device_threads("local-task") and base.label == STOCK
    assert after_where_the_time_is(tuned.report)[1].endswith(
        "(median of 3 fresh loads: 0.900, 1.010, 0.950; 95% interval 0.900-1.010) the time not "
        "told; not taken"
    )
    assert_computes_the_mlp(tuned.vmfb)


def test_a_thread_count_given_is_taken_untimed_and_iree_leaves_the_default(monkeypatch):
    tuned, _ = tuned_with_threads_timed(monkeypatch, None, threads="3")
    base = tuned.report.base
    assert (base.threads, base.threads_tried, base.flags) == (3, None, [f"{THREADS_FLAG}=3"])
    assert_computes_the_mlp(tuned.vmfb)
    tuned, _ = tuned_with_threads_timed(monkeypatch, None, threads=IREE_THREADS)
    assert (tuned.report.base.threads, tuned.report.base.flags) == (None, [])


@pytest.mark.parametrize(
    ("target", "threads", "message"),
    [
        ("llvm-cpu", "many", "threads 'many': expected auto, iree or a positive count"),
        ("llvm-cpu", "0", "threads '0': expected auto, iree or a positive count"),
        ("cuda", "4", "threads 4: only llvm-cpu code generation takes a thread count"),
    ],
)
def test_a_thread_count_that_is_not_one_is_refused_before_any_work(target, threads, message):
    options = replace(SMALL, target=target, threads=threads)
    with pytest.raises(DiagnosticError, match=message):
        tune_model("this is not read", options, executor=SerialExecutor())


def test_the_devices_thread_counts():
    assert device_threads("local-sync") == 1
    assert device_threads("local-task") == device_threads("local-task://") >= 1
    assert device_threads("cuda") is None
