"""The HAL device a loaded module runs on, with IREE's caching allocator in front of the
device's own.

Every call of a module allocates its results (and, while online tuning explores, the
results of the variant it times and of the reference it is checked against). IREE's
allocator for CPU devices hands such a request to `malloc`; a buffer of 128 KiB or more
is then mapped fresh and its pages are faulted in on first touch, or the heap top is
returned to the system and taken back on the next call. Measured on a 256 KiB result
(local-sync): a variant timed inside an exploring call took 340 us where its own call
takes 60 us. IREE's caching allocator keeps freed buffers and hands them out again, so
a call that allocates what the previous one freed touches no new memory.
"""

from __future__ import annotations

import iree.runtime as rt

CACHING_ALLOCATOR = "caching:*=*;1gib;64"
"""IREE's allocator spec used by default: one pool over the device's first heap that
keeps freed buffers of any size for reuse, at most 1 GiB of memory in all (live and
kept) and at most 64 kept buffers; past either limit requests go to the device's own
allocator."""

_DEVICES: dict[tuple[str, str], rt.HalDevice] = {}


def open_device(uri: str, allocator: str | None = CACHING_ALLOCATOR) -> rt.HalDevice:
    """The device of a driver URI (`local-task`, `cuda://0`), with the allocator spec
    `allocator` (IREE's `--device_allocator` syntax) wrapped around its own; None or ""
    for the device's own allocator alone. One device per (URI, spec) in a process, as
    `iree.runtime.get_device` keeps one per URI."""
    if not allocator:
        return rt.get_device(uri)
    key = (uri, allocator)
    if key not in _DEVICES:
        driver = rt.get_driver(uri)
        try:
            _DEVICES[key] = driver.create_device_by_uri(uri, allocators=[allocator])
        except ValueError as err:
            reason = str(err).split("INVALID_ARGUMENT; ", 1)[-1]  # IREE's words, not its file
            raise ValueError(f"allocator {allocator!r} on {uri}: {reason}") from None
    return _DEVICES[key]
