"""Triton kernels used as `iree-autotune import-triton` examples (needs `iree-autotune[triton]`).

The command in each module's docstring runs from the project's root folder, where
`examples.triton.<module>` is found as `python -m` finds it (tests/test_triton_docs.py runs them).
"""
