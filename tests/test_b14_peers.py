"""B14's parts that need no frontend: the interleaved rounds and their ratios, the
worker's protocol and its report of a runtime that cannot build the model, and the case
without the frontends' interpreter. (The timing itself runs in `make bench`.)"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from benchmarks import b14_peers, peer_worker
from benchmarks.common import Settings
from benchmarks.report_cases import case_table, reading


def test_every_contender_runs_once_a_round_in_every_order_in_turn():
    calls: list[str] = []

    def contender(name: str, ns: int):
        return lambda: calls.append(name) or ns

    now = iter(range(0, 10**12, 10**9))  # one second per reading of the clock
    times = b14_peers.interleaved(
        {"a": contender("a", 100), "b": contender("b", 200), "c": contender("c", 400)},
        budget_s=2.5,
        min_rounds=4,
        clock=lambda: next(now),
    )
    # the clock is read after the fourth round (1 s, 2 s: under the budget, a round more
    # each) and after the sixth (3 s): six rounds, the six orders of three
    assert calls == list("abcacbbacbcacabcba")
    # within the rounds, each contender runs right after each other one twice
    rounds = [calls[i : i + 3] for i in range(0, len(calls), 3)]
    follows = Counter(pair for r in rounds for pair in zip(r, r[1:], strict=False))
    assert follows == Counter({(x, y): 2 for x in "abc" for y in "abc" if x != y})
    assert times == {"a": [100] * 6, "b": [200] * 6, "c": [400] * 6}
    tuned_over_a = b14_peers.over(times, "c", "a")
    assert tuned_over_a["ratio"] == 4.0 and tuned_over_a["interval"] == [4.0, 4.0]


def test_ratios_are_taken_within_rounds():
    # a slow spell doubles every contender's round 2: the ratio within each round holds
    times = {"tuned": [100, 200, 100, 100, 100], "native": [50, 100, 50, 50, 50]}
    assert b14_peers.over(times, "tuned", "native")["ratio"] == 2.0


def test_the_worker_answers_calls_results_and_quit(tmp_path, monkeypatch):
    answers = io.StringIO()
    monkeypatch.setattr(peer_worker, "ANSWERS", answers)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)  # saved as float32
    outputs = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(2, np.int64), bf16]
    path = tmp_path / "r.npz"
    commands = ["call", f"result {path}", "bogus", "quit", "call"]
    peer_worker.serve(lambda: outputs, iter(c + "\n" for c in commands))
    lines = [json.loads(line) for line in answers.getvalue().splitlines()]
    assert lines[0]["ns"] >= 0 and lines[1] == {"saved": str(path)}
    assert lines[2] == {"error": "unknown command 'bogus'"}
    assert len(lines) == 3  # nothing after quit
    with np.load(path) as saved:
        np.testing.assert_array_equal(saved["result_0"], outputs[0])
        np.testing.assert_array_equal(saved["result_1"], outputs[1])
        assert saved["result_2"].dtype == np.float32
        np.testing.assert_array_equal(saved["result_2"], [1.5, -2.0])


@pytest.mark.parametrize(
    "name, runtime, error",
    [
        ("no_such_model", "torch", "KeyError: 'no_such_model'"),
        ("bert_flax", "torch", "ValueError: bert_flax is a jax model; its runtimes: ('jax.jit',)"),
    ],
)
def test_a_runtime_that_cannot_run_the_model_says_why_and_exits_1(name, runtime, error, tmp_path):
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, arg_0=np.zeros((1, 64), np.int32))
    done = subprocess.run(
        [sys.executable, str(peer_worker.__file__), name, runtime, "1", str(inputs)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    first = json.loads(done.stdout.splitlines()[0])
    # bert_flax needs transformers, which only the frontends' interpreter has: either way
    # the one line names what stopped it
    assert first["error"] == error or first["error"].startswith("ModuleNotFoundError")


def test_without_the_frontends_interpreter_the_case_measures_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTUNE_FRONTENDS_PYTHON", str(tmp_path / "none" / "python"))
    monkeypatch.setattr(b14_peers, "_one", lambda *a: pytest.fail("a model was measured"))
    result = b14_peers.run(Settings(quick=True, scratch=tmp_path))
    assert math.isinf(result.ratio) and result.detail["models"] == []
    case = result.as_json()
    assert reading(case).startswith("Not measured: no frontends' interpreter")
    assert case_table(case) == []


def test_the_reading_names_the_models_over_the_goal_and_where_their_time_is():
    row = {
        "model": "m1",
        "ratio": 1.5,
        "interval": [1.4, 1.6],
        "best": "torch",
        "tuned_us": 150.0,
        "stock_us": 200.0,
        "runtimes": {
            "torch": {"us": 100.0, "stock_over": {"ratio": 2.0}, "results_difference": 1e-6}
        },
        "time_in": [{"dispatch": "main_dispatch_3_conv", "us": 90.0}],
        "dispatches_per_call": 290,
    }
    fast = dict(row, model="m2", ratio=0.5, interval=[0.45, 0.55], time_in=[])
    detail = {"models": [row, fast], "goal_geomean": 1.0, "goal_worst": 1.2, "stock_over_best": 2.0}
    text = b14_peers.reading(detail, math.sqrt(1.5 * 0.5))
    assert "0.866x" in text and "worst m1 1.500x" in text and "missed" in text
    assert "interval below 1): m2" in text
    assert "m1 (time in 290 dispatches per call; `main_dispatch_3_conv` 90 us)" in text
    lines = b14_peers.table(detail)
    assert lines[2].startswith("| m1 | 150 | 200 | torch 100 | 1.500 (1.400-1.600) vs torch |")
    failed = {"model": "m3", "failed": "RuntimeError: no build", "runtimes": {}}
    detail["models"].append(failed)
    assert b14_peers.reading(detail, math.sqrt(1.5 * 0.5)) == text  # a failed row: no ratio
    assert (
        b14_peers.table(detail)[-1] == "| m3 | - | - | failed: RuntimeError: no build | - | - | - |"
    )
