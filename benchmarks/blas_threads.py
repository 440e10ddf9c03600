"""numpy's BLAS held to a thread count in this process: threadpoolctl where it is
installed, else the OpenBLAS that the process has loaded (numpy's wheels bundle one),
through ctypes, as threadpoolctl does."""

from __future__ import annotations

import contextlib
import ctypes
from pathlib import Path


@contextlib.contextmanager
def blas_threads(count: int):
    """numpy's BLAS held to `count` threads in this process (threadpoolctl, else the
    OpenBLAS that this process has loaded, through ctypes); yields how, or None where it
    cannot be (numpy is then timed in a subprocess with the thread variables set)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(count, user_api="blas"):
            yield "threadpoolctl"
        return
    found = _openblas()
    if found is None:
        yield None
        return
    get, put, label = found
    before = get()
    put(count)
    try:
        yield label
    finally:
        put(before)


def _openblas():
    """(get, set, name) of the thread count of an OpenBLAS loaded in this process."""
    for path in sorted({line.split()[-1] for line in _maps() if "blas" in line.lower()}):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", "_64_", ""):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    return get, put, f"{prefix}_set_num_threads{suffix} ({Path(path).name})"
    return None


def _maps() -> list[str]:
    try:
        return [line for line in Path("/proc/self/maps").read_text().splitlines() if "/" in line]
    except OSError:
        return []
