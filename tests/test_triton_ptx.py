"""`import-triton`'s PTX side: the shipped Triton PTX is pinned and has the scratch
parameters, the ABI adapter reorders, renames and drops them (ptxas accepts the result),
pointer analysis on small hand-written kernels, and kernels that need scratch memory
refused. No GPU and no triton needed: the tests read and compile the shipped data of
tests/data/triton (triton_data.py)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from conftest import IREE_AUTOTUNE, ROOT
from triton_data import (
    ADAPTED_ORDER,
    CASES,
    ROLES,
    TRITON,
    _id,
    bundle,
)

from lowering.ptx_abi import ScratchMemoryError, adapt_kernel
from lowering.ptx_module import PtxError, parse_module
from lowering.ptx_pointers import PointerAccess, pointer_accesses
from lowering.triton import (
    ImportedKernel,
)

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
