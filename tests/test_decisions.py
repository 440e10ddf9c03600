"""One decision per key, whatever the number of processes; decisions that a cache cannot
take are kept; the choice within a tie band is deterministic.

Timings are replaced by cost models (`Tuner.record` given fixed times per variant), so that
two processes that measure different winners, or variants within noise, are reproducible.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from modules import tagged_module

from autotune_runtime import TuningCache, load
from autotune_runtime.tuner import Tuner
from lowering.driver import compile

ROOT = Path(__file__).parent.parent


def tag(values: np.ndarray) -> int:
    """Which variant ran: variant k adds k + 1 to zeros."""
    assert np.all(values == values.flat[0])
    return int(values.flat[0]) - 1


def costs(times: list[float]) -> type[Tuner]:
    """A `Tuner` whose measured times are `times[variant]`."""

    class Fixed(Tuner):
        def record(self, gid, variant, elapsed_ns, key, waited_ns=0.0):
            super().record(gid, variant, times[variant], key)

    return Fixed


@pytest.fixture(scope="module")
def vmfbs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("decisions")
    sources = {
        "online": tagged_module(group_attrs="{tolerance = 10.0}"),
        "explicit": tagged_module(
            dynamic=True,
            group_attrs='{policy = "explicit", tolerance = 10.0, workloads = [[8], [32]]}',
        ),
    }
    paths = {}
    for name, text in sources.items():
        paths[name] = folder / f"{name}.vmfb"
        paths[name].write_bytes(compile(text))
    return paths


# --- one decision per key ---------------------------------------------------------------


def test_a_tuner_that_commits_second_adopts_the_first_decision(vmfbs, tmp_path):
    path = tmp_path / "shared.sqlite3"
    zeros = np.zeros(16, np.float32)
    later = load(vmfbs["online"], "local-sync", cache=path, tuner_class=costs([1, 2, 3]))
    later.run(zeros)  # exploring: the cache has no decision yet
    with load(vmfbs["online"], "local-sync", cache=path, tuner_class=costs([3, 2, 1])) as first:
        while not first.decisions():
            first.run(zeros)
        assert first.decisions() == {("tagged::add", ()): "v2"}
    while not later.decisions():
        later.run(zeros)
    # its own timings say v0; the first committed decision stands, and its calls run it
    assert later.decisions() == {("tagged::add", ()): "v2"}
    assert tag(later.run(zeros)) == 2
    (stats,) = later.stats()
    assert stats["adopted"] and stats["from_cache"] and stats["explored_calls"] > 0
    later.close()
    cache = TuningCache(path)
    assert [e.variant for e in cache.entries()] == ["v2"]
    cache.close()


TUNE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from autotune_runtime.tuner import Tuner
    from autotune_cli.main import main

    vmfb, cache, times, wait = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    times = [float(t) for t in times.split(",")]
    plain = Tuner.record

    def record(self, gid, variant, elapsed_ns, key, waited_ns=0.0):
        plain(self, gid, variant, times[variant], key)
        if wait and not Path(wait[0]).exists():  # explored once: wait for the other
            Path(wait[0]).touch()
            deadline = time.monotonic() + 120
            while not Path(wait[1]).exists() and time.monotonic() < deadline:
                time.sleep(0.02)

    Tuner.record = record
    sys.exit(main(["tune", vmfb, "--cache", cache, "--device", "local-sync"]))
    """
)


def tune_process(vmfb: Path, cache: Path, times: str, *wait: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", TUNE, str(vmfb), str(cache), times, *map(str, wait)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def decisions_printed(stdout: str) -> dict[str, str]:
    """Workload -> decision, from the decision table that `tune` prints."""
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip("│|┃ ").split("│")]
        if len(cells) > 3 and cells[0] == "tagged::add":
            rows[cells[1]] = cells[2]
    return rows


def test_two_tune_processes_on_one_cache_end_with_one_decision_per_key(vmfbs, tmp_path):
    cache, started, done = tmp_path / "shared.sqlite3", tmp_path / "started", tmp_path / "done"
    # the second process starts first, explores once, and waits until the first has
    # committed both keys; its own timings favour another variant
    second = tune_process(vmfbs["explicit"], cache, "1,2,3", started, done)
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline and second.poll() is None:
        time.sleep(0.02)
    assert started.exists(), second.communicate()
    first = tune_process(vmfbs["explicit"], cache, "3,2,1")
    out_first, err_first = first.communicate(timeout=120)
    done.touch()
    out_second, err_second = second.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, (err_first, err_second)
    stored = TuningCache(cache)
    in_cache = {str(list(e.key.workload)): e.variant for e in stored.entries()}
    stored.close()
    assert in_cache == {"[8]": "v2", "[32]": "v2"}
    assert decisions_printed(out_first) == in_cache
    assert decisions_printed(out_second) == in_cache
    assert (
        "another process committed 1 decision to the tuning cache first" in out_second
    )  # [8]; [32] was read from it
    assert "another process" not in out_first
    # `report` shows the same winners
    report = subprocess.run(
        [sys.executable, "-m", "autotune_cli.main", "report", "--cache", str(cache)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    winners = [line for line in report.stdout.splitlines() if "* winner" in line]
    assert len(winners) == 2 and all(" v2 " in line for line in winners), report.stdout


def test_a_decision_that_waited_for_a_busy_file_does_not_replace_an_earlier_one(
    tmp_path, monkeypatch
):
    import sqlite3

    from autotune_runtime import CacheKey, CacheWarning, cache_writer
    from autotune_runtime.cache import Entry

    monkeypatch.setattr(cache_writer, "FLUSH_INTERVAL_S", 3600.0)  # writes only when told

    path = tmp_path / "c.sqlite3"
    key = CacheKey("d", "m", "g", (4,))
    first, waiting = TuningCache(path), TuningCache(path, busy_timeout_s=0.1)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the file
    assert waiting.commit(Entry(key, "v1", {}, {}, 1.0)).variant == "v1"  # buffered
    other = Entry(CacheKey("d", "m", "g", (5,)), "v0", {}, {}, 1.0)
    with pytest.warns(CacheWarning, match="busy"):
        waiting.put(other)  # a write now, with the buffered decision: the file is busy
    holder.execute("ROLLBACK")
    holder.close()
    assert first.commit(Entry(key, "v2", {}, {}, 2.0)).variant == "v2"
    first.flush()
    with pytest.warns(CacheWarning, match="another process stored v2 for g at \\[4\\] first"):
        waiting.close()
    assert [e.variant for e in first.entries()] == ["v2", "v0"]
    first.close()


# --- a cache that cannot be written ---------------------------------------------------


@pytest.fixture
def read_only_folder(tmp_path, monkeypatch) -> Path:
    """A folder that cannot be written (as `os.access` says: root may write anywhere)."""
    import os

    folder = tmp_path / "ro"
    folder.mkdir()
    real_access = os.access

    def access(path, mode, *args, **kwargs):
        inside = Path(path) == folder or Path(path).parent == folder
        if inside and mode & os.W_OK:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    return folder


def test_a_read_only_folder_keeps_the_decisions_in_the_process_and_says_so_once(
    vmfbs, read_only_folder
):
    import warnings

    from autotune_runtime import CacheWarning

    path = read_only_folder / "tuning.sqlite3"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = load(vmfbs["online"], "local-sync", cache=path, tuner_class=costs([3, 2, 1]))
        zeros = np.zeros(16, np.float32)
        while not module.decisions():
            module.run(zeros)
        assert tag(module.run(zeros)) == 2
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1, messages
    assert f"cannot create tuning cache {path}: its folder is not writable" in messages[0]
    assert "kept in memory for this process only" in messages[0]
    assert "--export FILE.json" in messages[0] and "cache import" in messages[0]
    # the decision is served from memory for the rest of the process, and exported
    (entry,) = module.cache.entries()
    assert entry.variant == "v2" and module.cache.get(entry.key) == entry
    assert [d["variant"] for d in module.cache.export()["decisions"]] == ["v2"]
    module.close()
    assert list(read_only_folder.iterdir()) == []


def test_tune_into_a_read_only_folder_exports_what_it_tuned(
    vmfbs, read_only_folder, tmp_path, capsys
):
    from autotune_cli.main import main

    path = read_only_folder / "tuning.sqlite3"
    export = tmp_path / "kept.json"
    args = ["tune", str(vmfbs["explicit"]), "--cache", str(path), "--device", "local-sync"]
    assert main([*args, "--export", str(export)]) == 0
    out, err = capsys.readouterr()
    assert err.count("warning:") == 1 and "cannot create tuning cache" in err, err
    assert "decisions not stored (kept for this process only: see the warning)" in out
    assert "exported 2 decision(s) to" in out
    writable = tmp_path / "writable.sqlite3"
    assert main(["cache", "import", str(export), "--cache", str(writable)]) == 0
    cache = TuningCache(writable)
    assert sorted(e.key.workload for e in cache.entries()) == [(8,), (32,)]
    cache.close()


# --- a deterministic choice within the tie band ------------------------------------------


def noisy(true_ns: list[float], seed: int, spread: float = 0.015) -> type[Tuner]:
    """A `Tuner` whose measured times are `true_ns` with seeded relative noise."""
    rng = np.random.default_rng(seed)

    class Noisy(Tuner):
        def record(self, gid, variant, elapsed_ns, key, waited_ns=0.0):
            noise = 1.0 + spread * rng.standard_normal()
            super().record(gid, variant, true_ns[variant] * noise, key)

    return Noisy


def tune_noisy(vmfb: Path, true_ns: list[float], seed: int, **options):
    module = load(vmfb, "local-sync", cache=False, tuner_class=noisy(true_ns, seed), **options)
    zeros = np.zeros(16, np.float32)
    while not module.decisions():
        module.run(zeros)
    ((_, winner),) = module.decisions().items()
    (stats,) = module.stats()
    chosen = tag(module.run(zeros))
    module.close()
    return winner, stats, chosen


def test_ten_tuning_runs_of_variants_within_the_tie_band_choose_the_same_variant(vmfbs):
    # v1 is 1% faster than the reference v0, v2 0.5% slower: within the 3% band, under
    # 1.5% noise that ranks them differently from run to run
    close = [100_000.0, 99_000.0, 100_500.0]
    runs = [tune_noisy(vmfbs["online"], close, seed) for seed in range(10)]
    assert {winner for winner, _, _ in runs} == {"v0"}  # the reference, every time
    assert {chosen for _, _, chosen in runs} == {0}  # and the module's calls run it
    fastest = {stats["tie"]["fastest"] for _, stats, _ in runs}
    assert len(fastest) > 1  # the lowest median differed between the runs
    for _, stats, _ in runs:
        assert stats["tie"]["band"] == 0.03 and "v0" in stats["tie"]["tied"]
    # a narrower band (a group attribute or a load option) lets the faster one win
    winners = {tune_noisy(vmfbs["online"], close, s, tie_band=0.0)[0] for s in range(10)}
    assert winners != {"v0"}


def test_a_variant_really_faster_than_the_band_wins_over_the_reference(vmfbs):
    apart = [100_000.0, 90_000.0, 100_500.0]  # v1 10% faster
    runs = [tune_noisy(vmfbs["online"], apart, seed) for seed in range(10)]
    assert {winner for winner, _, _ in runs} == {"v1"}
    assert all(stats["tie"] is None for _, stats, _ in runs)


def test_report_and_tune_show_the_tie_break(vmfbs, tmp_path, capsys):
    from autotune_cli.main import main
    from autotune_runtime import run_commands

    cache = tmp_path / "c.sqlite3"
    close = noisy([100_000.0, 99_000.0, 100_500.0], seed=3)
    real_load = run_commands.load_module
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            run_commands,
            "load_module",
            lambda args: load(args.module, args.device, args.cache, tuner_class=close),
        )
        args = ["tune", str(vmfbs["explicit"]), "--cache", str(cache), "--device", "local-sync"]
        assert main(args) == 0
    assert run_commands.load_module is real_load
    tuned = capsys.readouterr().out
    assert "tuned, tie-break" in tuned
    assert "tagged::add [8]: tie: v0, v1, v2 within 3.0% of the fastest" in tuned
    assert main(["report", "--cache", str(cache)]) == 0
    report = capsys.readouterr().out
    assert report.count("the tie-break (the reference, then variant order) chose v0") == 2


def test_the_tie_band_is_a_group_attribute():
    vmfb = compile(tagged_module(group_attrs="{tolerance = 10.0, tie_band = 0.0}"))
    with load(vmfb, "local-sync", cache=False) as module:
        (group,) = module.groups.values()
        assert group.params["tie_band"] == 0.0
        assert module.tuner.rule_for(group.gid).band == 0.0
    with load(vmfb, "local-sync", cache=False, tie_band=0.2, indifference=0.1) as module:
        assert module.tuner.rule_for(group.gid).band == 0.0  # the group's own wins
    with pytest.raises(ValueError, match="tie_band must be in \\[0, 1\\), got 1.5"):
        load(vmfb, "local-sync", cache=False, tie_band=1.5)


# --- a model of several groups settles as fast as one group --------------------------


def groups_of_one_shape(groups: int, sites: int = 2, size: int = 256) -> str:
    """`groups` executables of the same three tagged kernels (one shape, a workload of
    one constant), each dispatched at `sites` places of `@run`, chained."""
    from modules import _kernel

    t = f"tensor<{size}xf32>"
    names = ["v0", "v1", "v2"]
    exports = "\n".join(
        f"    flow.executable.export public @{n} workgroups(%w: index) -> (index, index, index) {{\n"
        "      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%w)\n"
        "      flow.return %x, %y, %z : index, index, index\n    }"
        for n in names
    )
    kernels = "".join(_kernel(n, k + 1, True, size) for k, n in enumerate(names))
    executables = "".join(
        f"  flow.executable private @e{g} {{\n{exports}\n"
        f"    autotune.group @add variants([@v0, @v1, @v2]) {{tolerance = 1000.0}}\n"
        f"    builtin.module {{{kernels}\n    }}\n  }}\n"
        for g in range(groups)
    )
    body, value = [f"    %n = arith.constant {size} : index"], "%a"
    for s in range(sites):
        for g in range(groups):
            body.append(
                f"    %r{s}_{g} = flow.dispatch @e{g}::@add[%n]({value}, %n) : ({t}, index) -> {t}"
            )
            value = f"%r{s}_{g}"
    return (
        "module {\n"
        + executables
        + f"  util.func public @run(%a: {t}) -> {t} {{\n"
        + "\n".join(body)
        + f"\n    util.return {value} : {t}\n  }}\n}}\n"
    )


def calls_to_settle(groups: int) -> tuple[int, list[dict]]:
    module = load(
        compile(groups_of_one_shape(groups)),
        "local-sync",
        cache=False,
        tuner_class=costs([3.0, 1.0, 1.2]),
    )
    x = np.zeros(256, np.float32)
    calls, stats = 0, []
    while calls < 200 and not (len(stats) == groups and all(s["decision"] for s in stats)):
        module.run(x)
        calls += 1
        stats = module.stats()
    for _ in range(3):  # settled: nothing explores any more
        module.run(x)
    after = module.stats()
    module.close()
    assert [s["explored_calls"] for s in after] == [s["explored_calls"] for s in stats]
    return calls, after


def test_every_group_of_a_model_over_kernels_of_one_shape_decides_as_fast_as_one():
    one, _ = calls_to_settle(1)
    many, stats = calls_to_settle(6)
    assert [s["decision"] for s in stats] == ["v1"] * 6
    assert many == one  # the groups explore side by side, on the same calls


def test_the_static_policy_reads_a_cache_file_as_it_is(tmp_path):
    """`lower --policy static --cache FILE` reads the runtime's file through the format's
    one definition, opening it read-only: the file is unchanged, nothing is set aside
    (SQLite may add the `-wal` and `-shm` that its readers share)."""
    import sqlite3

    from autotune_contracts.errors import DiagnosticError
    from autotune_runtime.cache import CacheKey, Entry
    from lowering.decisions import load_decisions

    folder = tmp_path / "kept"
    folder.mkdir()
    path = folder / "tuning.sqlite3"
    cache = TuningCache(path)
    cache.put(Entry(CacheKey("dev", "mod", "work::step", (64, 8)), "x24", {"n": 3}, {}, 5.0))
    cache.put(Entry(CacheKey("dev", "mod", "add", ()), "v1", {}, {}, 6.0))
    cache.close()
    before = path.read_bytes()
    decisions = load_decisions(path)
    assert [(d["group"], d["variant"], d["workload"]) for d in decisions] == [
        ("add", "v1", []),
        ("work::step", "x24", [64, 8]),
    ]
    assert decisions[1]["container"] == "work" and decisions[1]["group_name"] == "step"
    assert path.read_bytes() == before
    assert {p.name for p in folder.iterdir()} <= {path.name, f"{path.name}-wal", f"{path.name}-shm"}

    other = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(DiagnosticError, match=r"not a tuning cache \(its tables: users\)"):
        load_decisions(other)
