"""The compile cache of `tune-model`: built candidates kept by content, so that a later
run (the same, or one with more candidates) builds only what no run built before. The
key's parts, entries that are damaged, a folder that cannot be written, and the count in
the report. Benchmarks are injected (times that do not depend on the machine), so that
runs keep the same variants; builds are counted at iree-compile."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import DATA

import autotune_model.bench as bench
import autotune_model.compile_cache as compile_cache
from autotune_model import TuneOptions, tune_model
from autotune_model.bench import BenchmarkJob, Measured
from autotune_model.compile_cache import (
    CompileCache,
    CompileCacheWarning,
    cache_key,
    default_folder,
)
from autotune_model.flow_builds import FROM_FLOW
from autotune_model.report import TuneReport, summary_lines
from lowering.driver import target_flags

ROOT = Path(__file__).resolve().parent.parent
MLP = (DATA / "flow" / "src" / "mlp.mlir").read_text()
SMALL = TuneOptions(candidates=3, top_k=1, time_model=False, combine=False)
CANDIDATES = 2 * (1 + 3)  # two dispatches, IREE's own and 3 others each


def fake_benchmark(job: BenchmarkJob) -> list[Measured]:
    """`t*` candidates (a tile doubled or halved) take half IREE's time, ordered by name."""
    return [
        Measured(job.dispatch, c, [500 + len(c.name) if c.name.startswith("t") else 1000], [])
        for c, _ in job.candidates
    ]


@pytest.fixture
def builds(monkeypatch) -> list[str]:
    """The candidates' builds of iree-compile (from the flow phase), counted."""
    made: list[str] = []
    real = bench.run_iree_compile

    def counted(text: str, flags: list[str]):
        if FROM_FLOW[0] in flags:
            made.append(text)
        return real(text, flags)

    monkeypatch.setattr(bench, "run_iree_compile", counted)
    return made


def tuned(folder: Path | None, **options) -> TuneReport:
    folder_options = {"compile_cache_folder": str(folder)} if folder else {}
    chosen = replace(SMALL, **folder_options, **options)
    return tune_model(MLP, chosen, benchmark_job=fake_benchmark, quiet=True).report


def kept(report: TuneReport) -> dict[str, list[str]]:
    return {d.export: d.kept for d in report.dispatches}


def entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*/*") if p.is_file())


# --- the key --------------------------------------------------------------------------------


def test_the_key_changes_with_each_of_its_parts_and_with_nothing_else(monkeypatch):
    flags = [*target_flags("llvm-cpu", "znver4"), *FROM_FLOW]
    key = cache_key("module {}", flags)
    assert len(key) == 64 and int(key, 16) >= 0
    assert cache_key("module {}", list(flags)) == key  # the same parts, the same key
    assert cache_key("module {}", tuple(flags)) == key
    changed = {
        "text": cache_key("module { }", flags),
        "a flag": cache_key("module {}", [*flags, "--iree-opt-level=O3"]),
        "flag order": cache_key("module {}", [*flags[1:], flags[0]]),
        "split flags": cache_key("module {}", [" ".join(flags)]),
        "text into flags": cache_key("", [*flags, "module {}"]),
    }
    monkeypatch.setattr(compile_cache, "KEY_VERSION", "iree-autotune compiled candidate 0")
    changed["format"] = cache_key("module {}", flags)
    monkeypatch.undo()
    monkeypatch.setattr(compile_cache, "compiler_version", lambda: "iree-base-compiler 3.14.0")
    changed["compiler"] = cache_key("module {}", flags)
    assert len({key, *changed.values()}) == 1 + len(changed), changed
    monkeypatch.undo()

    # The host CPU counts only where a flag builds for it.
    host = [*target_flags("llvm-cpu", None), *FROM_FLOW]
    assert "--iree-llvmcpu-target-cpu=host" in host
    here, host_key = compile_cache.host_cpu(), cache_key("module {}", host)
    assert here and compile_cache.compiler_version().startswith("iree-base-compiler 3.13")
    monkeypatch.setattr(compile_cache, "host_cpu", lambda: here + " another CPU")
    assert cache_key("module {}", host) != host_key
    assert cache_key("module {}", flags) == key


def test_the_default_folder_is_next_to_the_tuning_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("IREE_AUTOTUNE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_folder() == tmp_path / "xdg" / "iree-autotune" / "compiled"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_folder() == Path.home() / ".cache" / "iree-autotune" / "compiled"
    assert CompileCache().folder == default_folder()


# --- entries --------------------------------------------------------------------------------


def test_an_entry_is_read_back_and_anything_else_is_a_miss(tmp_path):
    cache = CompileCache(tmp_path / "compiled")
    built, failed = "a" * 64, "b" * 64
    assert cache.get(built) is None  # no folder yet
    cache.put(built, b"\x00vmfb bytes\n" * 100, None)
    cache.put(failed, None, "error: 'linalg.matmul' op tile sizes do not fit")
    cache.put("c" * 64, None, "iree-compile failed (exit code -9); ...")  # killed: not kept
    assert cache.get(built) == (b"\x00vmfb bytes\n" * 100, None)
    assert cache.get(failed) == (None, "error: 'linalg.matmul' op tile sizes do not fit")
    assert cache.get("c" * 64) is None
    path = cache.path(built)
    assert path == tmp_path / "compiled" / "aa" / built
    assert entries(tmp_path / "compiled") == sorted([path, cache.path(failed)])
    whole = path.read_bytes()
    damaged = {
        "truncated": whole[:-1],
        "cut in its header": whole[:20],
        "empty": b"",
        "a byte changed": whole[:-5] + b"X" + whole[-4:],
        "longer": whole + b"\x00",
        "another format": b"PK\x03\x04" + whole,
    }
    for why, data in damaged.items():
        path.write_bytes(data)
        assert cache.get(built) is None, why
    path.unlink()
    path.mkdir()  # not a file at all
    assert cache.get(built) is None


# --- tuning ---------------------------------------------------------------------------------


def test_a_second_run_builds_only_what_no_run_built_and_keeps_the_same_variants(tmp_path, builds):
    folder = tmp_path / "compiled"
    fewer = tuned(folder, candidates=2)  # a first run with a smaller budget
    assert (fewer.jobs.compiled, fewer.jobs.cached) == (2 * 3, 0)
    assert len(builds) == 2 * 3 and len(entries(folder)) == 2 * 3

    builds.clear()
    first = tuned(folder)
    assert (first.jobs.compiled, first.jobs.cached) == (CANDIDATES, 2 * 3)
    assert len(builds) == 2  # the one new candidate of each dispatch
    assert len(entries(folder)) == CANDIDATES

    builds.clear()
    second = tuned(folder)
    assert builds == []  # nothing built: every candidate from the cache
    assert (second.jobs.compiled, second.jobs.cached) == (CANDIDATES, CANDIDATES)
    assert second.jobs.compile_cache == str(folder)
    assert kept(second) == kept(first) and all(kept(first).values())
    fates = [[(c.name, c.fate) for c in d.candidates] for d in first.dispatches]
    assert [[(c.name, c.fate) for c in d.candidates] for d in second.dispatches] == fates
    saved = TuneReport.from_json(second.to_json())
    assert saved.jobs == second.jobs
    assert json.loads(second.to_json())["jobs"]["cached"] == CANDIDATES
    line = next(x for x in summary_lines(second) if x.startswith("compiled "))
    assert line.startswith(f"compiled {CANDIDATES} candidates in ")
    assert f"({CANDIDATES} from the compile cache {folder}), benchmarked on local-task in " in line


def test_a_damaged_entry_is_built_again_and_replaced(tmp_path, builds):
    folder = tmp_path / "compiled"
    first = tuned(folder)
    files = entries(folder)
    assert len(files) == CANDIDATES
    files[0].write_bytes(files[0].read_bytes()[:100])  # truncated
    files[1].write_bytes(b"not an entry")
    builds.clear()
    again = tuned(folder)
    assert len(builds) == 2
    assert (again.jobs.compiled, again.jobs.cached) == (CANDIDATES, CANDIDATES - 2)
    assert kept(again) == kept(first)
    cache = CompileCache(folder)
    assert all(cache.get(p.name) is not None for p in files)  # written whole again


def test_a_folder_that_cannot_be_written_warns_once_and_tuning_goes_on(tmp_path, builds):
    (tmp_path / "a file").write_text("")
    folder = tmp_path / "a file" / "compiled"  # no folder can be made under a file
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = tuned(folder)
    said = [w for w in caught if issubclass(w.category, CompileCacheWarning)]
    assert len(said) == 1, [str(w.message) for w in said]
    assert str(said[0].message).startswith(f"the compile cache {folder} cannot be written (")
    assert (report.jobs.compiled, report.jobs.cached) == (CANDIDATES, 0)
    assert len(builds) == CANDIDATES and all(kept(report).values())


def test_without_a_compile_cache_every_candidate_is_built_and_none_kept(tmp_path, builds):
    folder = tmp_path / "compiled"
    report = tuned(folder, compile_cache=False, candidates=1)
    assert len(builds) == 2 * 2 and not folder.exists()
    assert (report.jobs.compiled, report.jobs.cached, report.jobs.compile_cache) == (4, 0, None)
    line = next(x for x in summary_lines(report) if x.startswith("compiled "))
    assert "in " in line and line.endswith(" s") and "(no compile cache), benchmarked" in line


# --- the command line -----------------------------------------------------------------------


def cli(*args) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "autotune_cli.main", "tune-model", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)


def test_the_command_line_takes_an_earlier_runs_builds_and_says_how_many(tmp_path):
    folder = tmp_path / "compiled"
    first = tuned(folder)
    model = tmp_path / "mlp.mlir"
    model.write_text(MLP)
    common = [model, "-o", tmp_path / "mlp.vmfb", "--candidates", 3, "--top-k", 1]
    result = cli(*common, "--no-timing", "--quiet", "--compile-cache", folder)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    jobs = json.loads((tmp_path / "mlp.tune.json").read_text())["jobs"]
    # Round two (which the command runs) may join two candidates into one more: that one
    # is new; every candidate the first run built comes from the cache.
    earlier = {(d.export, c.name) for d in first.dispatches for c in d.candidates}
    report = TuneReport.from_json((tmp_path / "mlp.tune.json").read_text())
    now = {(d.export, c.name) for d in report.dispatches for c in d.candidates}
    assert earlier <= now
    assert jobs["compiled"] == len(now) and jobs["cached"] == len(earlier) == CANDIDATES
    assert jobs["compile_cache"] == str(folder) and jobs["benchmark_s"] > 0
    # (the summary lines wrap at the width COLUMNS gives a pipe)
    assert f"({CANDIDATES} from the compile cache {folder})" in " ".join(result.stdout.split())

    (tmp_path / "a file").write_text("")
    unwritable = tmp_path / "a file" / "compiled"
    result = cli(
        *common[:3], "--candidates", 1, "--no-timing", "--quiet", "--compile-cache", unwritable
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"warning: the compile cache {unwritable} cannot be written (Not a directory); built "
        "candidates are not kept in it this run (--no-compile-cache to not use one)"
    ]
    both = cli(*common, "--no-compile-cache", "--compile-cache", folder)
    assert both.returncode == 1 and "not allowed with argument" in both.stderr
