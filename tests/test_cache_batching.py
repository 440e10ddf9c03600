"""Committed decisions are written off the calling path, many to a transaction: none is
lost at `close()`, at a normal exit of a process that never closed its cache, or while the
process goes on (the writer thread writes them within its interval); the first decision
for a key still stands, and a process sees its own before it is written."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from conftest import ROOT

from autotune_runtime.cache import CacheKey, Entry, TuningCache
from autotune_runtime.cache_writer import FLUSH_BATCH


def _decision(i: int, variant: str | None = None) -> Entry:
    key = CacheKey("dev", "mod", "exe::g", (i, 7))
    return Entry(key, variant or f"v{i % 3}", {"i": i}, {}, 1.0)


def _stored(path) -> dict[int, str]:
    cache = TuningCache(path)
    try:
        return {e.key.workload[0]: e.variant for e in cache.entries()}
    finally:
        cache.close()


def test_new_keys_share_write_transactions_and_all_reach_the_file(tmp_path):
    path = tmp_path / "c.sqlite3"
    cache = TuningCache(path)
    transactions: list[str] = []
    cache.conn.set_trace_callback(
        lambda sql: transactions.append(sql) if sql.startswith("BEGIN") else None
    )
    count = 10 * FLUSH_BATCH
    for i in range(count):
        assert cache.commit(_decision(i)).variant == f"v{i % 3}"
        assert cache.get(_decision(i).key).variant == f"v{i % 3}"  # its own, written or not
    cache.close()
    assert 1 <= len(transactions) <= count // 10
    assert _stored(path) == {i: f"v{i % 3}" for i in range(count)}


def test_a_committed_decision_reaches_the_file_while_the_process_goes_on(tmp_path):
    path = tmp_path / "c.sqlite3"
    cache = TuningCache(path)
    cache.commit(_decision(1))
    deadline = time.monotonic() + 60
    while _stored(path) != {1: "v1"} and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _stored(path) == {1: "v1"}  # written by the writer thread, not by close()
    assert cache.pending == {}
    cache.close()


def test_the_first_decision_committed_for_a_key_stands(tmp_path):
    path = tmp_path / "c.sqlite3"
    first = TuningCache(path)
    assert first.commit(_decision(1, "v0")).variant == "v0"
    first.close()
    later = TuningCache(path)
    assert later.commit(_decision(1, "v2")).variant == "v0"  # the file's, adopted
    assert later.commit(_decision(2, "v2")).variant == "v2"
    assert later.commit(_decision(2, "v1")).variant == "v2"  # its own buffered one stands
    later.close()
    assert _stored(path) == {1: "v0", 2: "v2"}


EXITS_WITHOUT_CLOSE = textwrap.dedent(
    """
    import sys
    from autotune_runtime import cache_writer
    from autotune_runtime.cache import CacheKey, Entry, TuningCache
    cache_writer.FLUSH_INTERVAL_S = 3600.0  # no write before the exit
    cache = TuningCache(sys.argv[1])
    for i in range(int(sys.argv[2])):
        cache.commit(Entry(CacheKey("dev", "mod", "exe::g", (i, 7)), f"v{i % 3}", {}, {}, 1.0))
    print(len(cache.pending))  # still buffered when the process ends, never closed
    """
)


def test_a_normal_exit_writes_the_decisions_of_a_cache_never_closed(tmp_path):
    path = tmp_path / "c.sqlite3"
    count = FLUSH_BATCH // 2  # fewer than a batch: nothing written before the exit
    run = subprocess.run(
        [sys.executable, "-c", EXITS_WITHOUT_CLOSE, str(path), str(count)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert int(run.stdout) == count
    assert _stored(path) == {i: f"v{i % 3}" for i in range(count)}
