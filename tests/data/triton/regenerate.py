"""Regenerate the shipped Triton test data (needs triton 3.9.0; no GPU).

    python -m venv /tmp/tritonvenv && /tmp/tritonvenv/bin/pip install 'triton==3.9.0' numpy
    /tmp/tritonvenv/bin/pip install -e '.' # or: the project's deps + PYTHONPATH=.
    /tmp/tritonvenv/bin/python tests/data/triton/regenerate.py

CI uses the files this writes (the triton wheel is ~290 MB), per kernel and arch:

- `<kernel>.<arch>.json`: the import's metadata (signature, grid, configs, Triton's metadata
  per variant) and `raw/<kernel>.<arch>.<variant>.ptx`, Triton's own PTX for each variant:
  enough for `ImportedKernel.load_bundle` to rebuild everything without triton;
- `<kernel>.<arch>.ptx`: the adapted, merged PTX (IREE's CUDA ABI);
- `<kernel>.<arch>.mlir`: the module `iree-autotune import-triton` writes (it names the .ptx).

Plus `scratch.sm_90.json` + raw PTX: a kernel that needs global scratch memory (a device-side
tensor descriptor), which the importer must refuse. Every PTX file is checked with `ptxas`
when it is on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from lowering.triton import (  # noqa: E402
    Config,
    ImportedKernel,
    compile_variants,
    import_triton,
    make_spec,
)

ARCHS = ("sm_80", "sm_90")

KERNELS = {
    "vecadd": dict(
        kernel="examples.triton.vecadd:add_kernel",
        signature="x_ptr=*fp32[n], y_ptr=*fp32[n], output_ptr=*fp32[n], n_elements=i32:n",
        grid="cdiv(n, BLOCK_SIZE)",
        configs="examples.triton.vecadd:CONFIGS",
        samples=["n=1048576"],
    ),
    "matmul": dict(
        kernel="examples.triton.matmul:matmul_kernel",
        signature=(
            "a_ptr=*fp16[M,K], b_ptr=*fp16[K,N], c_ptr=*fp16[M,N], M=i32:M, N=i32:N, K=i32:K, "
            "stride_am=i32:K, stride_ak=1, stride_bk=i32:N, stride_bn=1, stride_cm=i32:N, "
            "stride_cn=1"
        ),
        constexprs={"ACTIVATION": ""},
        grid="cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)",
        samples=["M=512, K=512, N=512"],
    ),
    "softmax": dict(
        kernel="examples.triton.softmax:softmax_kernel",
        signature=(
            "output_ptr=*fp32[R,C], input_ptr=*fp32[R,C], input_row_stride=i32:C, "
            "output_row_stride=i32:C, n_rows=i32:R, n_cols=i32:C"
        ),
        constexprs={"BLOCK_SIZE": 1024, "num_stages": 1},
        require=["C <= BLOCK_SIZE"],
        grid="R",
        configs="examples.triton.softmax:CONFIGS",
        samples=["R=1024, C=1000"],
    ),
}


@triton.jit
def copy_kernel(in_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Copies through a device-side tensor descriptor: Triton then needs 128 bytes of global
    scratch memory per program for the descriptor, which IREE cannot provide."""
    desc = tl.make_tensor_descriptor(
        in_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tile = desc.load([pid_m * BLOCK_M, pid_n * BLOCK_N])
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], tile, mask=mask)


def ptxas_check(ptx: str, arch: str, label: str) -> None:
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return
    gpu = "sm_90a" if arch == "sm_90" else arch
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "in.ptx").write_text(ptx)
        result = subprocess.run(
            [ptxas, f"-arch={gpu}", f"{tmp}/in.ptx", "-o", f"{tmp}/out.cubin"],
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        raise SystemExit(f"ptxas rejects {label}:\n{result.stderr}")


def clean() -> None:
    for path in HERE.glob("*.sm_*.*"):
        if path.suffix in (".json", ".ptx", ".mlir"):
            path.unlink()
    shutil.rmtree(HERE / "raw", ignore_errors=True)


def main() -> int:
    clean()
    for stem, options in KERNELS.items():
        kernels = import_triton(archs=ARCHS, **options)
        for arch, kernel in kernels.items():
            bundle = HERE / f"{stem}.{arch}.json"
            written = kernel.save_bundle(bundle)
            written += kernel.write(HERE / f"{stem}.{arch}.mlir", embed=False)
            # The bundle alone rebuilds the same module.
            again = ImportedKernel.load_bundle(bundle)
            assert again.mlir(f"{stem}.{arch}.ptx") == kernel.mlir(f"{stem}.{arch}.ptx")
            for v in kernel.variants:
                ptxas_check(v.ptx, arch, f"Triton's PTX of {stem} {v.name} ({arch})")
            for path in written:
                if path.suffix == ".ptx":
                    ptxas_check(path.read_text(), arch, str(path))
            print(
                f"{stem} {arch}: {len(kernel.group_variants)} configs, {len(kernel.variants)} exports"
            )

    # A kernel that needs scratch memory: compiled (PTX 8.6 for its TMA instructions) but
    # never adapted; tests check that the importer refuses it.
    spec = make_spec(
        "tests/data/triton/regenerate.py:copy_kernel",
        "in_ptr=*fp16[M,N], out_ptr=*fp16[M,N], M=i32:M, N=i32:N",
        grid=["cdiv(M, BLOCK_M)", "cdiv(N, BLOCK_N)"],
        name="copy_kernel",
    )
    config = triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4)
    variants, skipped = compile_variants(
        copy_kernel, spec, [Config.from_any(config)], "sm_90", ptx_version=86
    )
    scratch = ImportedKernel(spec, "sm_90", variants, skipped, triton.__version__, 86)
    scratch.save_bundle(HERE / "scratch.sm_90.json")
    for v in variants:
        ptxas_check(v.ptx, "sm_90", f"Triton's PTX of {v.name}")
    sizes = [v.metadata["global_scratch_size"] for v in variants]
    assert all(s > 0 for s in sizes), sizes
    print(f"scratch sm_90: global_scratch_size {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
