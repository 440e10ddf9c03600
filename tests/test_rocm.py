"""ROCm (HIP): a group of three flow-executable matmul variants compiles for AMD GPUs under
every policy, and `tune-model --target rocm` builds a model's candidates with IREE's ROCm
code generation. No GPU is needed to compile (nor is there one here): the modules are
checked for what they hold, an IREE archive whose executable is a `rocm-hsaco-fb` HIP
flatbuffer (identifier "HIP1") with an AMD GPU code object (ELF) for the architecture."""

from __future__ import annotations

import functools
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import iree.runtime as rt
import pytest
from small_models import MLP, SMALL
from vmfb_cuda import flatbuffer_identifier, vmfb_files

from autotune_contracts.errors import DiagnosticError
from autotune_model import tune_model
from autotune_runtime.host import read_groups
from lowering.driver import DEFAULT_ROCM_ARCH, ROCM_ARCHS, check_target, compile, target_flags

EXAMPLES = Path(__file__).parent.parent / "examples"
GROUP = EXAMPLES / "matmul_rocm.mlir"
VARIANTS = ("mm_16x16", "mm_32x32", "mm_64x64")
CLI = Path(sys.executable).parent / "iree-autotune"


@functools.cache
def compiled(policy: str, arch: str = "gfx942") -> bytes:
    return compile(GROUP.read_text(), target="rocm", arch=arch, filename=GROUP, policy=policy)


def hip_executable(vmfb: bytes) -> tuple[str, bytes]:
    """(name, bytes) of the module's one executable, after checking the archive: the VM
    module first, which looks its executable up by the format `rocm-hsaco-fb`."""
    files = vmfb_files(vmfb)
    (module, executable) = files
    assert module == "module.fb" and flatbuffer_identifier(files[module]) == b"IREE"
    assert b"rocm-hsaco-fb" in files[module]
    assert executable.endswith("_rocm_hsaco_fb.fb")
    return executable, files[executable]


def test_rocm_takes_the_gfx_architectures_iree_compile_builds_for():
    assert check_target("rocm") == DEFAULT_ROCM_ARCH == "gfx942"
    assert target_flags("rocm", "gfx90a") == [
        "--iree-hal-target-device=hip",
        "--iree-rocm-target=gfx90a",
    ]
    assert {"gfx90a", "gfx942", "gfx1100"} <= set(ROCM_ARCHS)
    with pytest.raises(DiagnosticError, match=r"unknown ROCm architecture 'gfx906'.*gfx942"):
        check_target("rocm", "gfx906")  # iree-compile 3.13: "Unknown ROCM target"


@pytest.mark.parametrize("policy", ["static", "online", "explicit", "init"])
def test_group_compiles_to_a_hip_executable_with_its_variants(policy):
    name, executable = hip_executable(compiled(policy))
    assert name == "matmul_kernels_rocm_hsaco_fb.fb"
    assert executable.startswith(b"HIP1")
    assert b"\x7fELF" in executable and b"gfx942" in executable  # the AMD GPU code object
    assert [v for v in VARIANTS if v.encode() in executable] == list(VARIANTS)
    groups = read_groups(rt.VmModule.copy_buffer(rt.VmInstance(), compiled(policy)))
    if policy == "static":
        assert groups == {}
    else:
        (group,) = groups.values()
        assert (group.qualified_name, group.variants, group.policy) == (
            "matmul_kernels::matmul",
            VARIANTS,
            policy,
        )


def test_the_code_object_is_built_for_the_architecture_asked():
    _, executable = hip_executable(compiled("online", "gfx1100"))
    assert b"gfx1100" in executable and b"gfx942" not in executable


def test_cli_compiles_for_rocm_and_refuses_an_unknown_architecture(tmp_path):
    out = tmp_path / "m.vmfb"
    argv = [str(CLI), "compile", str(GROUP), "--target", "rocm", "--arch", "gfx90a", "-o"]
    made = subprocess.run([*argv, str(out)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert b"gfx90a" in hip_executable(out.read_bytes())[1]
    bad = subprocess.run(
        [*argv[:-3], "--arch", "sm_80", "-o", str(tmp_path / "n.vmfb")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "error: unknown ROCm architecture 'sm_80'; iree-compile 3.13 builds for" in bad.stderr
    assert not (tmp_path / "n.vmfb").exists()


def test_cuda_kernel_objects_are_refused_for_rocm():
    source = EXAMPLES / "vecadd_cuda.mlir"
    with pytest.raises(DiagnosticError, match="has kernel objects for cuda only; it cannot be"):
        compile(source.read_text(), target="rocm", filename=source)


def test_tune_model_builds_rocm_candidates_without_a_device():
    """Compiled only: each group holds the first candidates that built with IREE's ROCm
    code generation, and the report says it was not benchmarked."""
    options = replace(SMALL, target="rocm", arch="gfx942", top_k=2, compile_cache=False)
    tuned = tune_model(MLP, options, filename="mlp.mlir", quiet=True)
    _, executable = hip_executable(tuned.vmfb)
    assert b"gfx942" in executable
    assert any(n.startswith("not benchmarked: no hip device here") for n in tuned.report.notes)
    groups = read_groups(rt.VmModule.copy_buffer(rt.VmInstance(), tuned.vmfb))
    assert len(groups) == 2 == len(tuned.report.dispatches)
    for result in tuned.report.dispatches:
        kept = [c.name for c in result.candidates if c.fate == "kept"]
        assert len(kept) == 2 and "failed to compile" not in {c.fate for c in result.candidates}
        (group,) = [
            g for g in groups.values() if g.qualified_name.endswith(result.export + "__tuned")
        ]
        # IREE's own configuration first, then the candidates kept
        assert group.variants == (result.export, *(f"{result.export}__{k}" for k in kept))
        for variant in group.variants:
            assert variant.encode() in executable
