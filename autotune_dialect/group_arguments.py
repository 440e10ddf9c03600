"""The Python arguments of `GroupOp(...)` as the group's properties.

Each argument is checked for its Python type (and an integer for i64's range) before it
becomes an attribute, so that a wrong one is a `TypeError` or `ValueError` that names it
where the group is built, not an error deep in xDSL, the lowering or IREE. Values of the
right type but out of a parameter's range (`min_samples=0`) are the verifier's to report
(`group_parameters.verify_parameters`), as for a group read from text.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    f64,
    i1,
    i64,
)

I64_RANGE = (-(2**63), 2**63 - 1)
"""The values an i64 attribute holds (what a group's integer parameters are)."""


def _given(value: object) -> str:
    return f"{type(value).__name__} ({value!r})"


def string_argument(key: str, value: object) -> StringAttr:
    if not isinstance(value, str):
        raise TypeError(f"GroupOp argument '{key}' must be a str, not {_given(value)}")
    return StringAttr(value)


def symbol_argument(key: str, value: object) -> SymbolRefAttr:
    """A variant's name (`"v1"`) as its symbol (`@v1`)."""
    return SymbolRefAttr(string_argument(key, value))


def variants_argument(value: object) -> ArrayAttr[SymbolRefAttr]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(
            f"GroupOp argument 'variants' must be a sequence of variant names, not {_given(value)}"
        )
    return ArrayAttr([symbol_argument("variants", name) for name in value])


def integer_argument(key: str, value: object) -> IntegerAttr:
    """An integer (not a bool) that i64 holds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"GroupOp argument '{key}' must be an int, not {_given(value)}")
    number = int(value)
    low, high = I64_RANGE
    if not low <= number <= high:
        raise ValueError(
            f"GroupOp argument '{key}' = {number} is out of range for i64 ({low} to {high})"
        )
    return IntegerAttr(number, i64)


def float_argument(key: str, value: object) -> FloatAttr:
    """A real number (an int or a float, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"GroupOp argument '{key}' must be a float, not {_given(value)}")
    return FloatAttr(float(value), f64)


def bool_argument(key: str, value: object) -> IntegerAttr:
    if not isinstance(value, bool):
        raise TypeError(f"GroupOp argument '{key}' must be a bool, not {_given(value)}")
    return IntegerAttr(int(value), i1)


def workloads_argument(value: object) -> ArrayAttr:
    """Sample workloads: a sequence of sequences of integers."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(
            "GroupOp argument 'workloads' must be a sequence of workloads (sequences of "
            f"ints), not {_given(value)}"
        )
    samples = []
    for sample in value:
        if isinstance(sample, str) or not isinstance(sample, Sequence):
            raise TypeError(
                f"GroupOp argument 'workloads' must hold sequences of ints, not {_given(sample)}"
            )
        samples.append(ArrayAttr([integer_argument("workloads", w) for w in sample]))
    return ArrayAttr(samples)
