"""`import-triton`: Triton kernels as an autotune group of PTX exports (no GPU, no triton).

The shipped data in tests/data/triton (written by its regenerate.py, which needs triton 3.9.0)
holds Triton's own PTX for each variant (raw/), the bundle metadata (*.json), the adapted and
merged PTX (*.ptx) and the module (*.mlir) for a vector add, the tutorial fp16 matmul and the
tutorial softmax (output pointer first), for sm_80 and sm_90. These tests adapt, merge, write
and compile from those files; only `test_import_with_triton_*` needs triton. The command line's
messages without triton are checked with a `triton` package that fails to import placed first
on PYTHONPATH, so they run whether or not triton is installed; the documented commands run in
test_triton_docs.py.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import DATA
from vmfb_cuda import cuda_exports

from lowering.driver import compile  # noqa: A004 - the project's public name
from lowering.ptx_abi import ScratchMemoryError, adapt_kernel
from lowering.ptx_module import PtxError, parse_module
from lowering.ptx_pointers import PointerAccess, pointer_accesses
from lowering.triton import (
    Config,
    ImportedKernel,
    KernelSpec,
    TritonImportError,
    load_configs,
    make_spec,
    parse_signature,
)
from lowering.triton.loader import load, locate, parse_reference

TRITON = DATA / "triton"
ROOT = Path(__file__).parent.parent
IREE_AUTOTUNE = str(Path(sys.executable).parent / "iree-autotune")
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
TRITON_ORDER = {
    "vecadd": ["x_ptr", "y_ptr", "output_ptr", "n_elements"],
    "matmul": ADAPTED_ORDER["matmul"],
    "softmax": [
        "output_ptr",
        "input_ptr",
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


def bundle_path(kernel: str, arch: str) -> Path:
    return TRITON / f"{kernel}.{arch}.json"


@functools.cache
def bundle(kernel: str, arch: str) -> ImportedKernel:
    return ImportedKernel.load_bundle(bundle_path(kernel, arch))


CASES = [(k, a) for k in KERNELS for a in ARCHS]


def _id(case) -> str:
    return "-".join(case)


def ptxas_arch(arch: str) -> str:
    return "sm_90a" if arch == "sm_90" else arch  # Triton's sm_90 PTX targets sm_90a (wgmma)


# --- the shipped data --------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_shipped_triton_ptx_is_pinned_and_has_scratch_params(case):
    kernel, arch = case
    k = bundle(*case)
    assert k.triton_version == "3.9.0"
    assert len(k.group_variants) == {"vecadd": 3, "matmul": 4, "softmax": 3}[kernel]
    for v in k.variants:
        module = parse_module(v.ptx)
        assert module.version == (8, 0)  # pinned PTX ISA 8.0
        assert module.target == ptxas_arch(arch)
        assert ".loc" not in v.ptx and ".file" not in v.ptx  # no line info
        (entry,) = module.entries
        assert entry.name == k.spec.name  # every config's entry has the same name
        params = [p.name for p in entry.params]
        n = len(TRITON_ORDER[kernel])
        assert params == [f"{entry.name}_param_{i}" for i in range(n + 2)]
        assert [p.type for p in entry.params[n:]] == ["u64", "u64"]  # the scratch pointers
        assert v.metadata["global_scratch_size"] == 0
        assert v.metadata["profile_scratch_size"] == 0
        assert entry.reqntid == (32 * v.metadata["num_warps"], 1, 1)


def test_matmul_has_at_least_three_configs_from_its_decorator():
    spec = bundle("matmul", "sm_80").spec
    configs = [v.config for v in bundle("matmul", "sm_80").group_variants]
    assert len(configs) >= 3
    assert len({tuple(c.kwargs.values()) + (c.num_warps, c.num_stages) for c in configs}) == 4
    assert spec.kernel == "examples.triton.matmul:matmul_kernel"
    source = (ROOT / "examples/triton/matmul.py").read_text()
    assert "@triton.autotune(configs=CONFIGS" in source


# --- the ABI adapter -----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_adapter_reorders_renames_and_drops_scratch(case):
    kernel, arch = case
    k = bundle(*case)
    for v, adapted in zip(k.variants, k.adapted(), strict=True):
        raw = parse_module(v.ptx).entries[0]
        entry = adapted.entry
        assert entry.name == v.name
        assert [p.arg for p in adapted.params] == ADAPTED_ORDER[kernel]
        assert [p.name for p in entry.params] == [
            f"{v.name}_param_{a}" for a in ADAPTED_ORDER[kernel]
        ]
        inputs, outputs = ROLES[kernel]
        assert adapted.inputs == inputs and adapted.outputs == outputs
        # Each parameter keeps its type and qualifiers; the two scratch pointers are gone.
        by_arg = dict(zip(TRITON_ORDER[kernel], raw.params, strict=False))
        for p in adapted.params:
            new = next(q for q in entry.params if q.name == p.name)
            assert (new.type, new.qualifiers) == (by_arg[p.arg].type, by_arg[p.arg].qualifiers)
        assert len(entry.params) == len(raw.params) - 2
        assert f"{raw.name}_param_" not in entry.body
        # The body is Triton's with the parameter names substituted, nothing else.
        expected = raw.body
        for i, a in sorted(enumerate(TRITON_ORDER[kernel]), reverse=True):
            expected = expected.replace(f"{raw.name}_param_{i}", f"{v.name}_param_{a}")
        assert entry.body == expected
        assert entry.directives == raw.directives


def test_adapter_maps_the_written_pointer_after_the_read_one_in_softmax():
    k = bundle("softmax", "sm_80")
    v = k.variants[0]
    adapted = k.adapted()[0]
    assert adapted.accesses == {
        "output_ptr": PointerAccess(read=False, written=True),
        "input_ptr": PointerAccess(read=True, written=False),
    }
    raw_param = {p: i for i, p in enumerate(TRITON_ORDER["softmax"])}
    # The register Triton loaded from param 0 (output) is now loaded from binding 1.
    old = re.search(
        rf"ld\.param\.b64\s+(%rd\d+), \[softmax_kernel_param_{raw_param['output_ptr']}\]", v.ptx
    )
    new = re.search(
        rf"ld\.param\.b64\s+(%rd\d+), \[{v.name}_param_output_ptr\]", adapted.entry.body
    )
    assert old and new and old.group(1) == new.group(1)
    assert [p.name for p in adapted.entry.params[:2]] == [
        f"{v.name}_param_input_ptr",
        f"{v.name}_param_output_ptr",
    ]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_shipped_merged_ptx_is_what_the_adapter_writes(case):
    kernel, arch = case
    k = bundle(*case)
    text = (TRITON / f"{kernel}.{arch}.ptx").read_text()
    assert k.ptx() == text
    merged = parse_module(text)
    assert [e.name for e in merged.entries] == [v.name for v in k.variants]
    assert text.count(".version ") == 1 and text.count(".target ") == 1
    # One copy of Triton's dynamic shared memory (the vector add uses none).
    smem = () if kernel == "vecadd" else (".extern .shared .align 16 .b8 global_smem[];",)
    assert merged.declarations == smem


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not on PATH")
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_ptxas_accepts_adapted_ptx(case, tmp_path):
    kernel, arch = case
    k = bundle(*case)
    path = tmp_path / "k.ptx"
    path.write_text(k.ptx())
    result = subprocess.run(
        ["ptxas", f"-arch={ptxas_arch(arch)}", "-v", str(path), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
        check=False,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    compiled = re.findall(r"Compiling entry function '(\w+)'", log)
    assert sorted(compiled) == sorted(v.name for v in k.variants)
    assert (tmp_path / "k.cubin").stat().st_size > 0


# --- pointer analysis on small hand-written kernels ----------------------------------------

_HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _kernel(params: list[str], body: str, name: str = "k") -> str:
    decls = ",\n".join(
        f"\t.param .u64 .ptr .global .align 1 {name}_param_{i}"
        if t == "p"
        else f"\t.param .u32 {name}_param_{i}"
        for i, t in enumerate(params)
    )
    return f"{_HEADER}\n.visible .entry {name}(\n{decls}\n)\n.reqntid 32\n{{\n{body}\n}}\n"


def test_cvta_chains_and_atomics_mark_pointers():
    # nvcc-style: ld.param -> cvta.to.global -> add; out written by an atomic (read too),
    # dst by a generic store; src only loaded.
    body = """
\t.reg .b64 %rd<12>;
\t.reg .b32 %r<4>;
\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tld.param.u64 %rd3, [k_param_2];
\tcvta.to.global.u64 %rd4, %rd1;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd5, %r1, 4;
\tadd.s64 %rd6, %rd4, %rd5;
\tld.global.u32 %r2, [%rd6];
\tcvta.to.global.u64 %rd7, %rd2;
\tadd.s64 %rd8, %rd7, %rd5;
\tst.u32 [%rd8+4], %r2;
\tcvta.to.global.u64 %rd9, %rd3;
\tatom.global.add.u32 %r3, [%rd9], %r2;
\tret;"""
    entry = parse_module(_kernel(["p", "p", "p"], body)).entries[0]
    acc = pointer_accesses(entry)
    assert acc == {
        "k_param_0": PointerAccess(read=True, written=False),
        "k_param_1": PointerAccess(read=False, written=True),
        "k_param_2": PointerAccess(read=True, written=True),
    }


def test_loaded_data_does_not_carry_its_address():
    # out[idx[i]] = 1: the store address derives from out (and from data loaded via idx,
    # which is not an address of idx), so only out is written.
    body = """
\t.reg .b64 %rd<8>;
\t.reg .b32 %r<4>;
\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tld.global.u32 %r1, [%rd1];
\tmul.wide.u32 %rd3, %r1, 4;
\tadd.s64 %rd4, %rd2, %rd3;
\tmov.u32 %r2, 1;
\t@%p1 st.global.u32 [ %rd4 + 0 ], %r2;
\tret;"""
    entry = parse_module(_kernel(["p", "p"], body)).entries[0]
    acc = pointer_accesses(entry)
    assert acc["k_param_0"] == PointerAccess(read=True, written=False)
    assert acc["k_param_1"] == PointerAccess(read=False, written=True)


def test_output_first_kernel_is_reordered_by_its_stores():
    body = """
\t.reg .b64 %rd<8>;
\t.reg .b32 %r<4>;
\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tld.param.u32 %r3, [k_param_2];
\tld.global.u32 %r1, [%rd2];
\tst.global.u32 [%rd1], %r1;
\tret;"""
    ptx = _kernel(["p", "p", "s", "p", "p"], body)
    adapted = adapt_kernel(ptx, "copy_0", ["out", "src", "n"])
    assert [(p.arg, p.role) for p in adapted.params] == [
        ("src", "input"),
        ("out", "output"),
        ("n", "scalar"),
    ]
    assert "ld.param.u64 %rd1, [copy_0_param_out];" in adapted.entry.text()
    assert "ld.param.u64 %rd2, [copy_0_param_src];" in adapted.entry.text()
    # Declared outputs agree with the stores: same result.
    assert (
        adapted.params == adapt_kernel(ptx, "copy_0", ["out", "src", "n"], outputs=["out"]).params
    )
    # Declaring the other pointer as the output would bind a written buffer read-only.
    with pytest.raises(PtxError, match=r"stores through out, which is not declared"):
        adapt_kernel(ptx, "copy_0", ["out", "src", "n"], outputs=["src"])


def test_ambiguous_and_in_place_pointers_are_refused():
    ambiguous = """
\t.reg .b64 %rd<8>;
\t.reg .pred %p<2>;
\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tselp.b64 %rd3, %rd1, %rd2, %p1;
\tst.global.u32 [%rd3], 0;
\tret;"""
    with pytest.raises(PtxError, match=r"derives from several pointer parameters"):
        adapt_kernel(_kernel(["p", "p", "p", "p"], ambiguous), "k2", ["a", "b"])
    in_place = """
\t.reg .b64 %rd<4>;
\t.reg .b32 %r<2>;
\tld.param.u64 %rd1, [k_param_0];
\tld.global.u32 %r1, [%rd1];
\tst.global.u32 [%rd1], %r1;
\tret;"""
    with pytest.raises(PtxError, match=r"reads and writes x \(in place\)"):
        adapt_kernel(_kernel(["p", "p", "p"], in_place), "k3", ["x"])


def test_signature_mismatch_is_reported():
    k = bundle("vecadd", "sm_80")
    with pytest.raises(PtxError, match=r"has 6 \.param entries, expected 5"):
        adapt_kernel(k.variants[0].ptx, "v", ["x_ptr", "y_ptr", "n_elements"])


# --- scratch memory is refused ----------------------------------------------------------------


def test_kernel_needing_scratch_memory_is_refused():
    k = ImportedKernel.load_bundle(TRITON / "scratch.sm_90.json")
    assert all(v.metadata["global_scratch_size"] == 128 for v in k.variants)
    with pytest.raises(ScratchMemoryError) as err:
        k.adapted()
    message = str(err.value)
    assert "copy_kernel needs 128 bytes of global scratch memory" in message
    assert "global_scratch_size = 128" in message
    assert "IREE's CUDA ABI" in message and "cannot provide scratch memory" in message


def test_scratch_pointer_read_by_the_body_is_refused_even_with_zero_metadata():
    k = ImportedKernel.load_bundle(TRITON / "scratch.sm_90.json")
    ptx = k.variants[0].ptx
    assert "[copy_kernel_param_4]" in ptx  # the descriptor lives in global scratch
    with pytest.raises(ScratchMemoryError, match=r"reads its global scratch pointer"):
        adapt_kernel(ptx, "copy", ["in_ptr", "out_ptr", "M", "N"])


def test_cli_refuses_scratch_kernel_and_writes_nothing(tmp_path):
    out = tmp_path / "copy.mlir"
    result = subprocess.run(
        [
            IREE_AUTOTUNE,
            "import-triton",
            "--from-bundle",
            str(TRITON / "scratch.sm_90.json"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "error: kernel copy_kernel needs 128 bytes of global scratch memory" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


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


# --- the command line ------------------------------------------------------------------------------


def _cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IREE_AUTOTUNE, "import-triton", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=env,
    )


def test_cli_rebuilds_from_bundles_per_arch(tmp_path):
    result = _cli(
        "--from-bundle",
        str(bundle_path("vecadd", "sm_80")),
        "--from-bundle",
        str(bundle_path("vecadd", "sm_90")),
        "-o",
        str(tmp_path / "vecadd.mlir"),
        "--ptx-file",
    )
    assert result.returncode == 0, result.stderr
    for arch in ARCHS:
        mlir = tmp_path / f"vecadd.{arch}.mlir"
        assert mlir.read_text() == bundle("vecadd", arch).mlir(f"vecadd.{arch}.ptx")
        assert (tmp_path / f"vecadd.{arch}.ptx").read_text() == (
            TRITON / f"vecadd.{arch}.ptx"
        ).read_text()
    assert not (tmp_path / "vecadd.mlir").exists()


def test_broken_bundles_are_one_line_errors(tmp_path):
    shutil.copytree(TRITON / "raw", tmp_path / "raw")
    data = json.loads(bundle_path("vecadd", "sm_80").read_text())
    del data["spec"]
    (tmp_path / "nospec.json").write_text(json.dumps(data))
    data = json.loads(bundle_path("vecadd", "sm_80").read_text())
    data["variants"][0]["ptx"] = "bad.ptx.gz"
    (tmp_path / "bad.ptx.gz").write_bytes(b"not gzip")
    (tmp_path / "badptx.json").write_text(json.dumps(data))
    for name, message in [
        ("nospec.json", f"{tmp_path / 'nospec.json'} is not a valid bundle (no 'spec')"),
        ("badptx.json", f"cannot read {tmp_path / 'bad.ptx.gz'}: Not a gzipped file (b'no')"),
    ]:
        result = _cli("--from-bundle", str(tmp_path / name), "-o", str(tmp_path / "out.mlir"))
        assert (result.returncode, result.stderr) == (1, f"error: {message}\n")
    assert not (tmp_path / "out.mlir").exists()


def _triton_installed() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


MATMUL_ARGS = (
    "--signature",
    "a_ptr=*fp16[M,K], b_ptr=*fp16[K,N], c_ptr=*fp16[M,N], M=i32:M, N=i32:N, K=i32:K, "
    "stride_am=i32:K, stride_ak=1, stride_bk=i32:N, stride_bn=1, stride_cm=i32:N, stride_cn=1",
    "--grid",
    "cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)",
)
VECADD_ARGS = (
    "--signature",
    "x_ptr=*fp32[n], y_ptr=*fp32[n], output_ptr=*fp32[n], n_elements=i32:n",
    "--grid",
    "cdiv(n, BLOCK_SIZE)",
)
NO_TRITON = (
    "error: triton is not installed: install iree-autotune[triton] "
    "(pip install 'iree-autotune[triton]', triton==3.9.0)\n"
)


@pytest.fixture
def without_triton(tmp_path) -> dict[str, str]:
    """An environment in which `import triton` fails, whether or not triton is installed."""
    shadow = tmp_path / "no-triton"
    (shadow / "triton").mkdir(parents=True)
    (shadow / "triton" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'triton'\", name='triton')\n"
    )
    return {**os.environ, "PYTHONPATH": str(shadow)}


@pytest.mark.parametrize(
    "kernel", ["examples.triton.matmul:matmul_kernel", "examples/triton/matmul.py:matmul_kernel"]
)
def test_cli_finds_the_kernel_from_the_current_folder_then_asks_for_triton(
    kernel, tmp_path, without_triton
):
    out = tmp_path / "matmul.mlir"
    result = _cli(kernel, *MATMUL_ARGS, "-o", str(out), cwd=ROOT, env=without_triton)
    assert (result.returncode, result.stderr) == (1, NO_TRITON)
    assert not out.exists()
    # The same command where no examples/ folder is: the kernel is looked up from there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = _cli(kernel, *MATMUL_ARGS, "-o", str(out), cwd=elsewhere, env=without_triton)
    assert result.returncode == 1
    if ":" in kernel and "/" not in kernel:
        assert result.stderr == (
            f"error: {kernel}: no module named 'examples' in the current folder ({elsewhere}) "
            "or on the Python path; run from the folder that holds it, or give "
            "path/to/file.py:matmul_kernel\n"
        )
    else:
        assert result.stderr == f"error: {kernel}: no file examples/triton/matmul.py\n"


@pytest.mark.parametrize(
    ("kernel", "extra", "message"),
    [
        (
            "examples.triton.vecadd",
            (),
            "kernel 'examples.triton.vecadd': expected module.path:NAME or path/to/file.py:NAME",
        ),
        (
            "examples.triton.vecadd:1st",
            (),
            "kernel 'examples.triton.vecadd:1st': expected module.path:NAME or "
            "path/to/file.py:NAME",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "CONFIGS"),
            "--configs 'CONFIGS': expected a JSON list, FILE.json, module.path:NAME or "
            "path/to/file.py:NAME",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "missing.json"),
            "--configs: cannot read missing.json: No such file or directory",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", '[{"BLOCK_SIZE": 256'),
            "--configs: the text is not valid JSON: Expecting ',' delimiter: line 1 column 20 "
            "(char 19)",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", '[{"BLOCK_SIZE": 256, "num_warps": "two"}]'),
            "config option num_warps='two': expected an integer",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "examples/triton/configs.py:CONFIGS"),
            "examples/triton/configs.py:CONFIGS: no file examples/triton/configs.py",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "examples.triton.tuning:CONFIGS"),
            "examples.triton.tuning:CONFIGS: no module named 'examples.triton.tuning' in the "
            f"current folder ({ROOT}) or on the Python path; run from the folder that holds "
            "it, or give path/to/file.py:CONFIGS",
        ),
    ],
)
def test_bad_kernel_and_config_specs_are_one_line_errors(
    kernel, extra, message, tmp_path, without_triton
):
    out = tmp_path / "vecadd.mlir"
    result = _cli(kernel, *VECADD_ARGS, *extra, "-o", str(out), cwd=ROOT, env=without_triton)
    assert (result.returncode, result.stderr) == (1, f"error: {message}\n")
    assert not out.exists()


def test_configs_from_json_files_and_python_files(tmp_path, monkeypatch):
    configs = [{"BLOCK_SIZE": 256, "num_warps": 2}, {"kwargs": {"BLOCK_SIZE": 64}, "num_stages": 1}]
    expected = [Config({"BLOCK_SIZE": 256}, num_warps=2), Config({"BLOCK_SIZE": 64}, num_stages=1)]
    (tmp_path / "configs.json").write_text(json.dumps(configs))
    monkeypatch.chdir(tmp_path)
    assert load_configs("configs.json") == expected
    assert load_configs("@configs.json") == expected
    assert load_configs(json.dumps(configs)) == expected
    assert load_configs(json.dumps(configs[0])) == expected[:1]
    # A Python list of dicts, by module path (from the current folder) or file path.
    (tmp_path / "tuning").mkdir()
    (tmp_path / "tuning" / "__init__.py").write_text("")
    (tmp_path / "tuning" / "sets.py").write_text(f"CONFIGS = {configs!r}\nOTHER = 3\n")
    (tmp_path / "broken.py").write_text("CONFIGS = [\n")
    path_before = list(sys.path)
    try:
        for ref in ("tuning.sets:CONFIGS", "tuning/sets.py:CONFIGS"):
            found = parse_reference(ref, "--configs")
            locate(found)
            assert [Config.from_any(c) for c in load(found)] == expected
            assert sys.path == path_before
        with pytest.raises(TritonImportError, match=r"tuning.sets has no attribute 'MISSING'$"):
            load(parse_reference("tuning.sets:MISSING", "--configs"))
        with pytest.raises(TritonImportError, match=r"cannot load broken.py: SyntaxError: "):
            load(parse_reference("broken.py:CONFIGS", "--configs"))
        assert sys.path == path_before
    finally:
        for name in ("tuning", "tuning.sets", "sets"):
            sys.modules.pop(name, None)


def test_triton_extra_is_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["triton"] == ["triton==3.9.0"]


@pytest.mark.skipif(
    not _triton_installed(), reason="triton not installed (pip install iree-autotune[triton])"
)
@pytest.mark.parametrize("arch", ARCHS)
def test_import_with_triton_reproduces_shipped_vecadd(arch):
    from lowering.triton import import_triton

    shipped = bundle("vecadd", arch)
    spec = shipped.spec
    (k,) = import_triton(
        spec.kernel,
        [a.spec() for a in spec.args],
        grid=[g.text for g in spec.grid],
        configs="examples.triton.vecadd:CONFIGS",
        archs=(arch,),
        samples=spec.samples,
    ).values()
    assert k.ptx() == shipped.ptx()
    assert k.mlir("x.ptx") == shipped.mlir("x.ptx")


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
