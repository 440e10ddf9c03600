"""The explicit policy in the runtime: a group's setter and getter, the decisions they
show, cached explicit decisions applied at load (per size), a dynamic group without
workloads; and the qualified name by which a group is known to the metadata and the cache."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from modules import tagged_module

from autotune_contracts.interface import qualified_group_name, split_group_name
from autotune_runtime import TuningCache, load
from autotune_runtime.key_state import GroupInfo
from lowering.driver import compile

# --- the explicit policy: setter, getter, decisions, cached decisions ------------------------


@pytest.fixture(scope="module")
def explicit_vmfbs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("explicit")
    attrs = 'policy = "explicit", tolerance = 10.0'
    sources = {
        "one": tagged_module(group_attrs="{" + attrs + "}"),
        "sizes": tagged_module(
            dynamic=True, group_attrs="{" + attrs + ", workloads = [[8], [32]]}"
        ),
        "dynamic": tagged_module(dynamic=True, group_attrs="{" + attrs + "}"),
    }
    paths = {}
    for name, text in sources.items():
        paths[name] = folder / f"{name}.vmfb"
        paths[name].write_bytes(compile(text))
    return paths


def tag(values: np.ndarray) -> int:
    """Which variant ran: variant k adds k + 1 to zeros."""
    assert np.all(values == values.flat[0])
    return int(values.flat[0]) - 1


@pytest.mark.parametrize("bad", [7, 3, -1, -5, True, 1.0, "v9", None])
def test_the_setter_refuses_what_is_not_a_variant(explicit_vmfbs, bad):
    with load(explicit_vmfbs["one"], device="local-sync", cache=False) as module:
        with pytest.raises(ValueError, match=r"group tagged::add has no variant") as err:
            module.__autotune_set_tagged_add(bad)
        assert "accepted: 0 (v0), 1 (v1), 2 (v2)" in str(err.value)
        assert module.__autotune_get_tagged_add() == -1 and module.decisions() == {}
        assert tag(module.run(np.zeros(16, np.float32))) == 0  # still the reference


def test_what_the_setter_sets_is_in_decisions_and_runs(explicit_vmfbs, tmp_path):
    zeros = np.zeros(16, np.float32)
    with load(explicit_vmfbs["one"], device="local-sync", cache=tmp_path / "c.db") as module:
        module.__autotune_set_tagged_add("v2")
        assert module.decisions() == {("tagged::add", ()): "v2"}
        assert module.__autotune_get_tagged_add() == 2 and tag(module.run(zeros)) == 2
        module.__autotune_set_tagged_add(np.int32(1))
        assert module.decisions() == {("tagged::add", ()): "v1"}
        assert module.__autotune_get_tagged_add() == 1 and tag(module.run(zeros)) == 1
        assert list(module.cache.entries()) == []  # a choice set by hand is not stored
        module.tune()  # replaces the hand-set choice with the tuned one
        (chosen,) = module.decisions().values()
        assert module.__autotune_get_tagged_add() == int(chosen[1:])
        assert tag(module.run(zeros)) == int(chosen[1:])
    cache = TuningCache(tmp_path / "c.db")
    assert [e.variant for e in cache.entries()] == [chosen]
    cache.close()


def test_cached_explicit_decisions_apply_at_load(explicit_vmfbs, tmp_path):
    path = tmp_path / "c.db"
    with load(explicit_vmfbs["sizes"], device="local-sync", cache=path) as module:
        module.tune()
    cache = TuningCache(path)
    for entry in cache.entries():  # pin them: not the reference, not the same
        cache.put(replace(entry, variant={(8,): "v2", (32,): "v1"}[entry.key.workload]))
    cache.close()
    with load(explicit_vmfbs["sizes"], device="local-sync", cache=path) as module:
        assert module.decisions() == {("tagged::add", (8,)): "v2", ("tagged::add", (32,)): "v1"}
        assert [s["from_cache"] for s in module.stats()] == [True, True]
        assert tag(module.run(np.zeros(8, np.float32))) == 2
        assert tag(module.run(np.zeros(32, np.float32))) == 1
        assert tag(module.run(np.zeros(16, np.float32))) == 0  # an untuned size
        # Per-size decisions: the getter gives each size's, or the one asked for.
        assert module.__autotune_get_tagged_add() == {(8,): 2, (32,): 1}
        assert module.__autotune_get_tagged_add((32,)) == 1
        assert module.__autotune_get_tagged_add(8) == 2
        with pytest.raises(
            ValueError, match=r"no workload \[16\] \(its workloads: \[8\], \[32\]\)"
        ):
            module.__autotune_get_tagged_add(16)
        module.__autotune_set_tagged_add(0)  # every size
        assert module.__autotune_get_tagged_add() == {(8,): 0, (32,): 0}
        assert tag(module.run(np.zeros(8, np.float32))) == 0
    with load(explicit_vmfbs["sizes"], device="local-sync", cache=False) as module:
        assert module.__autotune_get_tagged_add() == {(8,): -1, (32,): -1}
        assert module.decisions() == {}


def test_a_dynamic_group_without_workloads_warns_when_tuned(explicit_vmfbs):
    from autotune_runtime.tuner import TuningWarning

    with load(explicit_vmfbs["dynamic"], device="local-sync", cache=False) as module:
        with pytest.warns(TuningWarning, match=r"0 workload keys were tuned") as caught:
            module.tune()
        assert "`workloads = [[...], ...]`, 1 value(s) each" in str(caught[0].message)
        assert module.decisions() == {} and module.__autotune_get_tagged_add() == -1
        with pytest.raises(ValueError, match="no workload keys to set a variant for"):
            module.__autotune_set_tagged_add(1)


def test_a_group_is_named_by_its_container_as_the_metadata_and_the_cache_name_it():
    assert qualified_group_name("tagged", "add") == "tagged::add"
    assert qualified_group_name(None, "add") == "add"
    assert split_group_name("tagged::add") == ("tagged", "add")
    assert split_group_name("add") == (None, "add")
    info = GroupInfo(gid=0, name="add", container="tagged", variants=("a", "b"), policy="online")
    assert info.qualified_name == "tagged::add"
