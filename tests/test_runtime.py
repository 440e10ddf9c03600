"""The runtime: stop rule, statistics, persistent tuning cache, fingerprints, concurrency."""

from __future__ import annotations

import json
import math
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from modules import speed_module, tagged_module

from autotune_contracts.interface import qualified_group_name, split_group_name
from autotune_runtime import CacheKey, CacheWarning, StopRule, TuningCache, load
from autotune_runtime import stats as stats_module
from autotune_runtime.cache import SCHEMA_VERSION, Entry
from autotune_runtime.stats import VariantStats, next_or_winner
from autotune_runtime.tuner import GroupInfo, Tuner, TuningWarning
from lowering.driver import compile

TESTS = Path(__file__).parent
ROOT = TESTS.parent


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
    # early: the reference (run first) after one timed run, the last after its cold run
    assert runs == (1 + 3) + 2 + 1
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
        tuner = Tuner(groups, StopRule(warmup=1, min_samples=3, max_samples=cap, indifference=0))
        samples = 0
        while not tuner.select(0, ())[1]:
            variant = tuner.in_flight[2]
            # the same times for every variant: none is eliminated, all run to the cap
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


# --- online tuning on real timings ------------------------------------------------------


@pytest.fixture(scope="module")
def speed_vmfb(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("speed") / "speed.vmfb"
    path.write_bytes(compile(speed_module()))
    return path


def tune_online(vmfb: Path, cache, calls: int = 200, **options):
    module = load(vmfb, device="local-sync", cache=cache, **options)
    x = np.ones(65536, np.float32)
    for _ in range(calls):
        module.step(x)
        if module.decisions():
            break
    return module


def test_online_commits_to_the_fastest_variant(speed_vmfb, tmp_path):
    module = tune_online(speed_vmfb, tmp_path / "c.sqlite3", max_samples=20)
    assert module.decisions() == {("work::step", ()): "x1"}
    (stats,) = module.stats()
    assert 0 < stats["explored_calls"] <= 3 * (1 + 20)
    medians = {v["variant"]: v["median_ns"] for v in stats["variants"]}
    assert medians["x96"] > 2 * medians["x1"]
    module.close()


SECOND_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from autotune_runtime import load
    module = load(sys.argv[1], device="local-sync", cache=sys.argv[2])
    for _ in range(5):
        module.step(np.ones(65536, np.float32))
    print(json.dumps(module.stats()))
    module.close()
    """
)


def test_second_process_starts_committed(speed_vmfb, tmp_path):
    cache = tmp_path / "shared.sqlite3"
    first = tune_online(speed_vmfb, cache, max_samples=20)
    decision = first.decisions()
    first.close()
    result = subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, str(speed_vmfb), str(cache)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    (stats,) = json.loads(result.stdout)
    assert stats["from_cache"] is True
    assert stats["explored_calls"] == 0
    assert {("work::step", ()): stats["decision"]} == decision


@pytest.mark.parametrize("field", ["runtime_version", "name"])
def test_changed_fingerprint_retunes(speed_vmfb, tmp_path, field):
    cache = tmp_path / "c.sqlite3"
    first = tune_online(speed_vmfb, cache, max_samples=5)
    fingerprint = first.fingerprint
    first.close()
    again = tune_online(speed_vmfb, cache, calls=1, fingerprint=fingerprint)
    assert again.stats()[0]["from_cache"] is True
    again.close()
    changed = replace(fingerprint, **{field: "changed-for-test"})
    other = tune_online(speed_vmfb, cache, calls=1, fingerprint=changed)
    (stats,) = other.stats()
    assert stats["from_cache"] is False and stats["explored_calls"] == 1
    other.close()


def test_changed_variant_set_misses_the_cache(tmp_path):
    cache = tmp_path / "c.sqlite3"
    module = load(compile(tagged_module(3)), device="local-sync", cache=cache, max_samples=2)
    for _ in range(12):
        module.run(np.zeros(16, np.float32))
    assert module.decisions()
    module.close()
    four = load(compile(tagged_module(4)), device="local-sync", cache=cache)
    four.run(np.zeros(16, np.float32))
    assert four.stats()[0]["from_cache"] is False
    four.close()


def test_stats_and_decisions_are_exposed(speed_vmfb, tmp_path):
    module = tune_online(speed_vmfb, False, max_samples=20)
    (stats,) = module.stats()
    assert stats["group"] == "work::step" and stats["workload"] == []
    assert [v["variant"] for v in stats["variants"]] == ["x24", "x1", "x96"]
    for v in stats["variants"]:
        assert v["runs"] >= 1
        assert v["min_ns"] <= v["median_ns"] if v["samples"] else v["eliminated"]
    slowest = stats["variants"][2]
    assert slowest["runs"] == 1 and slowest["eliminated"]  # x96: dropped after its cold run
    module.close()


# --- the cache file ---------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys, time
    from autotune_runtime.cache import CacheKey, Entry, TuningCache
    cache = TuningCache(sys.argv[1])
    worker = int(sys.argv[2])
    for i in range(40):
        key = CacheKey("device", "module", f"group{worker}", (i,))
        cache.put(Entry(key, f"v{i % 3}", {"worker": worker}, {}, time.time()))
    cache.close()
    """
)


def test_eight_processes_lose_no_decision(tmp_path):
    path = tmp_path / "concurrent.sqlite3"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w)], cwd=ROOT)
        for w in range(8)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    entries = list(TuningCache(path).entries())
    assert len(entries) == 8 * 40
    assert {e.key.group for e in entries} == {f"group{w}" for w in range(8)}
    assert all(e.variant == f"v{e.key.workload[0] % 3}" for e in entries)


TUNER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from autotune_runtime import load
    module = load(sys.argv[1], device="local-sync", cache=sys.argv[2], max_samples=2)
    n = int(sys.argv[3])
    for _ in range(12):
        module.run(np.zeros(n, np.float32))
    assert module.decisions(), "no decision"
    module.close()
    """
)


def test_eight_tuning_processes_share_one_cache(tmp_path):
    vmfb = tmp_path / "dyn.vmfb"
    vmfb.write_bytes(compile(tagged_module(dynamic=True)))
    path = tmp_path / "shared.sqlite3"
    sizes = [8 + k for k in range(8)]
    procs = [
        subprocess.Popen([sys.executable, "-c", TUNER, str(vmfb), str(path), str(n)], cwd=ROOT)
        for n in sizes
    ]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    keys = {e.key.workload for e in TuningCache(path).entries()}
    assert keys == {(n,) for n in sizes}


def test_damaged_cache_is_set_aside_and_tuning_goes_on(speed_vmfb, tmp_path):
    path = tmp_path / "broken.sqlite3"
    garbage = b"SQLite format 3\x00" + b"\x07" * 90  # an SQLite file that cannot be read
    path.write_bytes(garbage)
    with pytest.warns(CacheWarning, match="moved to"):
        module = tune_online(speed_vmfb, path, max_samples=5)
    assert module.decisions()
    module.close()
    (aside,) = tmp_path.glob("broken.sqlite3.corrupt-*")
    assert aside.read_bytes() == garbage
    assert list(TuningCache(path).entries())  # the new file holds the decision


def test_a_file_that_is_not_a_cache_is_refused_and_left_alone(speed_vmfb, tmp_path):
    from autotune_runtime.cache import NotACacheError

    other = tmp_path / "notes.sqlite3"
    other.write_bytes(b"this is not a database")
    with pytest.raises(NotACacheError, match="not an SQLite database"):
        load(speed_vmfb, device="local-sync", cache=other)
    conn = sqlite3.connect(tmp_path / "app.sqlite3")
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.commit()
    conn.close()
    before = (tmp_path / "app.sqlite3").read_bytes()
    with pytest.raises(NotACacheError, match="not a tuning cache \\(its tables: users\\)"):
        TuningCache(tmp_path / "app.sqlite3")
    assert other.read_bytes() == b"this is not a database"
    assert (tmp_path / "app.sqlite3").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite3", "notes.sqlite3"]


def test_a_damaged_file_at_the_default_location_is_set_aside(tmp_path, monkeypatch):
    monkeypatch.setenv("IREE_AUTOTUNE_CACHE", str(tmp_path / "tuning.sqlite3"))
    (tmp_path / "tuning.sqlite3").write_bytes(b"this is not a database")
    with pytest.warns(CacheWarning, match="moved to"):
        cache = TuningCache()
    assert cache.persistent
    (aside,) = tmp_path.glob("tuning.sqlite3.corrupt-*")
    assert aside.read_bytes() == b"this is not a database"


def test_truncated_cache_is_set_aside(tmp_path):
    path = tmp_path / "t.sqlite3"
    cache = TuningCache(path)
    for i in range(200):
        cache.put(Entry(CacheKey("d", "m", "g", (i,)), "v", {"pad": "x" * 200}, {}, 0.0))
    cache.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.warns(CacheWarning):
        fresh = TuningCache(path)
        list(fresh.entries())
    assert list(tmp_path.glob("t.sqlite3.corrupt-*"))


@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_unwritable_location_tunes_in_memory(speed_vmfb, tmp_path, where):
    # Root may write anywhere, so unwritable means: below a regular file, or in /proc.
    if where == "under_a_file":
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("x")
        path = blocker / "c.sqlite3"
    else:
        path = Path("/proc/iree-autotune-test/c.sqlite3")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = tune_online(speed_vmfb, path, max_samples=5)
    cache_warnings = [w for w in caught if issubclass(w.category, CacheWarning)]
    assert len(cache_warnings) == 1
    assert "will not be saved" in str(cache_warnings[0].message)
    assert module.decisions()
    assert not module.cache.persistent
    module.close()


def test_schema_upgrade_keeps_decisions(tmp_path):
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE decisions (device TEXT, module TEXT, grp TEXT, workload TEXT,
            variant TEXT, stats TEXT, updated REAL,
            PRIMARY KEY (device, module, grp, workload));
        INSERT INTO decisions VALUES ('d', 'm', 'g', '[4]', 'v1', '{}', 1.0);
        """
    )
    conn.commit()
    conn.close()
    cache = TuningCache(path)
    (entry,) = cache.entries()
    assert (entry.key, entry.variant, entry.device_info) == (
        CacheKey("d", "m", "g", (4,)),
        "v1",
        {},
    )
    version = cache.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    assert int(version[0]) == SCHEMA_VERSION


def test_newer_schema_is_left_alone(tmp_path):
    path = tmp_path / "new.sqlite3"
    TuningCache(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.warns(CacheWarning, match="newer"):
        cache = TuningCache(path)
    assert not cache.persistent
    assert path.read_bytes() == before


def test_export_import_round_trip(tmp_path):
    source = TuningCache(tmp_path / "a.sqlite3")
    for i in range(5):
        source.put(
            Entry(CacheKey("d", "m", "exe::g", (i, 2 * i)), f"v{i}", {"i": i}, {"x": 1}, 5.0)
        )
    data = json.loads(json.dumps(source.export()))
    target = TuningCache(tmp_path / "b.sqlite3")
    assert target.import_(data) == 5

    def rows(cache):
        return {(e.key, e.variant, json.dumps(e.stats)) for e in cache.entries()}

    assert rows(target) == rows(source)
    with pytest.raises(ValueError, match="format"):
        target.import_({"decisions": []})


def test_default_path_follows_the_environment(monkeypatch, tmp_path):
    from autotune_runtime.cache import default_path

    monkeypatch.setenv("IREE_AUTOTUNE_CACHE", str(tmp_path / "x.sqlite3"))
    assert default_path() == tmp_path / "x.sqlite3"
    monkeypatch.delenv("IREE_AUTOTUNE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "iree-autotune" / "tuning.sqlite3"


def test_full_disk_keeps_tuning_and_what_was_saved(tmp_path):
    path = tmp_path / "full.sqlite3"
    cache = TuningCache(path)
    saved = Entry(CacheKey("d", "m", "g", (0,)), "v0", {}, {}, 1.0)
    cache.put(saved)
    # Simulate a full disk: the file may not grow any more.
    pages = cache.conn.execute("PRAGMA page_count").fetchone()[0]
    cache.conn.execute(f"PRAGMA max_page_count = {pages}")
    big = {"pad": "x" * 100_000}
    with pytest.warns(CacheWarning, match="cannot write tuning cache .* full"):
        for i in range(1, 4):
            cache.put(Entry(CacheKey("d", "m", "g", (i,)), f"v{i}", big, {}, 2.0))
    assert not cache.persistent
    assert cache.get(saved.key).variant == "v0"  # the file still answers
    assert cache.get(CacheKey("d", "m", "g", (3,))).variant == "v3"  # kept in memory
    assert [e.key.workload for e in cache.entries()] == [(0,), (1,), (2,), (3,)]
    cache.close()
    assert [e.variant for e in TuningCache(path).entries()] == ["v0"]


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
