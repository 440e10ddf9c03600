"""Triton kernels used as `iree-autotune import-triton` examples (needs `iree-autotune[triton]`)."""
