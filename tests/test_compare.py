"""Numeric validation (`autotune_runtime.compare`): a variant's result against the
reference's, compared a chunk at a time, with the same answer wherever in the arrays the
difference, the NaN or the largest magnitude lies."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from autotune_runtime.compare import COMPARE_CHUNK, agrees, difference, max_error

SIZE = 2 * COMPARE_CHUNK + 3  # two whole chunks and a short one


@pytest.mark.parametrize("at", [0, COMPARE_CHUNK - 1, COMPARE_CHUNK, SIZE - 1])
def test_a_difference_is_found_in_any_chunk(at):
    want = np.linspace(-1.0, 1.0, SIZE, dtype=np.float32)
    got = want.copy()
    got[at] += 0.5
    largest, scale = difference(got, want)
    assert largest == pytest.approx(np.abs(got - want).max())
    assert scale == pytest.approx(1.0)
    assert not agrees(got, want, 1e-3) and agrees(got, want, 0.6)
    got[at] = np.nan
    assert np.isnan(difference(got, want)[0]) and not agrees(got, want, 1e9)
    assert np.isnan(max_error(got, want))


def test_the_scale_is_the_largest_magnitude_wherever_it_lies_and_ignores_nan():
    want = np.ones(SIZE, np.float32)
    want[SIZE - 2] = -300.0  # in the last, short chunk
    want[5] = np.nan
    got = want + 0.2  # 0.2 / 300 < 1e-3: within the tolerance, relative to the largest
    largest, scale = difference(got, want)
    assert scale == 300.0 and np.isnan(largest)  # the NaN is on both sides: it differs
    want[5] = got[5] = 1.0
    assert agrees(got, want, 1e-3) and not agrees(got, want, 1e-4)


def test_other_types_are_compared_in_float64_without_overflow():
    low = np.full(SIZE, -128, np.int8)
    assert difference(low, np.zeros(SIZE, np.int8)) == (128.0, 0.0)
    counts = np.arange(SIZE, dtype=np.int32)
    off = counts.copy()
    off[SIZE - 1] += 3
    assert difference(off, counts) == (3.0, float(SIZE - 1))
    half = np.full(SIZE, 0.5, np.float16)
    assert difference(half, half.astype(np.float32)) == (0.0, 0.5)


def test_shapes_and_empty_arrays():
    assert not agrees(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), 1.0)
    assert max_error(np.zeros(2, np.float32), np.zeros(3, np.float32)) == np.inf
    empty = np.zeros((0, 4), np.float32)
    assert agrees(empty, empty, 0.0) and max_error(empty, empty) == 0.0


def test_threads_comparing_at_once_each_get_their_own_answer():
    base = np.linspace(0.0, 1.0, SIZE, dtype=np.float32)
    answers: dict[int, float] = {}

    def compare(index: int) -> None:
        got = base.copy()
        got[index * 1000] += index  # each thread its own difference
        for _ in range(20):
            answers[index] = difference(got, base)[0]

    threads = [threading.Thread(target=compare, args=(i,)) for i in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == {i: pytest.approx(float(i)) for i in range(1, 5)}


def test_complex_results_are_compared_part_by_part():
    """A complex result's real and imaginary parts are compared as two floats (before, the
    subtraction into a float64 buffer raised numpy's casting error inside the host)."""
    want = (np.linspace(-1.0, 1.0, SIZE) + 1j * np.linspace(2.0, -2.0, SIZE)).astype(np.complex64)
    got = want.copy()
    assert agrees(got, want, 1e-6)
    got[COMPARE_CHUNK + 1] += 0.5j  # only an imaginary part differs
    largest, scale = difference(got, want)
    assert largest == pytest.approx(0.5) and scale == pytest.approx(2.0)
    assert not agrees(got, want, 0.2) and agrees(got, want, 0.3)
