"""Numeric validation: a variant's result against the reference variant's, element by
element, within a tolerance relative to the reference's largest magnitude."""

from __future__ import annotations

import math
import threading

import numpy as np


def agrees(got: np.ndarray, expected: np.ndarray, tolerance: float) -> bool:
    """Whether every element of `got` is within `tolerance` times the largest magnitude of
    `expected` (at least 1) of `expected`'s; a NaN, or an infinity on either side,
    disagrees."""
    if got.shape != expected.shape:
        return False
    if expected.size == 0:
        return True
    largest, scale = difference(got, expected)
    return bool(largest <= tolerance * max(1.0, scale))


def max_error(got: np.ndarray, expected: np.ndarray) -> float:
    """The largest |got - expected| (inf for another shape, NaN where one is not a number)."""
    if got.shape != expected.shape:
        return math.inf
    return difference(got, expected)[0] if expected.size else 0.0


COMPARE_CHUNK = 1 << 16
"""Elements compared at a time, in a buffer of this many kept per thread and element type:
no temporary of the result's size, which a comparison between calls of a model had to map
and fault in afresh (B8's 16 comparisons of up to 256 Ki floats took 3.3-3.5 ms with one,
2.0-2.4 ms so), and each chunk's difference read back from the cache. Arrays of other
types are compared in float64, a chunk at a time (a whole-array float64 temporary took
2.3 ms on 64 Ki floats)."""

_buffers = threading.local()


def _buffer(dtype: np.dtype) -> np.ndarray:
    """This thread's comparison buffer of `dtype` (`COMPARE_CHUNK` elements)."""
    kept = getattr(_buffers, "by_type", None)
    if kept is None:
        kept = _buffers.by_type = {}
    buffer = kept.get(dtype)
    if buffer is None:
        buffer = kept[dtype] = np.empty(COMPARE_CHUNK, dtype)
    return buffer


def warm_up() -> None:
    """Run the comparison once on two tiny arrays: numpy's first use of these ufuncs and
    of `errstate` in a process costs about 0.3 ms, which would otherwise fall into the
    first exploring call that validates a variant."""
    tiny = np.zeros(2, np.float32)
    difference(tiny, tiny)
    difference(tiny, tiny.astype(np.float64))


def difference(got: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    """The largest |got - expected| (NaN when an element's difference is not a number)
    and the largest finite |expected|, over arrays of the same shape. Floats of one type
    are compared in that type; complex numbers part by part (the real and imaginary parts
    as two floats); anything else in float64."""
    a, b = _parts(got.reshape(-1)), _parts(expected.reshape(-1))
    same = a.dtype == b.dtype and a.dtype.kind == "f"
    wide = None if same else np.dtype(np.float64)
    buffer = _buffer(a.dtype if same else wide)
    largest, scale = np.zeros((), buffer.dtype), np.zeros((), buffer.dtype)
    with np.errstate(all="ignore"):  # inf - inf, overflow: a NaN or inf that disagrees
        for start in range(0, b.size, COMPARE_CHUNK):
            x, y = a[start : start + COMPARE_CHUNK], b[start : start + COMPARE_CHUNK]
            out = buffer[: y.size]
            np.subtract(x, y, out=out, dtype=wide)
            np.abs(out, out=out)
            largest = np.maximum(largest, out.max())  # NaN kept
            np.abs(y, out=out, dtype=wide)  # y read again from the cache
            scale = np.fmax(scale, np.fmax.reduce(out))  # NaN ignored: the difference has it
    return float(largest), float(scale)


def _parts(flat: np.ndarray) -> np.ndarray:
    """A flat complex array as the floats of its parts (real, imaginary, ...); any other
    array as it is."""
    if flat.dtype.kind != "c":
        return flat
    return np.ascontiguousarray(flat).view(flat.real.dtype)
