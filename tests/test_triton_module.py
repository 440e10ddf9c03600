"""`import-triton`'s module: the shipped module is what the importer writes, its guarded
exports and generic twins, the entry's dispatch and bindings; compiled for sm_80 and sm_90,
each export's block and shared memory sizes read back from the `.vmfb`; the signatures and
grid expressions it is written from. No GPU and no triton needed: the tests read and compile the shipped data of
tests/data/triton (triton_data.py)."""

from __future__ import annotations

import functools
import re

import pytest
from triton_data import (
    ADAPTED_ORDER,
    ARCHS,
    CASES,
    ROLES,
    TRITON,
    _id,
    bundle,
)
from vmfb_cuda import cuda_exports

from lowering.driver import compile  # noqa: A004 - the project's public name
from lowering.triton import (
    KernelSpec,
    TritonImportError,
    make_spec,
    parse_signature,
)

# Export -> (threads per block, dynamic shared memory bytes), as Triton's metadata says.
EXPECTED_EXPORTS = {
    ("matmul", "sm_80"): {
        "matmul_kernel_0": (256, 98304),
        "matmul_kernel_1": (128, 49152),
        "matmul_kernel_2": (128, 36864),
        "matmul_kernel_3": (64, 24576),
        "matmul_kernel_0_any": (256, 65536),
        "matmul_kernel_1_any": (128, 32768),
        "matmul_kernel_2_any": (128, 16384),
        "matmul_kernel_3_any": (64, 6144),
    },
    ("matmul", "sm_90"): {
        "matmul_kernel_0": (256, 147456),
        "matmul_kernel_1": (128, 65536),
        "matmul_kernel_2": (128, 49152),
        "matmul_kernel_3": (64, 24576),
        "matmul_kernel_0_any": (256, 49152),
        "matmul_kernel_1_any": (128, 16384),
        "matmul_kernel_2_any": (128, 16384),
        "matmul_kernel_3_any": (64, 6144),
    },
    **{
        ("vecadd", arch): {
            f"add_kernel_{i}{suffix}": (threads, 0)
            for i, threads in enumerate((64, 128, 256))
            for suffix in ("", "_any")
        }
        for arch in ARCHS
    },
    **{
        ("softmax", arch): {
            # 4 bytes per warp: the cross-warp max and sum reductions.
            f"softmax_kernel_{i}{suffix}": (threads, threads // 32 * 4)
            for i, threads in enumerate((128, 256, 512))
            for suffix in ("", "_any")
        }
        for arch in ARCHS
    },
}


# --- the module ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_shipped_module_is_what_the_importer_writes(case):
    kernel, arch = case
    text = (TRITON / f"{kernel}.{arch}.mlir").read_text()
    assert bundle(*case).mlir(f"{kernel}.{arch}.ptx") == text
    assert f'#hal.executable.object<{{path = "{kernel}.{arch}.ptx"}}>' in text


def _regions(text: str, kind: str) -> dict[str, tuple[list[str], list[str]]]:
    """Export name -> (argument names, body lines) of its count or condition region."""
    out = {}
    for chunk in text.split("hal.executable.export public @")[1:]:
        name = chunk.split(" ", 1)[0]
        m = re.search(
            kind + r"\(%device: !hal\.device((?:, %\w+: index)*)\) -> [^{]*\{\n(.*?)\n    \}",
            chunk,
            re.S,
        )
        if m:
            out[name] = (re.findall(r"%(\w+): index", m.group(1)), m.group(2).splitlines())
    return out


def _run_region(args: list[str], lines: list[str], values: dict[str, int]) -> list[int]:
    """Interpret the arith ops the importer emits (index arithmetic, compares, and)."""
    env = {f"%{a}": values[a] for a in args}
    ops = {
        "addi": lambda a, b: a + b,
        "subi": lambda a, b: a - b,
        "muli": lambda a, b: a * b,
        "divui": lambda a, b: a // b,
        "remui": lambda a, b: a % b,
        "ceildivui": lambda a, b: -(-a // b),
        "minui": min,
        "maxui": max,
        "andi": lambda a, b: int(bool(a) and bool(b)),
    }
    for line in lines:
        line = line.strip()
        if line.startswith("hal.return"):
            return [env[v] for v in re.findall(r"%\w+", line.split(":")[0])]
        m = re.fullmatch(r"(%\w+) = arith\.constant (-?\d+) : \w+", line)
        if m:
            env[m.group(1)] = int(m.group(2))
            continue
        m = re.fullmatch(r"(%\w+) = arith\.cmpi (\w+), (%\w+), (%\w+) : \w+", line)
        if m:
            a, b = env[m.group(3)], env[m.group(4)]
            env[m.group(1)] = int(
                {"eq": a == b, "ne": a != b, "ule": a <= b, "ult": a < b}[m.group(2)]
            )
            continue
        m = re.fullmatch(r"(%\w+) = arith\.(\w+) (%\w+), (%\w+) : \w+", line)
        assert m, line
        env[m.group(1)] = ops[m.group(2)](env[m.group(3)], env[m.group(4)])
    raise AssertionError("no hal.return")


def test_guarded_exports_are_selected_only_for_aligned_workloads():
    text = (TRITON / "matmul.sm_80.mlir").read_text()
    conditions = _regions(text, "condition")
    counts = _regions(text, "count")
    k = bundle("matmul", "sm_80")
    # Each specialized export checks 16-divisibility and falls back to its generic twin.
    assert sorted(conditions) == [f"matmul_kernel_{i}" for i in range(4)]
    for i in range(4):
        assert f"fallback(@matmul_kernel_{i}_any)" in text
    assert (
        "variants([@matmul_kernel_0, @matmul_kernel_1, @matmul_kernel_2, @matmul_kernel_3])" in text
    )
    for name, (args, lines) in conditions.items():
        assert args == ["M", "K", "N"]
        for M, K, N in [
            (512, 512, 512),
            (16, 32, 48),
            (512, 512, 500),
            (500, 512, 512),
            (512, 1000, 512),
            (1, 1, 1),
            (4096, 4096, 4096),
        ]:
            expected = int(M % 16 == 0 and N % 16 == 0 and K % 16 == 0)
            assert _run_region(args, lines, {"M": M, "K": K, "N": N}) == [expected], (name, M, K, N)
    for v in k.variants:
        args, lines = counts[v.name]
        bm, bn = v.config.kwargs["BLOCK_SIZE_M"], v.config.kwargs["BLOCK_SIZE_N"]
        for M, K, N in [(512, 512, 512), (1000, 7, 300), (1, 1, 1)]:
            grid = _run_region(args, lines, {"M": M, "K": K, "N": N})
            assert grid == [-(-M // bm) * -(-N // bn), 1, 1], (v.name, M, N)


def test_specialized_and_generic_twins_differ_where_it_matters():
    # The 16-divisible vector add loads 4 floats at once; its twin loads one at a time. Running
    # the first on n = 1000 would read and write past n: hence the guard.
    k = bundle("vecadd", "sm_80")
    aligned = next(v for v in k.variants if v.name == "add_kernel_1")
    generic = next(v for v in k.variants if v.name == "add_kernel_1_any")
    assert aligned.divisible == ("n_elements",) and aligned.fallback == "add_kernel_1_any"
    assert generic.divisible == () and generic.fallback is None
    assert "ld.global.v4.b32" in aligned.ptx and "ld.global.v4" not in generic.ptx
    text = (TRITON / "vecadd.sm_80.mlir").read_text()
    args, lines = _regions(text, "condition")["add_kernel_1"]
    assert [_run_region(args, lines, {"n": n})[0] for n in (1000, 1024, 1040, 17)] == [0, 1, 1, 0]


def test_entry_dispatches_the_group_with_bindings_in_iree_order():
    text = (TRITON / "softmax.sm_80.mlir").read_text()
    assert (
        "util.func public @softmax_kernel(%input_ptr: tensor<?x?xf32>) -> tensor<?x?xf32>" in text
    )
    assert (
        "%output_ptr = flow.dispatch @softmax_kernel_exe::@softmax_kernel[%R, %C](%input_ptr, "
        "%input_row_stride_3, %input_row_stride_3, %n_rows_5, %input_row_stride_3)"
    ) in text
    assert (
        "bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, "
        "#hal.pipeline.binding<storage_buffer>]" in text
    )
    assert 'cf.assert %ok1, "requires C <= 1024"' in text
    matmul = (TRITON / "matmul.sm_80.mlir").read_text()
    assert 'cf.assert %ok2, "b_ptr dimension 0 must equal K (a_ptr dimension 1)"' in matmul
    assert "{workloads = [[512, 512, 512]]}" in matmul


# --- compiling for sm_80 and sm_90 ------------------------------------------------------------------


@functools.cache
def compiled(kernel: str, arch: str, policy: str = "online") -> bytes:
    path = TRITON / f"{kernel}.{arch}.mlir"
    return compile(path.read_text(), target="cuda", arch=arch, filename=path, policy=policy)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_compiled_exports_have_triton_block_and_shared_memory_sizes(case):
    kernel, arch = case
    k = bundle(*case)
    exports, ptx = cuda_exports(compiled(*case))
    expected = EXPECTED_EXPORTS[case]
    assert [e.name for e in exports] == [v.name for v in k.variants]
    assert {e.name: (e.block_dims, e.shared_memory) for e in exports} == {
        name: ((threads, 1, 1), shared) for name, (threads, shared) in expected.items()
    }
    for v in k.variants:  # the table above is Triton's metadata
        assert expected[v.name] == (32 * v.metadata["num_warps"], v.metadata["shared"])
    inputs, outputs = ROLES[kernel]
    for e in exports:
        assert e.constant_count == len(ADAPTED_ORDER[kernel]) - len(inputs) - len(outputs)
        assert [f & 1 for f in e.binding_flags] == [1] * len(inputs) + [0] * len(outputs)
    assert ptx == [(TRITON / f"{kernel}.{arch}.ptx").read_text()]


@pytest.mark.parametrize("arch", ARCHS)
def test_static_policy_keeps_the_fallback_of_the_chosen_config(arch):
    exports, _ = cuda_exports(compiled("matmul", arch, "static"))
    assert [e.name for e in exports] == ["matmul_kernel_0", "matmul_kernel_0_any"]


@pytest.mark.parametrize("policy", ["explicit", "init"])
def test_tuning_policies_compile_with_the_sample_workloads(policy):
    exports, _ = cuda_exports(compiled("vecadd", "sm_90", policy))
    assert len(exports) == 6


def test_embedded_ptx_module_compiles(tmp_path):
    k = bundle("vecadd", "sm_80")
    text = k.mlir()
    assert "path =" not in text and "data = dense<[" in text
    vmfb = compile(text, target="cuda", arch="sm_80", policy="online")
    exports, ptx = cuda_exports(vmfb)
    assert ptx == [k.ptx()]
    assert [e.block_dims[0] for e in exports] == [64, 128, 256, 64, 128, 256]


# --- signatures and expressions --------------------------------------------------------------------


def test_signature_parsing():
    args = parse_signature("a=*fp16[M, 64], n=i32:M*64, s=1")
    assert [(a.name, a.kind) for a in args] == [
        ("a", "pointer"),
        ("n", "scalar"),
        ("s", "constant"),
    ]
    assert args[0].tensor_type() == "tensor<?x64xf16>"
    assert args[1].expr.evaluate({"M": 3}) == 192
    with pytest.raises(TritonImportError, match=r"only 32-bit integer push constants"):
        parse_signature("a=*fp32[n], n=i64:n")
    with pytest.raises(TritonImportError, match=r"needs its tensor's shape"):
        parse_signature("a=*fp32")
    with pytest.raises(TritonImportError, match=r"unsupported expression"):
        parse_signature("a=*fp32[n], n=i32:n ** 2")


def test_triton_style_grid_expressions():
    spec = make_spec(
        "m:k",
        "a=*fp16[M,K], b=*fp16[K,N], c=*fp16[M,N]",
        grid="(triton.cdiv(M, META['BLOCK_M']) * triton.cdiv(N, META['BLOCK_N']), )",
    )
    (g,) = spec.grid
    assert g.substitute({"BLOCK_M": 64, "BLOCK_N": 32}).evaluate({"M": 100, "N": 65}) == 2 * 3
    assert spec.dims == ["M", "K", "N"]
    assert KernelSpec.from_json(spec.to_json()) == spec
    with pytest.raises(TritonImportError, match=r"scalar q=Q: Q is not a dimension"):
        make_spec("m:k", "a=*fp16[M], q=i32:Q", grid="M")


def test_dimension_named_like_a_generated_value_does_not_clash():
    from dataclasses import replace

    k = bundle("vecadd", "sm_80")
    spec = make_spec(
        k.spec.kernel,
        "x_ptr=*fp32[c0], y_ptr=*fp32[c0], output_ptr=*fp32[c0], n_elements=i32:c0",
        grid="cdiv(c0, BLOCK_SIZE)",
        name=k.spec.name,
    )
    text = replace(k, spec=spec).mlir("vecadd.sm_80.ptx")
    assert "%c0 = tensor.dim %x_ptr, %c0_ : tensor<?xf32>" in text
    definitions = re.findall(r"^\s+(%\w+) = ", text.split("util.func")[1], re.M)
    assert len(definitions) == len(set(definitions))
    path = TRITON / "vecadd.sm_80.mlir"  # resolves the PTX path against tests/data/triton
    exports, _ = cuda_exports(compile(text, target="cuda", arch="sm_80", filename=path))
    assert len(exports) == 6
