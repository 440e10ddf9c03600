"""Persistent tuning cache: decisions and per-variant statistics in SQLite.

One row per `CacheKey`. The database runs in WAL mode with a busy timeout, and every write
is one short transaction, so several processes can tune into the same file at once. A file
that is not a readable cache is moved aside (with a warning) and a new one is started; a
location that cannot be written gives one warning and an in-memory cache.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 2
ENV_VAR = "IREE_AUTOTUNE_CACHE"
EXPORT_FORMAT = "iree-autotune-cache"


class CacheWarning(UserWarning):
    """A problem with the tuning cache that tuning continues past."""


class NewerSchemaError(sqlite3.DatabaseError):
    """The file was written by a newer version of this program: leave it alone."""


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


def default_path() -> Path:
    """`$IREE_AUTOTUNE_CACHE`, else `$XDG_CACHE_HOME/iree-autotune/tuning.sqlite3`."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iree-autotune" / "tuning.sqlite3"


_CREATE = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    device TEXT NOT NULL, module TEXT NOT NULL, grp TEXT NOT NULL, workload TEXT NOT NULL,
    variant TEXT NOT NULL, stats TEXT NOT NULL, device_info TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (device, module, grp, workload)
);
"""

# Each step upgrades a file from the version before it.
_MIGRATIONS: dict[int, str] = {
    2: "ALTER TABLE decisions ADD COLUMN device_info TEXT NOT NULL DEFAULT '{}'",
}


class TuningCache:
    """A tuning cache file (or an in-memory one)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        self.persistent = True
        self.unsaved: dict[CacheKey, Entry] = {}
        self.conn = self._open()

    # --- opening ----------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._connect(str(self.path))
        except (OSError, sqlite3.OperationalError, NewerSchemaError) as err:
            return self._in_memory(f"cannot use tuning cache {self.path} ({err})")
        except sqlite3.DatabaseError as err:
            conn = self._set_aside(err)
            if conn is None:
                return self._in_memory(f"cannot replace tuning cache {self.path}")
        return conn

    def _connect(self, target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=60.0, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout = 60000")
            if target != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
            self._ensure_schema(conn)
        except sqlite3.OperationalError as err:
            conn.close()
            if "readonly" in str(err) or "read-only" in str(err) or "unable to open" in str(err):
                raise
            raise sqlite3.DatabaseError(str(err)) from err
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if "decisions" not in tables:
                for statement in _CREATE.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            else:
                row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                version = int(row[0]) if row else 1
                if version > SCHEMA_VERSION:
                    raise NewerSchemaError(
                        f"schema version {version} is newer than this program's {SCHEMA_VERSION}"
                    )
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    conn.execute(_MIGRATIONS[target])
                conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _set_aside(self, err: Exception) -> sqlite3.Connection | None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
        warnings.warn(
            f"tuning cache {self.path} is unreadable ({err}); moved to {aside}, starting a new one",
            CacheWarning,
            stacklevel=4,
        )
        try:
            self.path.replace(aside)
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            return self._connect(str(self.path))
        except (OSError, sqlite3.DatabaseError):
            return None

    def _in_memory(self, reason: str) -> sqlite3.Connection:
        warnings.warn(f"{reason}; decisions will not be saved", CacheWarning, stacklevel=4)
        self.persistent = False
        return self._connect(":memory:")

    # --- reading and writing ----------------------------------------------------------

    def get(self, key: CacheKey) -> Entry | None:
        if key in self.unsaved:
            return self.unsaved[key]
        row = self.conn.execute(
            "SELECT variant, stats, device_info, updated FROM decisions "
            "WHERE device=? AND module=? AND grp=? AND workload=?",
            key.row(),
        ).fetchone()
        if row is None:
            return None
        return Entry(key, row[0], json.loads(row[1]), json.loads(row[2]), row[3])

    def put(self, entry: Entry) -> None:
        """Store a decision. When the file cannot take it (disk full, file made read-only)
        this is reported once; the decision and later ones are kept in memory, and what the
        file already holds stays readable."""
        if self.unsaved:
            self.unsaved[entry.key] = entry
            return
        try:
            self._write(entry)
        except sqlite3.Error as err:
            warnings.warn(
                f"cannot write tuning cache {self.path} ({err}); decisions will not be saved",
                CacheWarning,
                stacklevel=2,
            )
            self.persistent = False
            self.unsaved[entry.key] = entry

    def _write(self, entry: Entry) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *entry.key.row(),
                entry.variant,
                json.dumps(entry.stats),
                json.dumps(entry.device_info),
                entry.updated,
            ),
        )

    def entries(self) -> Iterator[Entry]:
        saved = [e for e in self._saved_entries() if e.key not in self.unsaved]
        yield from sorted(
            [*saved, *self.unsaved.values()],
            key=lambda e: (e.key.group, e.key.workload, e.key.device),
        )

    def _saved_entries(self) -> Iterator[Entry]:
        rows = self.conn.execute(
            "SELECT device, module, grp, workload, variant, stats, device_info, updated "
            "FROM decisions ORDER BY grp, workload, device"
        ).fetchall()
        for device, module, group, workload, variant, stats, info, updated in rows:
            key = CacheKey(device, module, group, tuple(json.loads(workload)))
            yield Entry(key, variant, json.loads(stats), json.loads(info), updated)

    def clear(self) -> int:
        """Delete every decision; returns how many there were."""
        self.conn.execute("BEGIN IMMEDIATE")
        count = self.conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
        self.conn.execute("DELETE FROM decisions")
        self.conn.execute("COMMIT")
        count += len(self.unsaved)
        self.unsaved.clear()
        return int(count)

    # --- moving decisions between machines --------------------------------------------

    def export(self) -> dict:
        """Every entry as JSON-ready data (`cache export`)."""
        return {
            "format": EXPORT_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "decisions": [
                {
                    "device": e.key.device,
                    "module": e.key.module,
                    "group": e.key.group,
                    "container": e.key.group.split("::")[0] if "::" in e.key.group else None,
                    "group_name": e.key.group.split("::")[-1],
                    "workload": list(e.key.workload),
                    "variant": e.variant,
                    "stats": e.stats,
                    "device_info": e.device_info,
                    "updated": e.updated,
                }
                for e in self.entries()
            ],
        }

    def import_(self, data: dict) -> int:
        """Add the entries of an export (newer entries win); returns how many were read."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise ValueError(f'not an {EXPORT_FORMAT} export (missing "format")')
        items = data.get("decisions")
        if not isinstance(items, list):
            raise ValueError('the export has no "decisions" list')
        entries = []
        for i, item in enumerate(items):
            try:
                workload = item["workload"]
                if not isinstance(workload, list):
                    raise TypeError("workload must be a list of integers")
                key = CacheKey(
                    str(item["device"]),
                    str(item["module"]),
                    str(item["group"]),
                    tuple(int(w) for w in workload),
                )
                entries.append(
                    Entry(
                        key,
                        str(item["variant"]),
                        dict(item.get("stats", {})),
                        dict(item.get("device_info", {})),
                        float(item.get("updated", time.time())),
                    )
                )
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(f"decision #{i} is malformed ({err})") from None
        # All or nothing: one transaction, newer entries win.
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for entry in entries:
                existing = self.get(entry.key)
                if existing is None or existing.updated <= entry.updated:
                    self._write(entry)
            self.conn.execute("COMMIT")
        except sqlite3.Error as err:
            self.conn.execute("ROLLBACK")
            raise ValueError(f"cannot write tuning cache {self.path} ({err})") from None
        return len(entries)

    def close(self) -> None:
        self.conn.close()
