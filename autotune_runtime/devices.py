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
import numpy as np

CACHING_ALLOCATOR = "caching:*=*;1gib;64"
"""IREE's allocator spec used by default: one pool over the device's first heap that
keeps freed buffers of any size for reuse, at most 1 GiB of memory in all (live and
kept) and at most 64 kept buffers; past either limit requests go to the device's own
allocator."""

UNCACHED_DRIVERS = frozenset({"vulkan"})
"""Drivers that IREE 3.13's caching allocator cannot serve, so `open_device` gives them
their own allocator alone: on Vulkan it refuses every queue-ordered allocation a module
makes ("allocator cannot allocate a Vulkan buffer with the given parameters;
memory_type=DEVICE_LOCAL, usage=TRANSFER|DISPATCH_STORAGE; while invoking native function
hal.device.queue.alloca"), whatever its limits."""

_DEVICES: dict[tuple[str, str], rt.HalDevice] = {}


def open_device(uri: str, allocator: str | None = CACHING_ALLOCATOR) -> rt.HalDevice:
    """The device of a driver URI (`local-task`, `cuda://0`), with the allocator spec
    `allocator` (IREE's `--device_allocator` syntax) wrapped around its own; None or ""
    for the device's own allocator alone. One device per (URI, spec) in a process, as
    `iree.runtime.get_device` keeps one per URI. On a driver of `UNCACHED_DRIVERS` the
    default spec is left out, and another caching spec is an error that says why."""
    allocator = _usable_allocator(uri, allocator)
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


def _usable_allocator(uri: str, allocator: str | None) -> str | None:
    """`allocator`, less the default caching spec on a driver of `UNCACHED_DRIVERS`; a
    caching spec given for one is a `ValueError`."""
    driver_name = uri.split(":", 1)[0]
    if driver_name not in UNCACHED_DRIVERS or not allocator:
        return allocator
    if allocator == CACHING_ALLOCATOR:
        return None
    if allocator.split(":", 1)[0] == "caching":
        raise ValueError(
            f"allocator {allocator!r} on {uri}: IREE's caching allocator cannot serve "
            f"{driver_name}'s queue-ordered allocations; use allocator=None"
        )
    return allocator


STAGED_DRIVERS = frozenset({"vulkan"})
"""Drivers whose device-local buffers are read back through a staging buffer. IREE's
own read-back (`DeviceArray.to_host`) imports the numpy array it fills where the
allocator says it can import host memory, and Vulkan imports only memory whose address
and size are multiples of the device's `minImportedHostPointerAlignment` (4096 on
Mesa's llvmpipe): any other array is refused ("host allocation import pointer does not
satisfy Vulkan minImportedHostPointerAlignment 4096")."""

_STAGING_MEMORY = rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE
_STAGING_USAGE = rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED


def read_back(
    device: rt.HalDevice, value: rt.DeviceArray | rt.HalBufferView, copy: bool = True
) -> np.ndarray:
    """A device array's (or a buffer view's) contents as a numpy array, whatever memory its
    buffer is in: a buffer the host can map is read from its mapping (with `copy=False`
    the array is a view of the mapping, kept alive by it); a device-local one on a driver
    of `STAGED_DRIVERS` is copied on the device's queue into a host-visible staging
    buffer first; any other goes through IREE's own read-back. Only a view of a mapping
    shares memory with the device: every other result owns its data."""
    if isinstance(value, rt.DeviceArray):
        view, dtype = value._buffer_view, np.dtype(value.dtype)  # noqa: SLF001 - no accessor
    else:
        view, dtype = value, np.dtype(rt.HalElementType.map_to_dtype(value.element_type))
    raw = np.dtype(rt.HalElementType.map_to_dtype(view.element_type))
    buffer = view.get_buffer()
    if _mappable(buffer):
        contents = np.array(view.map().asarray(list(view.shape), raw), copy=copy)
    elif str(device) in STAGED_DRIVERS:
        contents = _staged_copy(device, buffer, list(view.shape), raw)
    else:
        contents = np.array(rt.DeviceArray(device, view).to_host(), copy=copy)
    return contents.astype(dtype, copy=False)


def _mappable(buffer: rt.HalBuffer) -> bool:
    visible = buffer.memory_type() & int(rt.MemoryType.HOST_VISIBLE)
    mapping = buffer.allowed_usage() & int(rt.BufferUsage.MAPPING_SCOPED)
    return visible == int(rt.MemoryType.HOST_VISIBLE) and mapping == int(
        rt.BufferUsage.MAPPING_SCOPED
    )


def _staged_copy(
    device: rt.HalDevice, buffer: rt.HalBuffer, shape: list[int], dtype: np.dtype
) -> np.ndarray:
    """`buffer` copied by the device's queue into a host-local staging buffer the device
    can write (allocated by the device, so it meets the device's alignment rules), then
    out of its mapping into a numpy array."""
    staging = device.allocator.allocate_buffer(
        memory_type=int(_STAGING_MEMORY),
        allowed_usage=int(_STAGING_USAGE),
        allocation_size=buffer.byte_length(),
    )
    semaphore = device.create_semaphore(0)
    device.queue_copy(
        buffer,
        staging,
        wait_semaphores=rt.HalFence.create_at(semaphore, 0),
        signal_semaphores=rt.HalFence.create_at(semaphore, 1),
    )
    rt.HalFence.create_at(semaphore, 1).wait()
    mapping = staging.map()
    return np.array(mapping.asarray(shape, dtype), copy=True)
