"""Writing a tuning cache's committed decisions off the calling path.

`TuningCache.commit` only buffers a decision; a writer thread writes the buffered ones in
one transaction when `FLUSH_BATCH` of them wait or `FLUSH_INTERVAL_S` after the last
write, whichever comes first, and stops while none wait. What is still buffered is written
when the cache is closed and, for a cache left open, when the process exits normally
(`atexit`). A process killed outright loses at most the decisions of the last interval.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager

FLUSH_INTERVAL_S = 1.0
"""At most this long between a decision's commit and its write (a file busy for longer
keeps it buffered, and the writer tries again)."""
FLUSH_BATCH = 64
"""This many buffered decisions are written at once, without waiting for the interval."""
WRITER_BUSY_TIMEOUT_S = 0.1
"""How long the writer waits for a file another process holds before it tries again at
the next interval (the calling path, which shares the cache's connection, may wait as
long for it)."""

_flush_at_exit: weakref.WeakSet = weakref.WeakSet()
"""The open caches whose buffered decisions are written when the process exits."""


@atexit.register
def _write_buffered_decisions() -> None:
    for cache in list(_flush_at_exit):
        cache.flush()


class WriteBehind:
    """The writer thread of one cache. `write()` writes what is buffered and returns how
    many decisions are still buffered; it and `buffered` run under `lock`, the lock that
    guards the cache's connection and buffers."""

    def __init__(self, write: Callable[[], int], lock: AbstractContextManager, owner: object):
        self._write = write
        self._lock = lock
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopped = False
        _flush_at_exit.add(owner)

    def buffered(self, count: int) -> None:
        """`count` decisions are buffered (called under `lock`): start the writer, or wake
        it when a batch is full."""
        if self._stopped:
            return
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="iree-autotune-cache-writer", daemon=True
            )
            self._thread.start()
        if count >= FLUSH_BATCH:
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait(FLUSH_INTERVAL_S)
            self._wake.clear()
            with self._lock:
                if self._stopped or self._write() == 0:
                    self._thread = None
                    return

    def stop(self, owner: object) -> None:
        """End the thread, waiting for a write under way (called without `lock`); the
        owner then writes what is left itself."""
        self._stopped = True
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        _flush_at_exit.discard(owner)
