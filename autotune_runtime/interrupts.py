"""Interrupts during tuning (Ctrl-C, `SystemExit`): they end it, and store nothing unfinished.

While a module's function runs, the signal's `KeyboardInterrupt` is raised in the next
Python code that runs, almost always a host callback (`host.py`) that the VM calls: the
VM then ends the call with an error of its own whose message holds the callback's
traceback. `raised_in_host` reads the interrupt back from that message, so that the
runtime raises it again instead of taking the error for a failing variant (which would
be excluded, and a decision stored). A decision is written to the tuning cache with
SIGINT held back (`held_back`): written whole and known to the tuner, or not at all.
"""

from __future__ import annotations

# The C module under `signal`: its wrappers turn each handler into an enum, about 5 us a
# call, and every commit of a new key (about 0.1 ms in all) holds SIGINT back: 3 us, not 30.
import _signal
import contextlib
import re
import signal
import threading
from collections.abc import Iterator

_FROM_HOST = "Exception raised from Python module"
_INTERRUPT_LINE = re.compile(
    r"^(KeyboardInterrupt|SystemExit)(?::[ ]?(.*?))?(?:; while calling import.*)?$",
    re.MULTILINE,
)


def raised_in_host(error: BaseException) -> KeyboardInterrupt | SystemExit | None:
    """The interrupt that a host callback raised, when `error` is the VM's report of it
    (IREE's `... Exception raised from Python module: Traceback ...`, whose line
    `KeyboardInterrupt: ...` names what was raised); None for any other error."""
    text = str(error)
    where = text.find(_FROM_HOST)
    if where < 0:
        return None
    match = _INTERRUPT_LINE.search(text, where)
    if match is None:
        return None
    if match.group(1) == "KeyboardInterrupt":
        return KeyboardInterrupt()
    code = (match.group(2) or "").strip()
    return SystemExit(int(code) if code.lstrip("-").isdigit() else code or None)


@contextlib.contextmanager
def held_back() -> Iterator[None]:
    """SIGINT held back while the block runs: a signal that arrives meanwhile is raised
    again, to the handler that was in place, once the block is done. On a thread other
    than the main one, where Python runs no signal handler, nothing changes (nor where
    the handler in place was not set from Python)."""
    main = threading.current_thread() is threading.main_thread()
    previous = _signal.getsignal(signal.SIGINT) if main else None
    if previous is None:  # not the main thread, or a handler not set from Python
        yield
        return
    arrived: list[int] = []
    _signal.signal(signal.SIGINT, lambda signum, _frame: arrived.append(signum))
    try:
        yield
    finally:
        _signal.signal(signal.SIGINT, previous)
        if arrived:
            _signal.raise_signal(signal.SIGINT)
