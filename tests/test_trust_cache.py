"""What users must be able to trust of the tuning cache: no decision lost to a lock held
past the busy timeout, damaged files, rows and pages set aside or skipped while the rest
keeps serving, a read-only cache read and not written, malformed imports refused, and the
cache options telling a cache file from an export.

One regression test per reproduced failure (docs/runtime.md and docs/lowering.md say what is
guaranteed)."""

from __future__ import annotations

import pytest
from command_line import iree_autotune as _cli
from modules import tagged_module

from lowering import compile

# --- the tuning cache ------------------------------------------------------------------

LOCKED_TUNER = """
import json, sys
import numpy as np
from autotune_runtime import load
from autotune_runtime.cache import TuningCache
cache = TuningCache(sys.argv[2], busy_timeout_s=0.3)
module = load(sys.argv[1], device="local-sync", cache=cache, max_samples=2)
n = int(sys.argv[3])
for _ in range(12):
    module.run(np.zeros(n, np.float32))
committed = {f"{g}|{list(w)}": v for (g, w), v in module.decisions().items()}
module.close()  # writes what the locked file could not take
print(json.dumps(committed))
"""

LOCK_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
conn.close()
"""


def test_a_cache_locked_longer_than_the_busy_timeout_loses_no_decision(tmp_path):
    import json
    import subprocess
    import sys

    from autotune_runtime.cache import TuningCache

    vmfb = tmp_path / "dyn.vmfb"
    vmfb.write_bytes(compile(tagged_module(dynamic=True)))
    path = tmp_path / "shared.sqlite3"
    TuningCache(path).close()  # an existing, healthy cache
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(path), "6"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "locked"
    sizes = [8 + k for k in range(8)]
    tuners = [
        subprocess.Popen(
            [sys.executable, "-c", LOCKED_TUNER, str(vmfb), str(path), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in sizes
    ]
    reported: dict[str, str] = {}
    for tuner in tuners:
        out, err = tuner.communicate(timeout=300)
        assert tuner.returncode == 0, err
        assert "is busy" in err  # each waited for the lock instead of losing data
        reported.update(json.loads(out.strip().splitlines()[-1]))
    assert holder.wait(timeout=60) == 0
    assert len(reported) == 8
    stored = {
        f"{e.key.group}|{list(e.key.workload)}": e.variant for e in TuningCache(path).entries()
    }
    assert stored == reported
    assert not list(tmp_path.glob("shared.sqlite3.corrupt-*"))  # nothing set aside


def test_damaged_caches_set_aside_in_the_same_second_keep_distinct_names(tmp_path):
    from autotune_runtime.cache import CacheWarning, TuningCache

    path = tmp_path / "c.sqlite3"
    for content in (b"SQLite format 3\x00first", b"SQLite format 3\x00second"):
        path.write_bytes(content)
        with pytest.warns(CacheWarning, match="moved to"):
            TuningCache(path).close()
    asides = sorted(p.read_bytes() for p in tmp_path.glob("c.sqlite3.corrupt-*"))
    assert asides == [b"SQLite format 3\x00first", b"SQLite format 3\x00second"]


def _decision(group: str, workload: tuple, variant: str):
    from autotune_runtime.cache import CacheKey, Entry

    return Entry(CacheKey("dev", "mod", group, workload), variant, {"n": 1}, {}, 1.0)


def test_a_damaged_row_is_skipped_and_the_rest_keeps_serving(tmp_path):
    import sqlite3

    from autotune_runtime.cache import CacheWarning, TuningCache

    path = tmp_path / "rows.sqlite3"
    cache = TuningCache(path)
    cache.put(_decision("good", (1,), "v1"))
    cache.put(_decision("bad", (2,), "v2"))
    cache.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE decisions SET stats = 'not json{' WHERE grp = 'bad'")
    conn.commit()
    conn.close()
    cache = TuningCache(path)
    with pytest.warns(CacheWarning, match="the decision for bad at \\[2\\] is damaged"):
        assert [e.key.group for e in cache.entries()] == ["good"]
        assert cache.get(_decision("bad", (2,), "v2").key) is None
    assert cache.get(_decision("good", (1,), "v1").key).variant == "v1"
    cache.close()
    for args in (["report", "--cache", str(path)], ["cache", "export", "-", "--cache", str(path)]):
        run = _cli(*args)
        assert run.returncode == 0, run.stderr
        assert "good" in run.stdout and "damaged" in run.stderr


def test_a_read_only_cache_is_read_and_not_written(tmp_path, monkeypatch):
    import os

    from autotune_runtime.cache import CacheWarning, TuningCache

    path = tmp_path / "ro.sqlite3"
    cache = TuningCache(path)
    cache.put(_decision("g", (4,), "v1"))
    cache.close()
    before = path.read_bytes()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if mode == os.W_OK else real_access(p, mode)
    )
    with pytest.warns(CacheWarning, match="read-only: its decisions are used"):
        cache = TuningCache(path)
    assert cache.get(_decision("g", (4,), "v1").key).variant == "v1"
    cache.put(_decision("g", (5,), "v2"))  # kept in memory
    assert cache.get(_decision("g", (5,), "v2").key).variant == "v2"
    cache.close()
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("variant", None, '"variant" must be a non-empty string'),
        ("workload", [True, 2.7], '"workload" must be a list of integers'),
        ("workload", [1.0], '"workload" must be a list of integers'),
    ],
)
def test_cache_import_refuses_malformed_decisions(tmp_path, field, value, message):
    from autotune_runtime.cache import TuningCache

    cache = TuningCache(tmp_path / "a.sqlite3")
    cache.put(_decision("g", (1,), "v1"))
    data = cache.export()
    data["decisions"][0][field] = value
    with pytest.raises(ValueError, match=f"decision #0 is malformed \\({message}"):
        TuningCache(tmp_path / "b.sqlite3").import_(data)
    cache.close()


def test_cache_options_tell_a_cache_file_from_an_export_and_touch_neither(tmp_path):
    from autotune_runtime.cache import TuningCache

    text = tagged_module()
    source = tmp_path / "tagged.mlir"
    source.write_text(text)
    vmfb = tmp_path / "tagged.vmfb"
    assert _cli("compile", str(source), "-o", str(vmfb)).returncode == 0
    module_bytes = vmfb.read_bytes()
    # `report` / `run` given a compiled module or a JSON export: refused, left alone.
    run = _cli("report", "--cache", str(vmfb))
    assert run.returncode == 1 and "is not a tuning cache" in run.stderr
    assert vmfb.read_bytes() == module_bytes
    export = tmp_path / "decisions.json"
    export.write_text('{"format": "iree-autotune-cache", "decisions": []}')
    run = _cli("run", str(vmfb), "--input", "16xf32=0", "--cache", str(export))
    assert run.returncode == 1 and "is not a tuning cache" in run.stderr
    assert export.read_text() == '{"format": "iree-autotune-cache", "decisions": []}'
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "decisions.json",
        "tagged.mlir",
        "tagged.vmfb",
    ]
    # `compile --cache` takes the cache file itself as well as an export (the decisions
    # made for the module's kernels: its group's digest).
    from autotune_bridge.ir import parse_module
    from autotune_contracts.policy import Policy
    from autotune_runtime.cache import CacheKey, Entry
    from lowering.discovery import collect_groups

    (group,) = collect_groups(parse_module(text, "tagged.mlir"), Policy.STATIC).values()
    cache_file = tmp_path / "tuning.sqlite3"
    cache = TuningCache(cache_file)
    key = CacheKey("dev", group.fingerprint(None), "tagged::add", ())
    cache.put(Entry(key, "v2", {"n": 1}, {}, 1.0))
    cache.close()
    lowered = tmp_path / "static.mlir"
    run = _cli(
        "lower", str(source), "--policy", "static", "--cache", str(cache_file), "-o", str(lowered)
    )
    assert run.returncode == 0, run.stderr
    assert "flow.dispatch @tagged::@v2(" in lowered.read_text()


def test_a_damaged_page_costs_only_the_decisions_on_it(tmp_path):
    from autotune_runtime.cache import CacheKey, CacheWarning, Entry, TuningCache

    path = tmp_path / "paged.sqlite3"
    cache = TuningCache(path)
    for i in range(300):
        cache.put(Entry(CacheKey("d", "m", "g", (i,)), f"v{i % 3}", {"pad": "x" * 400}, {}, 1.0))
    cache.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 30 * page
    data[20 * page : 21 * page] = b"\xab" * page  # one page in the middle of the table
    path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning, match="is damaged .* with the \\d+ decisions still readable"):
        cache = TuningCache(path)
    kept = {e.key.workload[0]: e.variant for e in cache.entries()}
    assert 250 <= len(kept) < 300  # only the rows of the damaged page are gone
    assert all(v == f"v{i % 3}" for i, v in kept.items())
    assert cache.get(CacheKey("d", "m", "g", (0,))).variant == "v0"
    cache.put(Entry(CacheKey("d", "m", "g", (999,)), "v1", {}, {}, 2.0))
    cache.close()
    assert len(list(TuningCache(path).entries())) == len(kept) + 1  # the new file is healthy
    (aside,) = tmp_path.glob("paged.sqlite3.corrupt-*")
    assert aside.read_bytes() == bytes(data)  # the damaged file is kept as it was
