"""Triton's tutorial fused softmax (02-fused-softmax): its output pointer comes first, so
`iree-autotune import-triton` must bind `input_ptr` (read) before `output_ptr` (written).

Each program handles rows `pid, pid + num_programs, ...`; with the grid `n_rows` every program
handles one row. BLOCK_SIZE must cover a whole row (`n_cols <= BLOCK_SIZE`).

```sh
iree-autotune import-triton examples.triton.softmax:softmax_kernel \
    --signature 'output_ptr=*fp32[R,C], input_ptr=*fp32[R,C], input_row_stride=i32:C,
                 output_row_stride=i32:C, n_rows=i32:R, n_cols=i32:C' \
    --constexpr BLOCK_SIZE=1024 --constexpr num_stages=1 --require 'C <= BLOCK_SIZE' \
    --grid R --configs examples.triton.softmax:CONFIGS --arch sm_80,sm_90 -o softmax.mlir
```
"""

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(
    output_ptr,
    input_ptr,
    input_row_stride,
    output_row_stride,
    n_rows,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
    num_stages: tl.constexpr,
):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


CONFIGS = [
    triton.Config({}, num_warps=4),
    triton.Config({}, num_warps=8),
    triton.Config({}, num_warps=16),
]
