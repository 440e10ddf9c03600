"""What B2, B5 and B10 set up alike (benchmarks/online_setup.py), each piece checked on
small modules: decisions as export rows, the static build of them, and the calls that the
cases time; B2's tuned pair at a small size (no benchmark is run)."""

from __future__ import annotations

import numpy as np
from modules import tagged_module

from benchmarks import b5_online, b10_model_online
from benchmarks.b2_overhead import tuned_pair
from benchmarks.common import Settings, compile_module, load_module
from benchmarks.online_setup import decision_rows, device_calls, static_build


def test_decisions_become_export_rows():
    decisions = {("tagged::add", ()): "v1", ("e0::add", (1000,)): "g0_v0"}
    assert decision_rows(decisions) == [
        {"group": "tagged::add", "workload": [], "variant": "v1"},
        {"group": "e0::add", "workload": [1000], "variant": "g0_v0"},
    ]


def test_the_static_build_runs_the_decided_variant_and_the_calls_run_each_module(tmp_path):
    """Variant vK of the tagged module adds K + 1: the static build of v1 adds 2."""
    settings = Settings(quick=True, scratch=tmp_path)
    text = tagged_module(group_attrs="{tolerance = 10.0}")
    rows = decision_rows({("tagged::add", ()): "v1"})
    static = load_module(static_build(settings, "v1", text, rows))
    assert (tmp_path / "v1.json").exists()
    assert static.groups == {}
    explicit = load_module(compile_module(text, "explicit"))
    explicit.__autotune_set_tagged_add(2)
    x = np.arange(16, dtype=np.float32)
    calls = device_calls((static, explicit), "run", x)
    results = [np.asarray(call().to_host()) for call in calls]
    np.testing.assert_array_equal(results[0], x + 2)
    np.testing.assert_array_equal(results[1], x + 3)
    static.close()
    explicit.close()


def test_b2s_pair_is_a_committed_online_module_and_the_static_build_of_its_winner(tmp_path):
    settings = Settings(quick=True, scratch=tmp_path)
    pair = tuned_pair(settings, 64, "local-sync")
    try:
        assert pair.winner in ("add0", "add1", "add2")
        assert pair.tuning_calls >= 3
        assert pair.online.decisions() == {("adds::add", ()): pair.winner}
        assert pair.static.groups == {}
        assert (tmp_path / f"b2_64_{pair.winner}.json").exists()
        x = np.arange(64, dtype=np.float32)
        for call in device_calls((pair.online, pair.static), "run", x):
            np.testing.assert_array_equal(np.asarray(call().to_host()), x + 1)
    finally:
        pair.close()


def test_b5_and_b10_use_the_shared_set_up():
    for case in (b5_online, b10_model_online):
        assert case.device_calls is device_calls
        assert case.static_build is static_build
