"""Triton's tutorial vector add (01-vector-add), without `@triton.autotune`: its configs are
given explicitly to `iree-autotune import-triton` (see `CONFIGS`).

```sh
iree-autotune import-triton examples.triton.vecadd:add_kernel \
    --signature 'x_ptr=*fp32[n], y_ptr=*fp32[n], output_ptr=*fp32[n], n_elements=i32:n' \
    --grid 'cdiv(n, BLOCK_SIZE)' --configs examples.triton.vecadd:CONFIGS \
    --arch sm_80,sm_90 -o vecadd.mlir
```
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


CONFIGS = [
    triton.Config({"BLOCK_SIZE": 256}, num_warps=2),
    triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
    triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
]
