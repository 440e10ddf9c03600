"""Persistent tuning cache: decisions and per-variant statistics in SQLite.

One row per `CacheKey`. The database runs in WAL mode, every write is one short
transaction, and several processes can tune into one file at once. Decisions committed by
tuning are written off the calling path, many to a transaction (`cache_writer`). What is
guaranteed (docs/runtime.md):

- A file held by another process is never treated as damaged: a decision that cannot be
  written before the busy timeout is kept and written later (at the next write, and when
  the cache is closed, which waits for the file).
- Only a file proven damaged (an SQLite file that SQLite finds malformed or not a
  database, or whose `PRAGMA quick_check` fails, or a cache file at the default location
  that is not an SQLite file at all) is moved aside,
  with its `-wal` and `-shm`, under a name of its own; nothing is deleted, and the new
  file starts with the decisions that could still be read. A file that is
  not a cache of this program (another format, another SQLite schema) is refused
  (`NotACacheError`) and left as it is.
- An I/O error is not damage: a file that cannot be opened for writing (read-only, in a
  read-only folder, a disk I/O error, a full disk) is left as it is and read read-only;
  new decisions are then kept in memory. So are they where no file can be made (a
  read-only folder): one warning says so, with the system's reason, and how to export
  them. A folder, or a file that may not be read, named by the caller is refused
  (`CacheAccessError`).
- The first decision written for a key stands (`commit`): a later tuner, in this process
  or another, gets that decision back instead of storing its own over it; one whose
  commit comes before the other's write keeps running its own, with a warning.
- A damaged row (its statistics are not JSON, or its page cannot be read) is skipped with
  one warning; the rest of the cache keeps serving.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from autotune_contracts.cache_file import (
    COLUMNS,
    CREATE,
    EXPORT_FORMAT,
    MIGRATIONS,
    SCHEMA_VERSION,
    SQLITE_HEADER,
    CacheKey,
    CacheWarning,
    Entry,
    NewerSchemaError,
    NotACacheError,
    check_version,
    damaged_row,
    entry_from_row,
    exported,
    imported_entry,
    is_sqlite_file,
    not_a_cache,
    open_read_only,
    schema_version,
)
from autotune_runtime.cache_writer import WRITER_BUSY_TIMEOUT_S, WriteBehind

__all__ = [
    "CacheAccessError",
    "CacheKey",
    "CacheWarning",
    "Entry",
    "NotACacheError",
    "TuningCache",
    "default_path",
]

ENV_VAR = "IREE_AUTOTUNE_CACHE"
DEFAULT_BUSY_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 600.0
"""How long `close()` waits for a busy file to take the decisions not yet written."""
KEPT_IN_MEMORY = (
    "decisions will not be saved: they are kept in memory for this process only (to keep "
    "them, write them out before it ends with `iree-autotune tune --export FILE.json` or, in "
    "Python, the module's `cache.export()`, then `iree-autotune cache import FILE.json` "
    "into a writable cache)"
)


def default_path() -> Path:
    """`$IREE_AUTOTUNE_CACHE`, else `$XDG_CACHE_HOME/iree-autotune/tuning.sqlite3`."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iree-autotune" / "tuning.sqlite3"


def _busy(err: sqlite3.Error) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26


def _damage(err: sqlite3.Error) -> bool:
    """Whether SQLite found the file's content bad (`SQLITE_CORRUPT`, `SQLITE_NOTADB`), as
    opposed to not being able to read or write it (an I/O error, a full disk, a file that
    cannot be opened, a read-only place), which says nothing of its content."""
    code = getattr(err, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB)
    text = str(err).lower()
    return "malformed" in text or "not a database" in text


def _why_unwritable(path: Path) -> str:
    """What the system says keeps `path` from being written (a read-only file system, a
    full disk, a permission), as far as it can be told after the fact; "" if nothing."""
    try:
        disk = os.statvfs(path.parent)
    except OSError as err:
        return err.strerror or str(err)
    if disk.f_flag & os.ST_RDONLY:
        return os.strerror(errno.EROFS)
    if disk.f_bavail == 0:
        return os.strerror(errno.ENOSPC)
    for place in (path.parent, path):
        if place.exists() and not os.access(place, os.W_OK):
            return f"{place}: {os.strerror(errno.EACCES)}"
    return ""


class CacheAccessError(OSError):
    """A cache file named by the caller that cannot be used at all (a folder, a file it
    may not read); it is left untouched."""


class _Damaged(Exception):
    """The file is an SQLite file that is damaged; `rows` are the decisions still read."""

    def __init__(self, reason: str, rows: list[tuple] | None = None):
        super().__init__(reason)
        self.rows = rows or []


class TuningCache:
    """A tuning cache file (or an in-memory one)."""

    def __init__(
        self, path: str | Path | None = None, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
    ):
        self.owned = path is None  # the default location: a file there can only be ours
        self.path = Path(path) if path is not None else default_path()
        self.busy_timeout_s = busy_timeout_s
        self.persistent = True
        self.read_only = False
        self.pending: dict[CacheKey, Entry] = {}  # to write when the file is free again
        self.unsaved: dict[CacheKey, Entry] = {}  # decisions the file cannot take
        self.first: set[CacheKey] = set()  # keys whose decision is written only if none is
        self._warned: set[str] = set()
        self.lock = threading.RLock()  # the connection and the buffers, against the writer
        self.conn = self._open()
        self._writer = WriteBehind(self._write_buffered, self.lock, self)

    # --- opening ----------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        problem = self._access_problem()
        if problem is not None:
            message, callers = problem
            if callers and not self.owned:
                raise CacheAccessError(message)
            return self._in_memory(message)
        if self.path.exists() and self.path.stat().st_size > 0 and not is_sqlite_file(self.path):
            if not self.owned:
                raise NotACacheError(
                    f"{self.path} is not a tuning cache (it is not an SQLite database); it was "
                    "left as it is. A JSON export is read with `iree-autotune cache import`, "
                    "or by `lower`/`compile --cache`"
                )
            return self._set_aside_or_memory("it is not an SQLite database")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            return self._in_memory(f"cannot use tuning cache {self.path} ({err.strerror})")
        try:
            return self._connect()
        except NewerSchemaError as err:
            return self._in_memory(f"cannot use tuning cache {self.path} ({err})")
        except _Damaged as err:
            return self._set_aside_or_memory(str(err), err.rows)
        except sqlite3.Error as err:
            why = _why_unwritable(self.path)
            return self._in_memory(
                f"cannot use tuning cache {self.path} ({err}{': ' + why if why else ''})"
            )

    def _access_problem(self) -> tuple[str, bool] | None:
        """Why the path cannot be read as a cache file at all, and whether that is the
        caller's to fix (a folder, a file it may not read) rather than the system's (an
        I/O error); None when it can be read or does not exist yet."""
        if self.path.is_dir():
            return f"{self.path} is a folder, not a tuning cache file", True
        try:
            with open(self.path, "rb") as file:
                file.read(len(SQLITE_HEADER))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except PermissionError as err:
            reason = (err.strerror or "permission denied").lower()
            return f"cannot read tuning cache {self.path}: {reason}", True
        except OSError as err:
            return f"cannot read tuning cache {self.path}: {err.strerror or err}", False
        return None

    def _connect(self) -> sqlite3.Connection:
        """The file, opened for writing, else (a place that cannot be written, an I/O
        error or a full disk while opening it) read as it is."""
        exists = self.path.exists()
        folder_writable = os.access(self.path.parent, os.W_OK)
        if not exists and not folder_writable:
            return self._in_memory(
                f"cannot create tuning cache {self.path}: its folder is not writable "
                f"({_why_unwritable(self.path) or os.strerror(errno.EACCES)})"
            )
        if not (folder_writable and (not exists or os.access(self.path, os.W_OK))):
            return self._connect_read_only(_why_unwritable(self.path) or "it cannot be written")
        conn = sqlite3.connect(
            str(self.path),
            timeout=self.busy_timeout_s,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            self._check(conn, writable=True)
            return conn
        except sqlite3.Error as err:
            conn.close()
            if isinstance(err, NewerSchemaError) or _busy(err) or _damage(err):
                raise
            if not (self.path.exists() and self.path.stat().st_size > 0):
                raise
            why = _why_unwritable(self.path)
            return self._connect_read_only(f"{err}: {why}" if why else str(err))
        except BaseException:
            conn.close()
            raise

    def _connect_read_only(self, reason: str) -> sqlite3.Connection:
        """The file as it is, for reading (a WAL file without a writable folder needs
        `immutable`); `reason`: why it cannot be written. Nothing is moved or changed."""
        self.read_only = True
        self.persistent = False
        conn = open_read_only(
            self.path, lambda c: self._check(c, writable=False), self.busy_timeout_s
        )
        self._warn(
            f"tuning cache {self.path} cannot be written ({reason}); it is read read-only: its "
            "decisions are used; new " + KEPT_IN_MEMORY
        )
        return conn

    def _check(self, conn: sqlite3.Connection, writable: bool) -> None:
        """That the file is a cache of this program (prepared for use when `writable`)."""
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        tables = self._tables(conn)
        if tables and "decisions" not in tables:
            raise not_a_cache(self.path, tables)
        if writable:
            self._prepare(conn, tables)
        elif tables:
            check_version(conn)

    def _tables(self, conn: sqlite3.Connection) -> set[str]:
        try:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
        except sqlite3.DatabaseError as err:
            if not _damage(err):  # busy, or cannot be read: nothing is known of the content
                raise
            raise _Damaged(f"its schema cannot be read ({err})") from None
        return {r[0] for r in rows}

    def _prepare(self, conn: sqlite3.Connection, tables: set[str]) -> None:
        """WAL mode, the schema (created or migrated), and a check of what is there."""
        try:
            (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as err:
            if not _busy(err):  # a busy file is in use, hence already set up
                raise
            mode = "wal"
        if mode == "wal":  # no sync per commit: a power cut may lose the last ones, no more
            conn.execute("PRAGMA synchronous = NORMAL")
        if tables:
            check_version(conn)
            try:
                check = conn.execute("PRAGMA quick_check").fetchone()
            except sqlite3.DatabaseError as err:
                if not _damage(err):
                    raise
                check = (str(err),)
            if check is None or check[0] != "ok":
                self.conn = conn
                rows = self._readable_rows()
                raise _Damaged(
                    f"PRAGMA quick_check reports: {check[0] if check else 'nothing'}", rows
                )
        version = schema_version(conn) if tables else 0
        if version == SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            if "decisions" not in self._tables(conn):
                for statement in CREATE.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            else:
                for target in range(schema_version(conn) + 1, SCHEMA_VERSION + 1):
                    conn.execute(MIGRATIONS[target])
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _set_aside_or_memory(self, reason: str, salvaged: list[tuple] = ()) -> sqlite3.Connection:
        """Move a damaged file (and its `-wal`, `-shm`) to a name of its own, and start
        a new cache with the decisions that could still be read; nothing is deleted."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(
            f"{self.path.name}.corrupt-{stamp}-{os.getpid()}-{secrets.token_hex(4)}"
        )
        try:
            for suffix in ("-wal", "-shm"):
                side = Path(f"{self.path}{suffix}")
                if side.exists():
                    side.replace(Path(f"{aside}{suffix}"))
            self.path.replace(aside)
        except OSError as err:
            return self._in_memory(f"tuning cache {self.path} is damaged ({reason}; {err})")
        entries = [e for e in map(self._entry, salvaged) if e is not None]
        kept = f" with the {len(entries)} decisions still readable" if entries else ""
        self._warn(
            f"tuning cache {self.path} is damaged ({reason}); moved to {aside}, starting a new "
            f"one{kept}"
        )
        try:
            conn = self._connect()
        except (sqlite3.Error, _Damaged) as err:
            return self._in_memory(f"cannot start tuning cache {self.path} ({err})")
        if entries:
            self.conn = conn
            self._write_all(entries)
        return conn

    def _in_memory(self, reason: str) -> sqlite3.Connection:
        self._warn(f"{reason}; {KEPT_IN_MEMORY}")
        self.persistent = False
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.executescript(CREATE)
        return conn

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, CacheWarning, stacklevel=4)

    # --- reading ------------------------------------------------------------------------

    def get(self, key: CacheKey) -> Entry | None:
        """The decision for `key`: this process's (written or not yet), else the file's."""
        with self.lock:
            for kept in (self.pending, self.unsaved):
                if key in kept:
                    return kept[key]
            try:
                row = self.conn.execute(
                    f"SELECT {COLUMNS} FROM decisions "
                    "WHERE device=? AND module=? AND grp=? AND workload=?",
                    key.row(),
                ).fetchone()
            except sqlite3.DatabaseError as err:
                self._warn(f"tuning cache {self.path}: a decision cannot be read ({err}); skipped")
                return None
            return None if row is None else self._entry(row)

    def _entry(self, row: tuple) -> Entry | None:
        """An entry from a row, or None (with one warning) for a damaged row."""
        try:
            return entry_from_row(row)
        except (ValueError, TypeError) as err:
            self._warn(damaged_row(self.path, row, err))
            return None

    def neighbours(self, key: CacheKey) -> list[Entry]:
        """The decisions stored for `key`'s device, module and group, at any workload."""
        same = (key.device, key.module, key.group)
        with self.lock:
            kept = {
                k: e for k, e in {**self.unsaved, **self.pending}.items() if k.row()[:3] == same
            }
            try:
                rows = self.conn.execute(
                    f"SELECT {COLUMNS} FROM decisions WHERE device=? AND module=? AND grp=?", same
                ).fetchall()
            except sqlite3.DatabaseError as err:
                self._warn(f"tuning cache {self.path}: decisions cannot be read ({err}); skipped")
                rows = []
            saved = [e for e in map(self._entry, rows) if e is not None and e.key not in kept]
        return [*saved, *kept.values()]

    def entries(self) -> Iterator[Entry]:
        with self.lock:
            kept = {**self.unsaved, **self.pending}
            saved = [e for e in self._saved_entries() if e.key not in kept]
        yield from sorted(
            [*saved, *kept.values()],
            key=lambda e: (e.key.group, e.key.workload, e.key.device),
        )

    def _saved_entries(self) -> list[Entry]:
        try:
            rows = self.conn.execute(
                f"SELECT {COLUMNS} FROM decisions ORDER BY grp, workload, device"
            ).fetchall()
        except sqlite3.DatabaseError as err:
            self._warn(f"tuning cache {self.path} is partly damaged ({err}); reading what is left")
            rows = self._readable_rows()
        return [e for e in map(self._entry, rows) if e is not None]

    def _readable_rows(self) -> list[tuple]:
        """The rows that can be read, one by one (a damaged page fails only its own)."""
        try:
            rows = self.conn.execute(f"SELECT {COLUMNS} FROM decisions").fetchall()
            return rows
        except sqlite3.DatabaseError:
            pass
        try:
            last = self.conn.execute("SELECT max(rowid) FROM decisions").fetchone()[0] or 0
        except sqlite3.DatabaseError:
            last = 1 << 16
        rows = []
        for rowid in range(1, int(last) + 1):
            try:
                row = self.conn.execute(
                    f"SELECT {COLUMNS} FROM decisions WHERE rowid=?", (rowid,)
                ).fetchone()
            except sqlite3.DatabaseError:
                continue
            if row is not None:
                rows.append(row)
        return rows

    # --- writing ------------------------------------------------------------------------

    def put(self, entry: Entry) -> None:
        """Store a decision now (with any that `commit` buffered). A busy file gets it
        later (`pending`); a file that cannot take it (disk full, read-only) is reported
        once, and the decision and later ones are kept in memory while what the file
        holds stays readable."""
        with self.lock:
            if self.unsaved or self.read_only or not self.persistent:
                self.unsaved[entry.key] = entry
                return
            self.pending[entry.key] = entry
            self._flush(wait=False)

    def commit(self, entry: Entry) -> Entry:
        """Store a tuned decision unless one is stored for its key already (by this
        process, or in the file: another process committed first); returns the decision
        that stands. Nothing is written on the calling path: the decision is buffered
        (`pending`, which `get` answers from) and the writer thread writes it with others
        in one transaction (`cache_writer`), only where the file still has none for its
        key; where another process wrote one in between, that one stands in the file and
        a warning says so (this process goes on running its own)."""
        with self.lock:
            stored = self.get(entry.key)
            if stored is not None:
                return stored
            self.first.add(entry.key)
            if self.unsaved or self.read_only or not self.persistent:
                self.unsaved[entry.key] = entry
            else:
                self.pending[entry.key] = entry
                self._writer.buffered(len(self.pending))
            return entry

    def flush(self) -> None:
        """Write the buffered decisions now, waiting for a busy file (`CLOSE_TIMEOUT_S`)."""
        with self.lock:
            self._flush(wait=True)

    def _write_buffered(self) -> int:
        """The writer thread's step: write what is buffered if the file is free within
        `WRITER_BUSY_TIMEOUT_S` (the calling path waits no longer for the lock); returns
        how many decisions are still buffered."""
        self.conn.execute(f"PRAGMA busy_timeout = {int(WRITER_BUSY_TIMEOUT_S * 1000)}")
        try:
            self._flush(wait=False)
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        return len(self.pending)

    def _flush(self, wait: bool) -> None:
        """Write the pending decisions; with `wait`, until the file is free (at most
        `CLOSE_TIMEOUT_S`). A decision of `commit` that the file already held another
        one for is not written, and a warning says so."""
        deadline = time.monotonic() + (CLOSE_TIMEOUT_S if wait else 0.0)
        while self.pending:
            try:
                overruled = self._write_all(list(self.pending.values()))
                self.pending.clear()
                for entry in overruled:
                    stored = self.get(entry.key)
                    self._warn(
                        f"tuning cache {self.path}: another process stored "
                        f"{stored.variant if stored else 'a decision'} for {entry.key.group} "
                        f"at {list(entry.key.workload)} first, which stands; this process "
                        f"ran {entry.variant} until it ended"
                    )
            except sqlite3.Error as err:
                if _busy(err):
                    self._warn(
                        f"tuning cache {self.path} is busy (another process holds it); "
                        + (
                            "waiting for it to write the decisions not yet written"
                            if wait
                            else "decisions are kept and written when it is free"
                        )
                    )
                    if time.monotonic() < deadline:
                        time.sleep(0.05)
                        continue
                    if not wait:
                        return
                self._warn(f"cannot write tuning cache {self.path} ({err}); {KEPT_IN_MEMORY}")
                self.persistent = False
                self.unsaved.update(self.pending)
                self.pending.clear()
                return

    def _write_all(self, entries: list[Entry]) -> list[Entry]:
        """Write `entries` in one transaction; returns those of `commit` not written
        because the file held a decision for their key."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            overruled = [e for e in entries if not self._write(e)]
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        return overruled

    def _write(self, entry: Entry) -> bool:
        """Write one decision (one of `commit` only where there is none); whether it was."""
        verb = "IGNORE" if entry.key in self.first else "REPLACE"
        cursor = self.conn.execute(
            f"INSERT OR {verb} INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *entry.key.row(),
                entry.variant,
                json.dumps(entry.stats),
                json.dumps(entry.device_info),
                entry.updated,
            ),
        )
        return cursor.rowcount > 0

    def clear(self) -> int:
        """Delete every decision; returns how many there were."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            count = self.conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
            self.conn.execute("DELETE FROM decisions")
            self.conn.execute("COMMIT")
            count += len(self.unsaved) + len(self.pending)
            self.unsaved.clear()
            self.pending.clear()
        return int(count)

    # --- moving decisions between machines --------------------------------------------

    def export(self) -> dict:
        """Every entry as JSON-ready data (`cache export`)."""
        return exported(self.entries())

    def import_(self, data: dict) -> int:
        """Add the entries of an export (newer entries win); returns how many were read."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise ValueError(f'not an {EXPORT_FORMAT} export (missing "format")')
        items = data.get("decisions")
        if not isinstance(items, list):
            raise ValueError('the export has no "decisions" list')
        entries = [imported_entry(i, item) for i, item in enumerate(items)]
        if self.read_only or not self.persistent:
            raise ValueError(f"cannot write tuning cache {self.path} (it is read-only or unusable)")
        with self.lock:  # all or nothing: one transaction, newer entries win
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
        """Write what is pending (waiting for a busy file) and close the file."""
        self._writer.stop(self)  # without the lock: it may be writing
        with self.lock:
            self._flush(wait=True)
            self.conn.close()
