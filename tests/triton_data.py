"""The shipped Triton data in tests/data/triton and what the `import-triton` tests expect of
it: its kernels and archs, the bundles, each kernel's adapted parameter order and pointer
roles.

The data (written by tests/data/triton/regenerate.py, which needs triton 3.9.0) holds
Triton's own PTX for each variant (raw/), the bundle metadata (*.json), the adapted and
merged PTX (*.ptx) and the module (*.mlir) for a vector add, the tutorial fp16 matmul and the
tutorial softmax (output pointer first), for sm_80 and sm_90.
"""

from __future__ import annotations

import functools
from pathlib import Path

from conftest import DATA

from lowering.triton import ImportedKernel

TRITON = DATA / "triton"
ARCHS = ("sm_80", "sm_90")
KERNELS = ("vecadd", "matmul", "softmax")

# The adapted parameter order per kernel: read pointers, written pointers, then scalars.
ADAPTED_ORDER = {
    "vecadd": ["x_ptr", "y_ptr", "output_ptr", "n_elements"],
    "matmul": ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"],
    # Triton's order is (output_ptr, input_ptr, ...): the written pointer moves after the read one.
    "softmax": [
        "input_ptr",
        "output_ptr",
        "input_row_stride",
        "output_row_stride",
        "n_rows",
        "n_cols",
    ],
}
ROLES = {
    "vecadd": (["x_ptr", "y_ptr"], ["output_ptr"]),
    "matmul": (["a_ptr", "b_ptr"], ["c_ptr"]),
    "softmax": (["input_ptr"], ["output_ptr"]),
}


def bundle_path(kernel: str, arch: str) -> Path:
    return TRITON / f"{kernel}.{arch}.json"


@functools.cache
def bundle(kernel: str, arch: str) -> ImportedKernel:
    return ImportedKernel.load_bundle(bundle_path(kernel, arch))


CASES = [(k, a) for k in KERNELS for a in ARCHS]


def _id(case) -> str:
    return "-".join(case)
