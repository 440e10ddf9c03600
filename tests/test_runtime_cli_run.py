"""`iree-autotune run`, through the installed console script: inputs (values, .npy,
scalars, splats), repeated calls and their timing, errors without a traceback, cache
warnings, a stored decision; and the parsing and printing of values, in-process."""

from __future__ import annotations

import re

import numpy as np
import pytest
from command_line import DEVICE, assert_error, cli

from autotune_runtime.cache import TuningCache
from autotune_runtime.commands import format_value, parse_input

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
