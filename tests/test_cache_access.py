"""A tuning cache that cannot be read or written as usual is not damaged: an I/O error, a
full disk or a read-only folder leaves the file as it is (byte for byte, nothing moved
aside) and its decisions are used read-only; a folder or a file that may not be read,
named by `--cache`, is an `error:` that says so.

The full disk is a small tmpfs and the read-only folder a read-only bind mount, both in a
mount namespace of their own (`unshare`); where one cannot be made the test says why it is
skipped. The I/O error simulated in the process never skips."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import pytest
from command_line import DEVICE, assert_error, cli
from conftest import IREE_AUTOTUNE, ROOT
from modules import tagged_module

from autotune_runtime.cache import CacheKey, CacheWarning, Entry, TuningCache


def _decision(i: int) -> Entry:
    return Entry(CacheKey("dev", "mod", "exe::g", (i,)), f"v{i % 3}", {"i": i}, {}, 1.0)


def _healthy_cache(path: Path, count: int = 5) -> bytes:
    """A cache in WAL mode, as the runtime writes it, holding `count` decisions."""
    cache = TuningCache(path)
    for i in range(count):
        cache.put(_decision(i))
    cache.close()
    assert path.read_bytes()[18:20] == b"\x02\x02"  # WAL mode, as the runtime leaves it
    return path.read_bytes()


def _cache_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def _unshare() -> list[str]:
    """A command prefix for a private mount namespace, or a skip that says why not."""
    prefix = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    if shutil.which("unshare") is None:
        pytest.skip("no `unshare` command: a tmpfs or a read-only bind mount cannot be made")
    probe = subprocess.run(
        [*prefix, "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", tempfile.gettempdir()],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        reason = f"cannot mount in a private namespace ({probe.stderr.strip()})"
        print(reason)
        pytest.skip(reason)
    return prefix


# --- an I/O error is not damage -----------------------------------------------------------


class _FailingSchemaRead(sqlite3.Connection):
    """A connection whose reads of the schema fail as a failing disk makes them fail."""

    def execute(self, sql, *args):
        if "sqlite_master" in sql:
            raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql, *args)


def test_an_io_error_while_opening_moves_nothing_and_reads_the_cache(tmp_path, monkeypatch):
    path = tmp_path / "c.sqlite3"
    before = _healthy_cache(path)
    real_connect = sqlite3.connect

    def connect(database, *args, **kwargs):
        if not kwargs.get("uri"):  # the writable connection; the read-only one is real
            kwargs["factory"] = _FailingSchemaRead
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = TuningCache(path)
    (message,) = _cache_warnings(caught)
    assert "disk I/O error" in message and "its decisions are used" in message
    assert "damaged" not in message and "moved" not in message
    assert [e.variant for e in cache.entries()] == ["v0", "v1", "v2", "v0", "v1"]
    cache.put(_decision(7))  # kept in memory
    assert cache.get(_decision(7).key).variant == "v1"
    cache.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "corrupt" in p.name) == []


FULL_DISK = textwrap.dedent(
    """
    import json, os, sys, warnings
    from autotune_runtime.cache import CacheKey, CacheWarning, Entry, TuningCache
    folder = sys.argv[1]
    path = os.path.join(folder, "c.sqlite3")
    cache = TuningCache(path)
    for i in range(5):
        cache.put(Entry(CacheKey("dev", "mod", "g", (i,)), f"v{i}", {}, {}, 1.0))
    cache.close()
    with open(path, "rb") as f:
        before = f.read()
    fd = os.open(os.path.join(folder, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\\0" * 4096)
    except OSError as err:
        full = err.strerror
    os.close(fd)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = TuningCache(path)
        variants = [e.variant for e in cache.entries()]
        cache.put(Entry(CacheKey("dev", "mod", "g", (9,)), "new", {}, {}, 2.0))
        new = cache.get(CacheKey("dev", "mod", "g", (9,))).variant
        cache.close()
    with open(path, "rb") as f:
        after = f.read()
    print(json.dumps({
        "full": full, "variants": variants, "new": new, "same": after == before,
        "files": sorted(os.listdir(folder)),
        "warnings": [str(w.message) for w in caught if issubclass(w.category, CacheWarning)],
    }))
    """
)


def test_a_full_disk_leaves_the_cache_as_it_is_and_reads_it(tmp_path):
    prefix = _unshare()
    folder = tmp_path / "disk"
    folder.mkdir()
    script = f'mount -t tmpfs -o size=256k tmpfs {folder} && exec {sys.executable} -c "$0" {folder}'
    run = subprocess.run(
        [*prefix, "sh", "-c", script, FULL_DISK], capture_output=True, text=True, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["full"] == "No space left on device"
    assert result["same"] is True  # byte for byte
    assert result["variants"] == ["v0", "v1", "v2", "v3", "v4"]
    assert result["new"] == "new"  # kept in memory
    assert not [f for f in result["files"] if "corrupt" in f]
    assert [f for f in result["files"] if f.startswith("c.sqlite3")][0] == "c.sqlite3"
    (message,) = result["warnings"]
    assert "No space left on device" in message and "its decisions are used" in message
    assert "damaged" not in message


# --- a read-only folder -------------------------------------------------------------------

READ_ONLY = textwrap.dedent(
    """
    import json, sys, warnings
    from autotune_runtime.cache import CacheWarning, TuningCache
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = TuningCache(sys.argv[1])
        variants = [e.variant for e in cache.entries()]
        cache.close()
    print(json.dumps({
        "variants": variants, "read_only": cache.read_only,
        "warnings": [str(w.message) for w in caught if issubclass(w.category, CacheWarning)],
    }))
    """
)


def test_a_healthy_cache_in_a_read_only_folder_is_read(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "c.sqlite3"
    before = _healthy_cache(path)
    if os.geteuid() != 0:  # a folder of mode 0555
        folder.chmod(0o555)
        try:
            run = subprocess.run(
                [sys.executable, "-c", READ_ONLY, str(path)],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
        finally:
            folder.chmod(0o755)
    else:  # root writes any folder: a read-only bind mount instead
        prefix = _unshare()
        script = f'mount --bind -o ro {folder} {folder} && exec {sys.executable} -c "$0" {path}'
        run = subprocess.run(
            [*prefix, "sh", "-c", script, READ_ONLY], capture_output=True, text=True, cwd=ROOT
        )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["variants"] == ["v0", "v1", "v2", "v0", "v1"]
    assert result["read_only"] is True
    (message,) = result["warnings"]
    assert "cannot be written" in message and "its decisions are used" in message
    assert "damaged" not in message
    assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["c.sqlite3"]


# --- a cache that is a folder, or that may not be read ------------------------------------


def test_a_folder_given_as_the_cache_is_named_so(vmfbs, tmp_path):
    folder = tmp_path / "decisions"
    folder.mkdir()
    (folder / "inside").write_text("kept")
    message = f"{folder} is a folder, not a tuning cache file"
    for args in (
        ("run", vmfbs["explicit"], *DEVICE, "--input", "16xf32=0"),
        ("tune", vmfbs["explicit"], *DEVICE),
        ("report",),
        ("cache", "export", tmp_path / "out.json"),
        ("cache", "clear"),
    ):
        assert_error(cli(*args, "--cache", folder), message)
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module())
    lowered = tmp_path / "static.mlir"
    result = cli("lower", source, "--policy", "static", "--cache", folder, "-o", lowered)
    assert_error(result, str(folder))
    assert "directory" in result.stderr.lower() or "folder" in result.stderr
    assert [p.name for p in folder.iterdir()] == ["inside"]
    assert not (tmp_path / "out.json").exists() and not lowered.exists()


def test_a_folder_at_the_default_location_keeps_decisions_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("IREE_AUTOTUNE_CACHE", str(tmp_path / "tuning.sqlite3"))
    (tmp_path / "tuning.sqlite3").mkdir()
    with pytest.warns(CacheWarning, match="is a folder, not a tuning cache file"):
        cache = TuningCache()
    assert not cache.persistent
    cache.put(_decision(1))
    assert cache.get(_decision(1).key).variant == "v1"
    cache.close()
    assert (tmp_path / "tuning.sqlite3").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tuning.sqlite3"]


def _as_a_user() -> list[str]:
    """A command prefix that runs as a user, not root (root reads a file of mode 000): a
    user namespace whose one user is root outside, so the files stay its own."""
    if os.geteuid() != 0:
        return []
    prefix = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"]).returncode != 0:
        reason = "running as root, and no user namespace to run the commands as a user"
        print(reason)
        pytest.skip(reason)
    return prefix


def test_a_cache_that_may_not_be_read_is_named_so(vmfbs, tmp_path):
    prefix = _as_a_user()
    path = tmp_path / "c.sqlite3"
    before = _healthy_cache(path)
    path.chmod(0)
    message = f"cannot read tuning cache {path}: permission denied"
    try:
        for args in (
            ("run", vmfbs["explicit"], *DEVICE, "--input", "16xf32=0"),
            ("tune", vmfbs["explicit"], *DEVICE),
            ("report",),
            ("cache", "clear"),
        ):
            command = [*prefix, IREE_AUTOTUNE, *map(str, args), "--cache", str(path)]
            assert_error(subprocess.run(command, capture_output=True, text=True), message)
    finally:
        path.chmod(0o644)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite3"]
