"""`iree-autotune report` and `iree-autotune cache export | import | clear`, through the
installed console script: the report's table and plot, exports that freeze static choices,
imports that refuse garbage, atomic exports with the umask's permissions."""

from __future__ import annotations

import json
import math
import os

import pytest
from command_line import DEVICE, TOLERANT, assert_error, cli, decisions
from modules import tagged_module

from autotune_runtime.cache import TuningCache

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
