"""What a module's Python callables say of arguments that do not fit, and what `load`
says of a file that is not a module: the argument, the declared type and what was given
(IREE itself says `FAILED_PRECONDITION` or `ref type mismatch`)."""

from __future__ import annotations

import numpy as np
import pytest
from modules import tagged_module

from autotune_runtime.session import load
from lowering.driver import compile


@pytest.fixture(scope="module")
def module():
    with load(
        compile(tagged_module(group_attrs='{policy = "static"}')), "local-sync", cache=False
    ) as m:
        yield m


@pytest.mark.parametrize(
    "arg, error, message",
    [
        (
            2.0,
            TypeError,
            "argument 0 of run is a tensor<16xf32>; got float 2.0 (pass a numpy array)",
        ),
        ([0.0] * 2, TypeError, "argument 0 of run is a tensor<16xf32>; got list [0.0, 0.0]"),
        (np.float32(1), TypeError, "argument 0 of run is a tensor<16xf32>; got the f32 scalar 1.0"),
        (
            np.zeros(8, np.float32),
            ValueError,
            "argument 0 of run is a tensor<16xf32>; got an array of shape 8",
        ),
        (
            np.zeros((16, 1), np.float32),
            ValueError,
            "argument 0 of run is a tensor<16xf32>; got an array of shape 16x1",
        ),
        (
            np.zeros(16, np.int32),
            TypeError,
            "argument 0 of run is a tensor<16xf32>; got an array of i32 elements",
        ),
    ],
    ids=["float", "list", "numpy scalar", "shape", "rank", "element type"],
)
def test_a_value_that_is_not_an_array_of_the_declared_type_names_the_argument(
    module, arg, error, message
):
    with pytest.raises(error) as info:
        module.function("run")(arg)
    assert str(info.value).startswith(message)


def test_an_array_of_the_declared_type_runs(module):
    np.testing.assert_array_equal(module.function("run")(np.zeros(16, np.float32)), np.ones(16))


def test_load_of_a_file_that_is_not_a_module_says_so(tmp_path):
    path = tmp_path / "notes.vmfb"
    path.write_text("these are notes, not a module")
    with pytest.raises(ValueError) as info:
        load(path, "local-sync", cache=False)
    assert str(info.value).startswith(f"{path} is not a compiled IREE module (.vmfb): ")
    assert "Error creating vm module" not in str(info.value)
    with pytest.raises(ValueError, match=r"^the 5 bytes are not a compiled IREE module \(\.vmfb\)"):
        load(b"hello", "local-sync", cache=False)
