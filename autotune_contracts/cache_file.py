"""The tuning cache's file: its SQLite schema, its key and entries, and its JSON export.

The runtime writes the file (`autotune_runtime/cache.py`: concurrency, damage, read-only
folders); the lowering's `static` policy reads decisions from it (`read_entries`) or from
an export. Both go through this module, so the format has one definition.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from autotune_contracts.interface import split_group_name

SCHEMA_VERSION = 2
EXPORT_FORMAT = "iree-autotune-cache"
SQLITE_HEADER = b"SQLite format 3\x00"

CREATE = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    device TEXT NOT NULL, module TEXT NOT NULL, grp TEXT NOT NULL, workload TEXT NOT NULL,
    variant TEXT NOT NULL, stats TEXT NOT NULL, device_info TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (device, module, grp, workload)
);
"""

MIGRATIONS: dict[int, str] = {
    2: "ALTER TABLE decisions ADD COLUMN device_info TEXT NOT NULL DEFAULT '{}'",
}
"""Each step upgrades a file from the version before it."""

COLUMNS = "device, module, grp, workload, variant, stats, device_info, updated"


class CacheWarning(UserWarning):
    """A problem with the tuning cache that tuning continues past."""


class NewerSchemaError(sqlite3.DatabaseError):
    """The file was written by a newer version of this program: leave it alone."""


class NotACacheError(ValueError):
    """The file is not a tuning cache of this program; it is left untouched."""


@dataclass(frozen=True)
class CacheKey:
    """Everything a decision depends on, and only that.

    - `device`: digest of the device fingerprint (driver, device name, architecture, IREE
      runtime version; see `DeviceFingerprint`);
    - `module`: the group's fingerprint, a digest of its variant set and of the executable
      contents the variants run (not of unrelated parts of the module);
    - `group`: the group's qualified name (`executable::group` or `group`);
    - `workload`: the workload key of the decision.
    The schema version is part of the file (a file of another version is migrated or set
    aside). Left out: the module file's path or name, other groups, the tuning parameters
    and the policy (a decision is a fact about the device and the kernels, however found).
    """

    device: str
    module: str
    group: str
    workload: tuple[int, ...]

    def row(self) -> tuple[str, str, str, str]:
        return (self.device, self.module, self.group, json.dumps(list(self.workload)))


@dataclass
class Entry:
    """A stored decision: the winning variant and every variant's statistics."""

    key: CacheKey
    variant: str
    stats: dict
    device_info: dict
    updated: float


def is_sqlite_file(path: Path) -> bool:
    """Whether `path` starts with the SQLite header."""
    try:
        with open(path, "rb") as f:
            return f.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def not_a_cache(path: Path, tables: set[str]) -> NotACacheError:
    """The error for an SQLite file whose tables are not a tuning cache's."""
    return NotACacheError(
        f"{path} is an SQLite database but not a tuning cache (its tables: "
        f"{', '.join(sorted(tables))}); it was left as it is"
    )


def schema_version(conn: sqlite3.Connection) -> int:
    """The file's schema version (1: written before the version was recorded)."""
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 1


def check_version(conn: sqlite3.Connection) -> None:
    """Refuse a file of a newer schema (`NewerSchemaError`)."""
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"schema version {version} is newer than this program's {SCHEMA_VERSION}"
        )


def entry_from_row(row: tuple) -> Entry:
    """An entry from a `COLUMNS` row; ValueError or TypeError names what is damaged."""
    device, module, group, workload, variant, stats, info, updated = row
    values = json.loads(workload)
    if not isinstance(values, list) or not all(_is_int(w) for w in values):
        raise ValueError("workload is not a list of integers")
    stats_value, info_value = json.loads(stats), json.loads(info)
    if not isinstance(stats_value, dict) or not isinstance(info_value, dict):
        raise ValueError("statistics are not JSON objects")
    if not isinstance(variant, str):
        raise ValueError("variant is not a name")
    key = CacheKey(str(device), str(module), str(group), tuple(values))
    return Entry(key, variant, stats_value, info_value, float(updated))


def damaged_row(path: Path, row: tuple, err: Exception) -> str:
    """What a warning says of a row that `entry_from_row` refused."""
    return (
        f"tuning cache {path}: the decision for {row[2]} at {row[3]} is damaged ({err}); "
        "it is skipped"
    )


def open_read_only(
    path: Path, check: Callable[[sqlite3.Connection], None], timeout_s: float = 5.0
) -> sqlite3.Connection:
    """A connection that reads `path` without writing it, once `check(conn)` passed: the
    file read-only, else (a WAL file in a folder that cannot be written, whose readers
    cannot make its `-shm`) as immutable. Raises the last `sqlite3.OperationalError`, or
    what `check` raises otherwise."""
    error: sqlite3.OperationalError | None = None
    for mode in ("mode=ro", "immutable=1"):
        uri = f"{path.resolve().as_uri()}?{mode}"
        conn = sqlite3.connect(uri, uri=True, timeout=timeout_s, isolation_level=None)
        try:
            check(conn)
            return conn
        except sqlite3.OperationalError as err:
            conn.close()
            error = err
        except BaseException:
            conn.close()
            raise
    assert error is not None
    raise error


def read_entries(path: Path) -> list[Entry]:
    """The decisions of a cache file, read without changing it (a file in a read-only
    folder too), in export order; a damaged row is skipped with a `CacheWarning`.
    Raises `NotACacheError` for another SQLite file, `NewerSchemaError`, or the
    `sqlite3.Error` that made the file unreadable."""
    tables: set[str] = set()

    def check(conn: sqlite3.Connection) -> None:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
        tables.update(r[0] for r in rows)
        if tables and "decisions" not in tables:
            raise not_a_cache(path, tables)
        if tables:
            check_version(conn)

    conn = open_read_only(path, check)
    try:
        rows = conn.execute(f"SELECT {COLUMNS} FROM decisions").fetchall() if tables else []
    finally:
        conn.close()
    entries = []
    for row in rows:
        try:
            entries.append(entry_from_row(row))
        except (ValueError, TypeError) as err:
            warnings.warn(damaged_row(path, row, err), CacheWarning, stacklevel=2)
    return sorted(entries, key=lambda e: (e.key.group, e.key.workload, e.key.device))


def exported(entries: Iterable[Entry]) -> dict:
    """Entries as JSON-ready data, the export's format (`cache export`)."""
    return {
        "format": EXPORT_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "decisions": [
            {
                "device": e.key.device,
                "module": e.key.module,
                "group": e.key.group,
                "container": split_group_name(e.key.group)[0],
                "group_name": split_group_name(e.key.group)[1],
                "workload": list(e.key.workload),
                "variant": e.variant,
                "stats": e.stats,
                "device_info": e.device_info,
                "updated": e.updated,
            }
            for e in entries
        ],
    }


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def export_problem(data: object, format_required: bool = True) -> str | None:
    """Why JSON `data` is not an export this program reads (None when it is one): not an
    object, a `format` that is not this program's (or none, where `format_required`), a
    `schema_version` newer than this program's or not a whole number. The decisions
    themselves are checked one by one (`imported_entry`)."""
    if not isinstance(data, dict):
        return f"not an {EXPORT_FORMAT} export (the JSON is not an object)"
    if "format" not in data:
        return f'not an {EXPORT_FORMAT} export (missing "format")' if format_required else None
    if data["format"] != EXPORT_FORMAT:
        return (
            f'"format": {json.dumps(data["format"])} is not this program\'s '
            f"({EXPORT_FORMAT!r}): not a tuning-cache export"
        )
    version = data.get("schema_version", SCHEMA_VERSION)
    if not _is_int(version) or version < 1:
        return f'"schema_version": {json.dumps(version)} is not a version (a whole number)'
    if version > SCHEMA_VERSION:
        return (
            f"schema version {version} is newer than this program's ({SCHEMA_VERSION}): the "
            "file was written by a newer iree-autotune, which reads it"
        )
    return None


def imported_entry(index: int, item: object) -> Entry:
    """One decision of an export, checked field by field (ValueError: what is wrong)."""

    def bad(reason: str) -> ValueError:
        return ValueError(f"decision #{index} is malformed ({reason})")

    if not isinstance(item, dict):
        raise bad("not an object")
    for field in ("device", "module", "group", "variant"):
        if not isinstance(item.get(field), str) or not item[field]:
            raise bad(f'"{field}" must be a non-empty string')
    workload = item.get("workload")
    if not isinstance(workload, list) or not all(_is_int(w) for w in workload):
        raise bad('"workload" must be a list of integers')
    stats = item.get("stats", {})
    info = item.get("device_info", {})
    if not isinstance(stats, dict) or not isinstance(info, dict):
        raise bad('"stats" and "device_info" must be objects')
    updated = item.get("updated", time.time())
    if (
        not isinstance(updated, int | float)
        or isinstance(updated, bool)
        or not math.isfinite(updated)
    ):
        raise bad('"updated" must be a number')
    key = CacheKey(item["device"], item["module"], item["group"], tuple(workload))
    return Entry(key, item["variant"], stats, info, float(updated))
