"""`iree-autotune tune`, through the installed console script: the decisions it stores and
prints, its progress with and without a terminal; and the explicit policy from the command
line (`run` with cached decisions, per size, `--set`, refused variants)."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from command_line import DEVICE, assert_error, cli, decisions

from autotune_runtime.cache import TuningCache

# --- tune ---------------------------------------------------------------------------------


def test_tune_stores_and_prints_the_decision(vmfbs, tmp_path):
    path = tmp_path / "c.sqlite3"
    result = cli("tune", vmfbs["explicit"], *DEVICE, "--cache", path)
    assert result.returncode == 0, result.stderr
    (entry,) = TuningCache(path).entries()
    assert entry.key.group == "tagged::add" and entry.key.workload == ()
    assert entry.variant in ("v0", "v1", "v2")
    assert len(entry.stats["variants"]) == 3
    assert result.stdout.startswith("tuned 1 group/workload key(s) in ")
    row = next(line for line in result.stdout.splitlines() if "tagged::add" in line)
    assert entry.variant in row and "tuned" in row
    # Tuning again finds the decision in the cache, and says so.
    again = cli("tune", vmfbs["explicit"], *DEVICE, "--cache", path)
    assert again.stdout.startswith(
        f"nothing to tune: the 1 group/workload key(s) were decided before, from the tuning "
        f"cache {path}"
    ), again.stdout
    row = next(line for line in again.stdout.splitlines() if "tagged::add" in line)
    assert entry.variant in row and "cache" in row
    assert decisions(path) == {
        (entry.key.device, entry.key.module, "tagged::add", (), entry.variant)
    }
    # On another device the decision is not used, and the message says why.
    other = cli(
        "run", vmfbs["explicit"], "--input", "16xf32=0", "--device", "local-task", "--cache", path
    )
    assert other.returncode == 0, other.stderr
    assert (
        "autotune: tagged::add workload []: v0, the reference (not tuned on this device, "
        "local-task; the cache holds a decision made on local-sync:"
    ) in other.stdout, other.stdout


def test_tune_without_entry_point_fails(vmfbs, tmp_path):
    path = tmp_path / "c.sqlite3"
    assert_error(
        cli("tune", vmfbs["online"], *DEVICE, "--cache", path), "no __autotune entry point"
    )
    assert_error(
        cli("tune", vmfbs["scalars"], *DEVICE, "--cache", path),
        "no __autotune entry point",
        "no groups",
    )
    assert not path.exists() or decisions(path) == set()


def test_tune_without_a_terminal_states_the_counts_and_draws_no_bar(vmfbs, tmp_path):
    path = tmp_path / "c.sqlite3"
    result = cli("tune", vmfbs["explicit_sizes"], *DEVICE, "--cache", path)
    assert result.returncode == 0, result.stderr
    for text in (result.stdout, result.stderr):
        assert "\x1b" not in text and "\r" not in text
    # One line on standard error: 1 group x 2 keys x 3 variants, all settled.
    (line,) = result.stderr.splitlines()
    match = re.fullmatch(
        r"tuning 1 group, 2 workload keys \(6 variants\): 6/6 in [\d.]+ s, (\d+) samples", line
    )
    assert match is not None, line
    runs = sum(v["runs"] for e in TuningCache(path).entries() for v in e.stats["variants"])
    assert int(match.group(1)) == runs
    # Everything found in the cache: nothing to tune, no progress line.
    again = cli("tune", vmfbs["explicit_sizes"], *DEVICE, "--cache", path)
    assert again.returncode == 0 and again.stderr == ""


def test_terminal_progress_shows_counts_and_samples(capsys):
    from io import StringIO

    from rich.console import Console

    from autotune_runtime.progress import TerminalProgress

    out = StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with TerminalProgress(console) as progress:
        progress.phase("tuning 1 group, 2 workload keys (6 variants)", 6)
        progress.update(4, "17 samples")
        progress.bars.refresh()
    text = out.getvalue()
    assert "4/6" in text and "17 samples" in text and "eta" in text and "\x1b[" in text
    assert capsys.readouterr().err == ""  # the bar is the whole of it
    quiet = StringIO()
    with TerminalProgress(Console(file=quiet, force_terminal=False)) as progress:
        progress.phase("tuning", 6)
        progress.update(6, "30 samples")
    assert quiet.getvalue() == ""
    assert re.fullmatch(r"tuning: 6/6 in \d+\.\d s, 30 samples\n", capsys.readouterr().err)


# --- the explicit policy from the command line -----------------------------------------------


def pin_decisions(path: Path, variants: dict[tuple, str]) -> None:
    """Overwrite the decisions of a tuned cache: workload key -> variant."""
    cache = TuningCache(path)
    try:
        for entry in list(cache.entries()):
            if entry.key.workload in variants:
                cache.put(replace(entry, variant=variants[entry.key.workload]))
    finally:
        cache.close()


def tags(result: subprocess.CompletedProcess[str]) -> list[int]:
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("result[0]: ")]
    return [int(float(line.split("=", 1)[1].split()[0])) for line in lines]


def test_run_applies_cached_explicit_decisions(vmfbs, tuned_cache):
    pin_decisions(tuned_cache, {(): "v2"})  # not the reference, whatever tuning chose
    result = cli("run", vmfbs["explicit"], "--input", "16xf32=0", "--cache", tuned_cache, *DEVICE)
    assert tags(result) == [3]
    assert result.stdout.splitlines()[-1] == "autotune: tagged::add workload []: v2 (from cache)"
    fresh = cli(
        "run",
        vmfbs["explicit"],
        "--input",
        "16xf32=0",
        "--cache",
        tuned_cache.with_name("n.db"),
        *DEVICE,
    )
    assert tags(fresh) == [1]
    assert fresh.stdout.splitlines()[-1] == (
        "autotune: tagged::add workload []: v0, the reference (not tuned: iree-autotune tune)"
    )


def test_cached_explicit_decisions_apply_per_size(vmfbs, tmp_path):
    path = tmp_path / "c.sqlite3"
    assert cli("tune", vmfbs["explicit_sizes"], *DEVICE, "--cache", path).returncode == 0
    pin_decisions(path, {(16,): "v2", (64,): "v1"})
    run = ("run", vmfbs["explicit_sizes"], "--cache", path, *DEVICE)
    assert tags(cli(*run, "--input", "16xf32=0")) == [3]
    assert tags(cli(*run, "--input", "64xf32=0")) == [2]
    assert tags(cli(*run, "--input", "32xf32=0")) == [1]  # not a tuned size: the reference
    getter = cli(*run, "--function", "__autotune_get_tagged_add")
    assert getter.returncode == 0, getter.stderr
    assert getter.stdout.splitlines() == [
        "EXEC @__autotune_get_tagged_add",
        "result[0] workload [16]: i32=2",
        "result[0] workload [64]: i32=1",
        "autotune: tagged::add workload [16]: v2 (from cache)",
        "autotune: tagged::add workload [64]: v1 (from cache)",
    ]


def test_set_is_what_run_runs(vmfbs, tuned_cache):
    pin_decisions(tuned_cache, {(): "v1"})
    run = ("run", vmfbs["explicit"], "--cache", tuned_cache, *DEVICE)
    result = cli(*run, "--input", "16xf32=0", "--set", "tagged::add=v2")
    assert tags(result) == [3]  # over the cached v1
    assert result.stdout.splitlines()[-1] == "autotune: tagged::add workload []: v2 (set)"
    assert tags(cli(*run, "--input", "16xf32=0", "--set", "add=0")) == [1]
    getter = cli(*run, "--function", "__autotune_get_tagged_add", "--set", "add=2")
    assert getter.stdout.splitlines()[:2] == ["EXEC @__autotune_get_tagged_add", "result[0]: i32=2"]
    # The sizes of a group with several: all of them.
    sizes = ("run", vmfbs["explicit_sizes"], "--cache", tuned_cache, *DEVICE, "--set", "add=v1")
    assert tags(cli(*sizes, "--input", "64xf32=0")) == [2]
    assert cli(*sizes, "--function", "__autotune_get_tagged_add").stdout.splitlines()[1:3] == [
        "result[0] workload [16]: i32=1",
        "result[0] workload [64]: i32=1",
    ]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (
            ("--function", "__autotune_set_tagged_add", "--input", "i32=7"),
            ("group tagged::add has no variant 7", "accepted: 0 (v0), 1 (v1), 2 (v2)"),
        ),
        (
            ("--function", "__autotune_set_tagged_add", "--input", "i32=-5"),
            ("group tagged::add has no variant -5", "accepted: 0 (v0), 1 (v1), 2 (v2)"),
        ),
        (("--set", "add=v9"), ("group tagged::add has no variant 'v9'", "2 (v2)")),
        (("--set", "add=3"), ("group tagged::add has no variant 3", "2 (v2)")),
        (("--set", "mul=v1"), ("no group named mul", "explicit groups: tagged::add")),
        (("--set", "add"), ("expected GROUP=VARIANT", "explicit groups: tagged::add")),
    ],
)
def test_out_of_range_variants_are_refused(vmfbs, tmp_path, args, fragments):
    inputs = () if "--function" in args else ("--input", "16xf32=0")
    cache = ("--cache", tmp_path / "c.db")
    assert_error(cli("run", vmfbs["explicit"], *inputs, *args, *cache, *DEVICE), *fragments)


def test_set_needs_an_explicit_group(vmfbs, tmp_path):
    result = cli("run", vmfbs["online"], "--input", "16xf32=0", "--set", "add=v1", *DEVICE)
    assert_error(result, "group tagged::add has the online policy", "explicit groups: none")


def test_a_dynamic_group_without_workloads_says_so(vmfbs, tmp_path):
    path = tmp_path / "c.sqlite3"
    result = cli("tune", vmfbs["explicit_dynamic"], *DEVICE, "--cache", path)
    assert result.returncode == 0, result.stderr
    (warning,) = result.stderr.splitlines()
    assert warning.startswith(
        "warning: group tagged::add has dynamic shapes and no `workloads`: 0 workload keys were "
        "tuned and its calls run the reference variant v0; give the sizes to tune for on the "
        "group (`workloads = [[...], ...]`, 1 value(s) each"
    ), warning
    assert result.stdout.startswith("tuned 0 group/workload key(s)")
    run = cli("run", vmfbs["explicit_dynamic"], "--input", "4xf32=0", "--cache", path, *DEVICE)
    assert tags(run) == [1]
    assert run.stdout.splitlines()[-1] == (
        "autotune: tagged::add: v0, the reference (no workloads to tune: dynamic shapes and no "
        "`workloads` on the group)"
    )
    assert_error(
        cli("run", vmfbs["explicit_dynamic"], "--input", "4xf32=0", "--set", "add=v1", *DEVICE),
        "group tagged::add has no workload keys to set a variant for",
    )
