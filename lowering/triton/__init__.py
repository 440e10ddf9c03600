"""Triton kernels as an autotune group of PTX exports (`iree-autotune import-triton`).

```python
from lowering.triton import import_triton
kernels = import_triton("examples.triton.matmul:matmul_kernel", signature=..., grid=...,
                        constexprs={"ACTIVATION": ""}, archs=("sm_80", "sm_90"))
kernels["sm_80"].mlir()          # the module text (PTX embedded), or .write("matmul.mlir")
```

Each config (from the kernel's `@triton.autotune` decorator, or given) is compiled to PTX by
triton without a GPU, adapted to IREE's CUDA ABI by `lowering.ptx_abi` and merged into one PTX
module. The `.mlir` holds a `hal.executable.source` with one export per config, an
`autotune.group` over them and a `util.func` that dispatches the group; docs/triton.md has the
details. The modules, by job:

- `signature`: the signature language, expressions and `KernelSpec` (`make_spec`);
- `variants`: configs and the variants compiled from them;
- `loader`: `module.path:NAME` and `path/to/file.py:NAME` on the command line;
- `compile`: triton's compilation (`import_triton`), the only module that needs triton;
- `emit`: the `.mlir` module;
- `bundle`: `ImportedKernel`, its PTX, module and bundle files (rebuilt without triton);
- `cli`: the `import-triton` command (`add_command`).
"""

from typing import TYPE_CHECKING

from autotune_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from lowering.triton.bundle import BUNDLE_FORMAT, ImportedKernel
    from lowering.triton.cli import add_command
    from lowering.triton.compile import (
        compile_variants,
        import_triton,
        load_configs,
        load_kernel,
    )
    from lowering.triton.signature import (
        KernelSpec,
        TritonImportError,
        make_spec,
        parse_signature,
    )
    from lowering.triton.variants import PTX_VERSION, TRITON_VERSION, Config, Variant

__getattr__ = lazy_exports(
    globals(),
    {
        **dict.fromkeys(["BUNDLE_FORMAT", "ImportedKernel"], "lowering.triton.bundle"),
        "add_command": "lowering.triton.cli",
        **dict.fromkeys(
            ["compile_variants", "import_triton", "load_configs", "load_kernel"],
            "lowering.triton.compile",
        ),
        **dict.fromkeys(
            ["KernelSpec", "TritonImportError", "make_spec", "parse_signature"],
            "lowering.triton.signature",
        ),
        **dict.fromkeys(
            ["PTX_VERSION", "TRITON_VERSION", "Config", "Variant"], "lowering.triton.variants"
        ),
    },
)

__all__ = [
    "BUNDLE_FORMAT",
    "PTX_VERSION",
    "TRITON_VERSION",
    "Config",
    "ImportedKernel",
    "KernelSpec",
    "TritonImportError",
    "Variant",
    "add_command",
    "compile_variants",
    "import_triton",
    "load_configs",
    "load_kernel",
    "make_spec",
    "parse_signature",
]
