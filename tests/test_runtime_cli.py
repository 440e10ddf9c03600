"""`iree-autotune run | tune | report | cache`, through the installed console script."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from modules import tagged_module

from autotune_runtime.cache import TuningCache
from autotune_runtime.commands import format_value, parse_input
from lowering.driver import compile, compile_lowered

IREE_AUTOTUNE = str(Path(sys.executable).parent / "iree-autotune")
DEVICE = ("--device", "local-sync")
TOLERANT = "{tolerance = 10.0}"

SCALARS = """
func.func @echo(%a: i32, %b: f32, %c: tensor<2x3xf16>) -> (i32, f32, tensor<2x3xf16>, tensor<3xi8>) {
  %t = arith.constant dense<[-1, 0, 7]> : tensor<3xi8>
  return %a, %b, %c, %t : i32, f32, tensor<2x3xf16>, tensor<3xi8>
}
"""


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IREE_AUTOTUNE, *map(str, args)], capture_output=True, text=True, check=False
    )


def assert_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit 1 with one `error: ...` line that says what went wrong, and no traceback."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def decisions(path: Path) -> set[tuple]:
    cache = TuningCache(path)
    try:
        return {
            (e.key.device, e.key.module, e.key.group, e.key.workload, e.variant)
            for e in cache.entries()
        }
    finally:
        cache.close()


@pytest.fixture(scope="module")
def vmfbs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("vmfb")
    sources = {
        # The tagged variants disagree on purpose; the tolerance lets them all be measured.
        "online": compile(tagged_module(group_attrs=TOLERANT)),
        "explicit": compile(tagged_module(group_attrs='{policy = "explicit", tolerance = 10.0}')),
        "explicit_sizes": compile(
            tagged_module(
                dynamic=True,
                group_attrs='{policy = "explicit", tolerance = 10.0, workloads = [[16], [64]]}',
            )
        ),
        "explicit_dynamic": compile(
            tagged_module(dynamic=True, group_attrs='{policy = "explicit", tolerance = 10.0}')
        ),
        "dynamic": compile(tagged_module(dynamic=True, group_attrs=TOLERANT)),
        "scalars": compile_lowered(SCALARS),
    }
    paths = {}
    for name, data in sources.items():
        paths[name] = folder / f"{name}.vmfb"
        paths[name].write_bytes(data)
    return paths


@pytest.fixture
def tuned_cache(vmfbs, tmp_path) -> Path:
    """A cache holding the decision of the explicit module's `__autotune`."""
    path = tmp_path / "tuned.sqlite3"
    result = cli("tune", vmfbs["explicit"], *DEVICE, "--cache", path)
    assert result.returncode == 0, result.stderr
    return path


# --- run ----------------------------------------------------------------------------------


TIMING = re.compile(
    r"timing: (\d+) calls?, per call \((µs|ms|s)\): min ([\d.]+), median ([\d.]+), "
    r"mean ([\d.]+), p90 ([\d.]+), max ([\d.]+)"
)


def timing(line: str) -> tuple[int, np.ndarray]:
    """(calls, [min, median, mean, p90, max]) of a `timing:` line."""
    match = TIMING.fullmatch(line)
    assert match is not None, line
    return int(match.group(1)), np.array([float(match.group(i)) for i in range(3, 8)])


def test_run_repeat_prints_the_result_once_and_a_timing_summary(vmfbs):
    result = cli(
        "run",
        vmfbs["online"],
        "--function",
        "run",
        "--input",
        "16xf32=0",
        "--repeat",
        "12",
        *DEVICE,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "EXEC @run" and lines.count("EXEC @run") == 1
    results = [line for line in lines if line.startswith("result[")]
    assert len(results) == 1
    # Variant k adds k + 1: the 12 calls explore the three, so other calls returned
    # other values than the last one, which is the one shown.
    (note,) = [line for line in lines if line.startswith("note: ")]
    differ = int(note.removeprefix("note: ").split()[0])
    assert 1 <= differ <= 11, note
    assert (
        note == f"note: {differ} of the 12 calls returned other results than the last (shown above)"
    )
    (line,) = [line for line in lines if line.startswith("timing: ")]
    calls, (low, median, mean, p90, high) = timing(line)
    assert calls == 12
    assert low <= median <= p90 <= high and low <= mean <= high and low > 0
    assert lines[-1] == "autotune: tagged::add workload []: exploring (12 calls)"


def test_run_repeat_of_a_decided_group_returns_the_same_result(vmfbs, tuned_cache):
    (entry,) = TuningCache(tuned_cache).entries()
    tag = int(entry.variant[1:]) + 1
    result = cli(
        "run",
        vmfbs["explicit"],
        "--input",
        "16xf32=0",
        "--repeat",
        "5",
        "--cache",
        tuned_cache,
        *DEVICE,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["EXEC @run", f"result[0]: 16xf32={' '.join([str(tag)] * 16)}"]
    assert timing(lines[2])[0] == 5
    assert lines[3:] == [f"autotune: tagged::add workload []: {entry.variant} (from cache)"]
    # One call: no timing line, as iree-run-module prints it.
    once = cli("run", vmfbs["explicit"], "--input", "16xf32=0", "--cache", tuned_cache, *DEVICE)
    assert [line for line in once.stdout.splitlines() if line.startswith("timing")] == []


def test_run_values_and_the_function_default(vmfbs):
    values = " ".join(str(v) for v in range(16))
    result = cli("run", vmfbs["online"], "--input", f"16xf32={values}", *DEVICE)
    assert result.returncode == 0, result.stderr
    expected = " ".join(str(v + 1) for v in range(16))
    assert f"result[0]: 16xf32={expected}" in result.stdout.splitlines()


def test_run_reads_npy_inputs_with_a_dynamic_workload(vmfbs, tmp_path):
    for values, expected in (
        ([0.5, 1.5, -2.0, 10.0, 0.25], "5xf32=1.5 2.5 -1 11 1.25"),
        ([100.0, -1.0, 0.125], "3xf32=101 0 1.125"),
    ):
        npy = tmp_path / "in.npy"
        np.save(npy, np.array(values, dtype=np.float32))
        result = cli("run", vmfbs["dynamic"], "--input", f"@{npy}", *DEVICE)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [
            "EXEC @run",
            f"result[0]: {expected}",  # the first call runs the reference, v0 (adds 1)
            # The workload key is the dynamic length.
            f"autotune: tagged::add workload [{len(values)}]: exploring (1 call)",
        ]


def test_run_scalars_splats_and_nested_results(vmfbs, tmp_path):
    half = tmp_path / "half.npy"
    np.save(half, np.arange(6, dtype=np.float16).reshape(2, 3) / 4)
    for third, printed in (
        ("2x3xf16=0.5", "[0.5 0.5 0.5][0.5 0.5 0.5]"),
        (f"@{half}", "[0 0.25 0.5][0.75 1 1.25]"),
    ):
        result = cli(
            "run",
            vmfbs["scalars"],
            "--function",
            "echo",
            "--input",
            "i32=-3",
            "--input",
            "f32=1.5",
            "--input",
            third,
            *DEVICE,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [
            "EXEC @echo",
            "result[0]: i32=-3",
            "result[1]: f32=1.5",
            f"result[2]: 2x3xf16={printed}",
            "result[3]: 3xi8=-1 0 7",
        ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("16xf32=1 x", "cannot read 'x' as f32"),
        ("2x8xf32=1 2 3", "3 values given for shape 2x8, which has 16"),
        ("16xq7=0", "unknown element type 'q7'"),
        ("4xf32=0", "expects tensor<16xf32>, not 4xf32"),
        ("16xi32=0", "expects f32 elements, not i32"),
        ("16", "expected SHAPExTYPE=VALUES"),
        ("@missing.npy", "no such file: missing.npy"),
    ],
)
def test_run_rejects_bad_inputs_naming_them(vmfbs, spec, message):
    assert_error(
        cli("run", vmfbs["online"], "--function", "run", "--input", spec, *DEVICE),
        repr(spec),
        message,
    )


def test_run_errors_without_a_traceback(vmfbs, tmp_path):
    assert_error(
        cli("run", vmfbs["online"], "--function", "nope", *DEVICE), "no function 'nope'", "run"
    )
    assert_error(cli("run", vmfbs["online"], *DEVICE), "@run takes 1 argument(s)", "0 --input")
    assert_error(
        cli(
            "run",
            vmfbs["scalars"],
            "--input",
            "f32=1",
            "--input",
            "f32=1",
            "--input",
            "2x3xf16=0",
            *DEVICE,
        ),
        "expects i32 elements, not f32",
    )
    assert_error(
        cli("run", tmp_path / "none.vmfb", "--input", "16xf32=0"), "none.vmfb", "no such file"
    )
    junk = tmp_path / "junk.vmfb"
    junk.write_bytes(b"\x00\x07not a module at all")
    assert_error(
        cli("run", junk, "--input", "16xf32=0", *DEVICE),
        "cannot load",
        "junk.vmfb",
        "expected a compiled module, the .vmfb that `iree-autotune compile` writes",
    )
    # The source instead of the compiled module: said so, and what to run instead.
    source = tmp_path / "model.mlir"
    source.write_text("util.func public @f() {\n  util.return\n}\n")
    for command in ("run", "tune"):
        assert_error(
            cli(command, source, *DEVICE),
            f"{source} is text (MLIR?), not a compiled module",
            f"`iree-autotune compile {source} -o model.vmfb`",
        )
    assert_error(
        cli("run", vmfbs["online"], "--input", "16xf32=0", "--device", "nonesuch"), "nonesuch"
    )
    assert_error(
        cli("run", vmfbs["online"], "--input", "16xf32=0", "--repeat", "0", *DEVICE), "--repeat"
    )
    # Usage errors also exit 1.
    assert cli("run").returncode == 1
    assert cli("cache").returncode == 1


def test_cache_warnings_are_warning_lines(vmfbs, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = cli(
        "run", vmfbs["online"], "--input", "16xf32=0", "--cache", blocker / "cache.sqlite3", *DEVICE
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("warning: cannot use tuning cache"), result.stderr
    assert "Traceback" not in result.stderr and "CacheWarning" not in result.stderr
    assert "result[0]: 16xf32=1 1" in result.stdout


def test_a_run_after_tuning_uses_the_stored_decision(vmfbs, tuned_cache):
    (entry,) = TuningCache(tuned_cache).entries()
    tag = int(entry.variant[1:]) + 1
    result = cli(
        "run",
        vmfbs["online"],
        "--input",
        "16xf32=0",
        "--cache",
        tuned_cache,
        "--repeat",
        "2",
        *DEVICE,
    )
    assert result.returncode == 0, result.stderr
    results = [line for line in result.stdout.splitlines() if line.startswith("result[0]")]
    assert results == [f"result[0]: 16xf32={' '.join([str(tag)] * 16)}"]
    assert "note:" not in result.stdout  # both calls ran the cached decision
    assert f"autotune: tagged::add workload []: {entry.variant} (from cache)" in result.stdout


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


# --- report -------------------------------------------------------------------------------


def test_report_shows_every_variant_against_the_winner(tuned_cache, tmp_path):
    (entry,) = TuningCache(tuned_cache).entries()
    result = cli("report", "--cache", tuned_cache)
    assert result.returncode == 0, result.stderr
    assert "tagged::add workload [] on local-sync" in result.stdout
    medians = {v["variant"]: v["median_ns"] for v in entry.stats["variants"]}
    assert set(medians) == {"v0", "v1", "v2"}
    best = medians[entry.variant]
    assert math.isfinite(best)
    for variant, median in medians.items():
        row = next(line for line in result.stdout.splitlines() if line.startswith(f"│ {variant} "))
        cells = [c.strip() for c in row.split("│")[1:-1]]
        assert ("winner" in cells[6]) == (variant == entry.variant)
        if math.isfinite(median):
            assert cells[2] == f"{median / 1000:.2f}"
            assert cells[5] == f"{median / best:.2f}x"
        else:  # a variant excluded before it was measured
            assert cells[2] == cells[5] == "-" and cells[6] in ("failed", "rejected")


def test_report_plot_writes_a_png(tuned_cache, tmp_path):
    import matplotlib.image

    plot = tmp_path / "out.png"
    result = cli("report", "--cache", tuned_cache, "--plot", plot)
    assert result.returncode == 0, result.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(plot)
    assert image.shape[0] > 200 and image.shape[1] > 300
    assert image.std() > 0.05  # not a blank canvas
    assert not list(tmp_path.glob(".out.png*"))  # no temporary file left
    assert_error(
        cli("report", "--cache", tuned_cache, "--plot", tmp_path / "x.nosuchformat"), "nosuchformat"
    )


def test_report_marks_failed_and_eliminated_variants(tmp_path):
    export = tmp_path / "hand.json"
    stats = {
        "variants": [
            {
                "variant": "fast",
                "samples": 5,
                "median_ns": 1000.0,
                "min_ns": 900.0,
                "spread_ns": 50.0,
            },
            {
                "variant": "slow",
                "samples": 4,
                "median_ns": 2310.0,
                "min_ns": 2000.0,
                "spread_ns": 70.0,
                "eliminated": True,
            },
            {
                "variant": "broken",
                "samples": 0,
                "median_ns": None,
                "failed": True,
                "eliminated": True,
            },
            {
                "variant": "wrong",
                "samples": 0,
                "median_ns": float("inf"),
                "rejected": True,
                "eliminated": True,
            },
        ]
    }
    item = {
        "device": "d",
        "module": "m",
        "group": "ex::g",
        "workload": [64, 8],
        "variant": "fast",
        "stats": stats,
    }
    export.write_text(json.dumps({"format": "iree-autotune-cache", "decisions": [item]}))
    cache = tmp_path / "c.sqlite3"
    assert cli("cache", "import", export, "--cache", cache).returncode == 0
    result = cli("report", "--cache", cache, "--plot", tmp_path / "p.png")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[1]: line for line in result.stdout.splitlines() if line.startswith("│ ")}
    assert "1.00x" in rows["fast"] and "winner" in rows["fast"]
    assert "2.31x" in rows["slow"] and "eliminated" in rows["slow"]
    assert "failed" in rows["broken"] and "x" not in rows["broken"].split("│")[6]
    assert "rejected" in rows["wrong"] and "x" not in rows["wrong"].split("│")[6]
    assert "ex::g workload [64, 8]" in result.stdout
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_report_on_an_empty_cache(tmp_path):
    for path in (tmp_path / "absent.sqlite3", tmp_path / "empty.sqlite3"):
        if path.name == "empty.sqlite3":
            TuningCache(path).close()
        result = cli("report", "--cache", path, "--plot", tmp_path / "p.png")
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("no tuning decisions")
        assert not (tmp_path / "p.png").exists()
    assert not (tmp_path / "absent.sqlite3").exists()


def test_report_uses_the_default_cache(tuned_cache, monkeypatch):
    monkeypatch.setenv("IREE_AUTOTUNE_CACHE", str(tuned_cache))
    result = cli("report")
    assert result.returncode == 0 and "1.00x" in result.stdout


# --- cache --------------------------------------------------------------------------------


def test_export_then_import_into_an_empty_cache(tuned_cache, tmp_path):
    export = tmp_path / "export.json"
    result = cli("cache", "export", export, "--cache", tuned_cache)
    assert result.returncode == 0, result.stderr
    data = json.loads(export.read_text())
    assert data["format"] == "iree-autotune-cache" and len(data["decisions"]) == 1
    other = tmp_path / "other.sqlite3"
    result = cli("cache", "import", export, "--cache", other)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("read 1 decision(s)")
    assert decisions(other) == decisions(tuned_cache) != set()
    # The stats come along, so the report of the copy is the same.
    assert cli("report", "--cache", other).stdout == cli("report", "--cache", tuned_cache).stdout


def test_an_export_freezes_static_choices_at_compile_time(tuned_cache, tmp_path):
    (entry,) = TuningCache(tuned_cache).entries()
    export = tmp_path / "export.json"
    assert cli("cache", "export", export, "--cache", tuned_cache).returncode == 0
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module(group_attrs=TOLERANT))
    vmfb = tmp_path / "static.vmfb"
    result = cli("compile", source, "--policy", "static", "--cache", export, "-o", vmfb)
    assert result.returncode == 0, result.stderr
    result = cli("run", vmfb, "--input", "16xf32=0", *DEVICE)
    tag = int(entry.variant[1:]) + 1
    assert f"result[0]: 16xf32={' '.join([str(tag)] * 16)}" in result.stdout.splitlines()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("garbage{", "is not JSON"),
        ('{"decisions": []}', "not an iree-autotune-cache export"),
        ('{"format": "iree-autotune-cache", "decisions": 3}', 'no "decisions" list'),
        (
            '{"format": "iree-autotune-cache", "decisions": ['
            '{"device": "d", "module": "m", "group": "g", "workload": [], "variant": "v"}, {"group": "g"}]}',
            "decision #1 is malformed",
        ),
    ],
)
def test_import_of_garbage_changes_nothing(tuned_cache, tmp_path, content, message):
    before = decisions(tuned_cache)
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert_error(cli("cache", "import", bad, "--cache", tuned_cache), message)
    assert decisions(tuned_cache) == before and len(before) == 1


def test_import_of_a_missing_file(tmp_path):
    assert_error(
        cli("cache", "import", tmp_path / "nope.json", "--cache", tmp_path / "c.sqlite3"),
        "nope.json",
    )


def test_clear_empties_the_cache(tuned_cache):
    result = cli("cache", "clear", "--cache", tuned_cache)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"removed 1 decision(s) from {tuned_cache}"
    assert decisions(tuned_cache) == set()
    assert cli("cache", "clear", "--cache", tuned_cache).stdout.startswith("removed 0 decision")
    assert cli("report", "--cache", tuned_cache).stdout.startswith("no tuning decisions")


def test_export_writes_atomically(tuned_cache, tmp_path):
    assert_error(
        cli("cache", "export", tmp_path / "no-dir" / "e.json", "--cache", tuned_cache),
        "cannot write",
    )
    target = tmp_path / "e.json"
    target.write_text("old")
    assert cli("cache", "export", target, "--cache", tuned_cache).returncode == 0
    assert json.loads(target.read_text())["decisions"][0]["group"] == "tagged::add"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_exports_and_plots_are_created_with_the_umask(tuned_cache, tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        export = cli("cache", "export", tmp_path / "e.json", "--cache", tuned_cache)
        plot = cli("report", "--cache", tuned_cache, "--plot", tmp_path / "p.png")
    finally:
        os.umask(old)
    assert export.returncode == 0 and plot.returncode == 0, (export.stderr, plot.stderr)
    assert (tmp_path / "e.json").stat().st_mode & 0o777 == mode
    assert (tmp_path / "p.png").stat().st_mode & 0o777 == mode
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_an_export_to_a_pipe_writes_into_the_pipe(tuned_cache, tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = cli("cache", "export", fifo, "--cache", tuned_cache)
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(received[0])["decisions"][0]["group"] == "tagged::add"
    assert fifo.is_fifo()  # still the pipe, not a file renamed over it


# --- parsing and printing, in-process ----------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("2x3xf32=1 2 3 4 5 6", np.arange(1, 7, dtype=np.float32).reshape(2, 3)),
        ("2x2xi32=[1 2][3 4]", np.array([[1, 2], [3, 4]], np.int32)),
        ("4xf32=0", np.zeros(4, np.float32)),
        ("f32=1.5", np.array(1.5, np.float32)),
        ("i64=-7", np.array(-7, np.int64)),
        ("3xu8=255,0,1", np.array([255, 0, 1], np.uint8)),
        ("2xi1=true 0", np.array([True, False])),
        ("0xf64=", np.zeros(0, np.float64)),
    ],
)
def test_parse_input(spec, expected):
    value = parse_input(spec)
    assert value.dtype == expected.dtype and value.shape == expected.shape
    assert np.array_equal(value, expected)


@pytest.mark.parametrize("spec", ["i8=128", "u8=-1", "2xi32=1.5 2", "2x?xf32=0", "bf16=1"])
def test_parse_input_rejects(spec):
    with pytest.raises(ValueError):
        parse_input(spec)


def test_format_value():
    assert (
        format_value(np.array([[1.0, 0.5], [1e20, -0.001]], np.float32))
        == "2x2xf32=[1 0.5][1e+20 -0.001]"
    )
    assert format_value(np.array(3, np.int32)) == "i32=3"
    assert format_value(np.array([True, False])) == "2xi1=1 0"
    assert format_value(np.zeros(2000, np.float32)).endswith("0 ...")
