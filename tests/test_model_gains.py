"""Each tuned dispatch's gain in the model against its gain alone (`autotune_model.gains`):
the ablation's bookkeeping on an injected model and clock, the words for each outcome, and
the report's record of it."""

from __future__ import annotations

import json

from autotune_model.gains import Planned, ablation_times, explain, gains
from autotune_model.report import (
    REFERENCE,
    CandidateResult,
    DispatchResult,
    ModelGain,
    TuneReport,
    summary_lines,
)


def planned(group: str, default_us: float, best_us: float, per_call: int = 1) -> Planned:
    return Planned(group, f"{group}__t", group, default_us * 1e3, best_us * 1e3, per_call, 4096)


class FakeModel:
    """A model whose call takes 1000 ns plus, for each group set to IREE's own variant,
    that group's extra time; the clock advances only by calls."""

    def __init__(self, extra: dict[str, int]):
        self.extra = extra
        self.now = 0
        self.chosen: dict[str, str] = {}
        self.ran: list[frozenset[str]] = []

    def clock(self) -> int:
        return self.now

    def set_variant(self, group: str, variant: str) -> None:
        self.chosen[group] = variant

    def call(self) -> None:
        reverted = frozenset(g for g, v in self.chosen.items() if v == g)
        self.ran.append(reverted)
        self.now += 1000 + sum(self.extra[g] for g in reverted)


def test_each_configuration_runs_one_group_at_iree_own_the_others_at_their_winners():
    plan = [planned("a", 50, 20), planned("b", 30, 25)]
    model = FakeModel({"a": 300, "b": 40})
    times = ablation_times(
        model.call,
        model.set_variant,
        plan,
        budget_s=0.0,
        min_rounds=4,
        clock=model.clock,
        threads=lambda: (0, 0),
    )
    assert times[None] == [1000] * 4
    assert times["a"] == [1300] * 4 and times["b"] == [1040] * 4
    # one group back at a time, the order reversed every other round
    a, b, none = frozenset({"a"}), frozenset({"b"}), frozenset()
    assert model.ran == [none, a, b, b, a, none, none, a, b, b, a, none]
    assert model.chosen == {"a": "a__t", "b": "b__t"}  # left at the winners

    found = gains(plan, times)
    assert found["a"].gained_ns == 300 and found["b"].gained_ns == 40
    assert found["a"].promised_ns == 30_000 and found["a"].model_ns == 1000


def test_the_promise_is_the_time_saved_alone_times_the_dispatches_per_call():
    assert planned("a", 50, 20, per_call=3).promised_ns == 90_000


def test_words_say_whether_the_promise_held_with_the_numbers():
    p = planned("a", 50, 20)  # 30 us promised
    held = explain(p, gained=27_000, noise=2_000, model_ns=400_000)
    assert held.startswith("held:") and "30.0 us per call promised" in held and "90%" in held
    lost = explain(p, gained=500, noise=2_000, model_ns=400_000)
    assert lost.startswith("lost:") and "the same operands" in lost and "4 KiB" in lost
    part = explain(p, gained=6_000, noise=2_000, model_ns=400_000)
    assert part.startswith("only 20% of it kept:")
    slower = explain(p, gained=-9_000, noise=2_000, model_ns=400_000)
    assert slower.startswith("lost:") and "slower with it" in slower
    small = explain(p, gained=1_000, noise=40_000, model_ns=400_000)
    assert "below what timing the whole model resolves" in small and "7.5%" in small


def test_the_report_keeps_the_gains_and_reads_reports_without_them():
    report = TuneReport("m.mlir", "llvm-cpu", None, "online", "local")
    dispatch = DispatchResult("d0", "linalg.matmul", [4], ["4x4xf32"])
    dispatch.candidates = [CandidateResult("default", REFERENCE, 50e3)]
    dispatch.model_gain = ModelGain(30e3, 27e3, 2e3, 1, 400e3, "held: ...")
    report.dispatches = [dispatch, DispatchResult("d1", "linalg.matmul", [4], ["4x4xf32"])]
    again = TuneReport.from_json(report.to_json())
    assert again.dispatches[0].model_gain == dispatch.model_gain
    assert again.dispatches[1].model_gain is None
    lines = summary_lines(again)
    assert (
        "in the model: 1 tuned dispatch promised 30.0 us per call alone and gained 27.0 us "
        "(noise +-2.0 us)" in lines
    )
    # several: the gains add, and so do their noises (as independent errors)
    other = DispatchResult("d2", "linalg.matmul", [4], ["4x4xf32"])
    other.model_gain = ModelGain(10e3, -3e3, 1.5e3, 1, 400e3, "lost: ...")
    again.dispatches.append(other)
    assert (
        "in the model: 2 tuned dispatches promised 40.0 us per call alone and gained 24.0 us "
        "(noise +-2.5 us)" in summary_lines(again)
    )
    assert "  d0: held: ..." in lines
    older = json.loads(report.to_json())
    for d in older["dispatches"]:
        del d["model_gain"]
    assert TuneReport.from_json(json.dumps(older)).dispatches[0].model_gain is None
