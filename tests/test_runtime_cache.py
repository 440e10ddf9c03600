"""Online tuning on real timings and the persistent tuning cache it commits to: a second
process starts committed, fingerprints and variant sets key the decisions, concurrent
processes lose none, and a damaged, foreign, truncated, unwritable, old, newer or full cache
file is set aside or worked around. The two share one compiled module (`speed_vmfb`)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from modules import speed_module, tagged_module

from autotune_runtime import CacheKey, CacheWarning, TuningCache, load
from autotune_runtime.cache import SCHEMA_VERSION, Entry
from lowering.driver import compile

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
    assert medians["x256"] > 2 * medians["x1"]
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
    assert [v["variant"] for v in stats["variants"]] == ["x64", "x1", "x256"]
    for v in stats["variants"]:
        assert v["runs"] >= 1
        assert v["min_ns"] <= v["median_ns"] if v["samples"] else v["eliminated"]
    slowest = stats["variants"][2]
    # x256, 256x the work of the fastest, is dropped early: after its cold run and a timed run,
    # or a second timed run where its cold run was held up (besides the runs other
    # processes held up, discounted), as the early drop guarantees, never `warmup + min_samples`
    assert slowest["runs"] - slowest["discounted"] <= 1 + 2 and slowest["eliminated"]
    assert stats["decision"] == "x1" and stats["variants"][1]["samples"] >= 3
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
