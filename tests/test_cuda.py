"""CUDA: a group of three hand-written PTX kernels compiles for sm_80 and sm_90 under every
policy, and the compiled module carries each kernel with the block size and dynamic shared
memory its export declares. No GPU is needed: iree-compile embeds the PTX, ptxas checks it.

`iree-dump-module` prints a CUDA executable only as an opaque rodata blob (plus the kernel
names, as strings for `hal.executable.lookup.function`), so block sizes and shared memory
are read from the executable's own flatbuffer (file identifier "CDA1"), see tests/vmfb_cuda.py.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import iree.runtime as rt
import pytest
from conftest import DATA
from vmfb_cuda import cuda_exports as _cuda_exports
from vmfb_cuda import flatbuffer_identifier, vmfb_files

from autotune_contracts import interface
from autotune_contracts.errors import DiagnosticError
from autotune_runtime.host import entry_point, read_groups
from lowering.autotune_to_iree import lower_to_iree
from lowering.driver import compile  # noqa: A004 - the project's public name

CUDA = DATA / "cuda"
PTX = CUDA / "vecadd.ptx"
GROUP = CUDA / "vecadd_group.mlir"  # both entries; same text as examples/vecadd_cuda.mlir
DYNAMIC = CUDA / "vecadd_dynamic.mlir"  # only the tensor<?xf32> entry
STATIC = CUDA / "vecadd_static.mlir"  # only the tensor<4096xf32> entry
EXAMPLES = Path(__file__).parent.parent / "examples"

POLICIES = ("static", "online", "explicit", "init")
ARCHS = ("sm_80", "sm_90")
KERNELS = ("add_64", "add_128", "add_256")

# Which module each policy compiles: the combined module (a dynamic and a static entry).
MODULE_FOR_POLICY = dict.fromkeys(POLICIES, GROUP)

# What the .mlir files declare (also parsed from them below, and checked against this).
EXPECTED = {
    "add_64": ((64, 1, 1), 512),
    "add_128": ((128, 1, 1), 1024),
    "add_256": ((256, 1, 1), 2048),
}


# --- what the sources declare --------------------------------------------------------


def declared_exports(path: Path) -> dict[str, tuple[tuple[int, int, int], int]]:
    """Export name -> (workgroup_size, workgroup_local_memory) from a .mlir's text."""
    out = {}
    for chunk in path.read_text().split("hal.executable.export")[1:]:
        name = re.match(r"\s+public\s+@(\w+)", chunk).group(1)
        props = re.search(
            r"<\{workgroup_size = \[(\d+) : index, (\d+) : index, (\d+) : index\], "
            r"workgroup_local_memory = (\d+) : index\}>",
            chunk,
        )
        assert props is not None, f"no property dict on @{name} in {path.name}"
        x, y, z, shared = (int(g) for g in props.groups())
        out[name] = ((x, y, z), shared)
    return out


def ptx_kernels(text: str) -> dict[str, str]:
    """`.entry` name -> its text (up to the next entry) in a PTX module."""
    parts = re.split(r"(?=\.visible \.entry )", text)
    return {re.match(r"\.visible \.entry (\w+)\(", p).group(1): p for p in parts[1:]}


@pytest.mark.parametrize("path", [GROUP, DYNAMIC, STATIC], ids=lambda p: p.name)
def test_modules_declare_expected_exports(path):
    assert declared_exports(path) == EXPECTED


def test_examples_match_test_data():
    assert (EXAMPLES / "vecadd.ptx").read_text() == PTX.read_text()
    assert (EXAMPLES / "vecadd_cuda.mlir").read_text() == GROUP.read_text()


def test_ptx_kernels_match_their_exports():
    """.reqntid = workgroup_size; a and b staged at smem[0, 4B) and smem[4B, 8B)."""
    text = PTX.read_text()
    version = re.search(r"^\.version (\d+)\.(\d+)$", text, re.M).groups()
    assert tuple(int(v) for v in version) <= (8, 0)  # old enough for CUDA 12/13 ptxas
    assert re.search(r"^\.target sm_80$", text, re.M)
    assert ".extern .shared .align 16 .b8 smem[];" in text
    kernels = ptx_kernels(text)
    assert sorted(kernels) == sorted(KERNELS)
    for name, ((x, y, z), shared) in EXPECTED.items():
        body = kernels[name]
        params = re.findall(r"\.param \.(\w+) (\w+)", body)
        assert params == [
            ("u64", f"{name}_param_a"),
            ("u64", f"{name}_param_b"),
            ("u64", f"{name}_param_out"),
            ("u32", f"{name}_param_n"),
        ]
        assert re.search(r"\.reqntid (\d+), (\d+), (\d+)", body).groups() == tuple(
            str(v) for v in (x, y, z)
        )
        assert f"mad.lo.s32 \t%r4, %r3, {x}, %r2;" in body  # i = ctaid.x * block + tid.x
        offsets = {int(o) for o in re.findall(r"\.shared\.f32 [^\n]*\[%rd10\+(\d+)\]", body)}
        assert offsets == {shared // 2}, f"{name}: b staged at {offsets}, not {shared // 2}"
        assert "bar.sync" in body


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not on PATH")
@pytest.mark.parametrize("arch", ARCHS)
def test_ptxas_accepts_ptx(arch, tmp_path):
    result = subprocess.run(
        ["ptxas", f"-arch={arch}", "-v", str(PTX), "-o", str(tmp_path / "vecadd.cubin")],
        capture_output=True,
        text=True,
        check=False,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    for name in KERNELS:
        assert f"Compiling entry function '{name}' for '{arch}'" in log
    assert log.count("used 1 barriers") == len(KERNELS)
    assert (tmp_path / "vecadd.cubin").stat().st_size > 0


# --- compiling ------------------------------------------------------------------------


@functools.cache
def compiled(policy: str, arch: str) -> bytes:
    """The module for `policy`, compiled from an unrelated working directory: the object
    path `vecadd.ptx` must resolve against the .mlir's folder, not the cwd."""
    path = MODULE_FOR_POLICY[policy]
    with tempfile.TemporaryDirectory() as cwd, contextlib.chdir(cwd):
        return compile(path.read_text(), target="cuda", arch=arch, filename=path, policy=policy)


def _dump_tool() -> str | None:
    found = shutil.which("iree-dump-module", path=str(Path(sys.executable).parent))
    if found:
        return found
    try:
        import iree._runtime_libs as libs
    except ImportError:
        return None
    candidate = Path(libs.__file__).parent / "iree-dump-module"
    return str(candidate) if candidate.exists() else None


def expected_kernels(policy: str) -> tuple[str, ...]:
    # `static` dispatches only the chosen variant (the first); IREE drops unused exports.
    return ("add_64",) if policy == "static" else KERNELS


CASES = [(p, a) for p in POLICIES for a in ARCHS]


def _id(case) -> str:
    return "-".join(case)


FINGERPRINT = re.compile(r"\\22fingerprint\\22: \\22(\w+)\\22")
"""A group's fingerprint in the lowered text's metadata (a JSON string, quotes escaped)."""


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_compiles_to_an_iree_module_with_a_cuda_executable(case):
    """The archive IREE writes: the VM module (flatbuffer identifier "IREE") and one CUDA
    executable ("CDA1"), looked up by the format `cuda-nvptx-fb`, whose exports are
    the kernels the module dispatches, each a `.entry` of its PTX."""
    policy, _ = case
    vmfb = compiled(*case)
    files = vmfb_files(vmfb)
    assert list(files) == ["module.fb", "exe_cuda_nvptx_fb.fb"]
    assert flatbuffer_identifier(files["module.fb"]) == b"IREE"
    assert b"cuda-nvptx-fb" in files["module.fb"]
    assert files["exe_cuda_nvptx_fb.fb"].startswith(b"CDA1")
    exports, (ptx,) = _cuda_exports(vmfb)
    assert [e.name for e in exports] == list(expected_kernels(policy))
    assert set(expected_kernels(policy)) <= set(ptx_kernels(ptx))


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_module_declares_its_group_to_the_runtime(case):
    """The metadata the runtime reads at load (no device needed to read it): the group's
    variants, policy, workload keys and the fingerprint `lower` gave it; a static build
    has no group and no tuning entry point."""
    policy, _ = case
    module = rt.VmModule.copy_buffer(rt.VmInstance(), compiled(*case))
    assert {"vecadd", "vecadd_4096"} <= set(module.function_names)
    groups = read_groups(module)
    if policy == "static":
        assert groups == {}
        assert not [n for n in module.function_names if n.startswith("__autotune")]
        return
    (group,) = groups.values()
    lowered = lower_to_iree(GROUP.read_text(), filename=str(GROUP))
    assert group.qualified_name == "exe::add"
    assert group.variants == KERNELS
    assert group.policy == policy
    assert group.workload_arity == 1
    # Keys: the static entry's constant workload; explicit and init add the sample ones.
    assert set(group.keys) == ({(4096,)} if policy == "online" else {(4096,), (1000,)})
    assert [group.fingerprint] == FINGERPRINT.findall(lowered)
    tune = entry_point(module, interface.TUNE_ENTRY)
    init = entry_point(module, interface.INIT_ENTRY)
    assert (tune is not None, init is not None) == (policy == "explicit", policy == "init")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_dump_module_lists_kernels(case, tmp_path):
    tool = _dump_tool()
    if tool is None:
        pytest.skip("iree-dump-module not found in the venv or iree/_runtime_libs")
    policy, _ = case
    path = tmp_path / "m.vmfb"
    path.write_bytes(compiled(*case))
    result = subprocess.run(
        [tool, "--output=metadata", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    dump = result.stdout
    # Kernel names appear as rodata strings looked up by hal.executable.lookup.function.
    names = set(re.findall(r"embedded\s+\d+ bytes `(add_\d+)`", dump))
    assert names == set(expected_kernels(policy))
    assert "`cuda-nvptx-fb`" in dump
    assert re.search(r"\.rodata\[\s*\d+\] external\s+\d+ bytes", dump)  # the executable
    exported = set(re.findall(r"^\s+\[\s*\d+\] (\w+)\(", dump, re.M))
    entry = "vecadd" if MODULE_FOR_POLICY[policy] is not STATIC else "vecadd_4096"
    assert entry in exported
    if policy == "explicit":
        assert {"__autotune", "__autotune_set_exe_add", "__autotune_get_exe_add"} <= exported
    if policy != "static":
        assert "__autotune_metadata" in exported


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_exports_carry_block_size_and_shared_memory(case):
    policy, _ = case
    exports, _ = _cuda_exports(compiled(*case))
    declared = declared_exports(MODULE_FOR_POLICY[policy])
    assert [e.name for e in exports] == list(expected_kernels(policy))
    for export in exports:
        block, shared = declared[export.name]
        assert export.block_dims == block, export
        assert export.shared_memory == shared, export
        assert export.constant_count == 1, export
        # bindings: a and b ReadOnly (bit 0), out writable.
        assert [f & 1 for f in export.binding_flags] == [1, 1, 0], export


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_embedded_ptx_is_the_source_file(case):
    _, ptx = _cuda_exports(compiled(*case))
    assert ptx == [PTX.read_text()]
    assert sorted(ptx_kernels(ptx[0])) == sorted(KERNELS)


def test_missing_object_file_is_an_error(tmp_path):
    copy = tmp_path / "vecadd_static.mlir"
    copy.write_text(STATIC.read_text())
    with pytest.raises(DiagnosticError, match=r"object file could not be loaded.*vecadd\.ptx"):
        compile(copy.read_text(), target="cuda", arch="sm_80", filename=copy, policy="static")


def test_cuda_objects_cannot_be_compiled_for_llvm_cpu():
    # Located at the executable, where a plain compile for llvm-cpu would crash iree-compile.
    source = CUDA / "vecadd_group.mlir"
    with pytest.raises(DiagnosticError) as err:
        compile(source.read_text(), target="llvm-cpu", filename=source)
    assert err.value.location is not None and err.value.location.line == 6
    assert "has kernel objects for cuda only; it cannot be compiled for llvm-cpu" in str(err.value)


def test_compiler_crash_names_the_pass_it_died_in():
    # The stock compiler crashes (no `error:` line) on CUDA objects built for llvm-cpu.
    from lowering.driver import compile_lowered

    source = CUDA / "vecadd_group.mlir"
    lowered = lower_to_iree(source.read_text(), filename=str(source))
    with pytest.raises(
        DiagnosticError, match=r"iree-compile crashed in \w+Pass \(exit code -?\d+\)"
    ):
        compile_lowered(lowered, target="llvm-cpu", object_dir=CUDA)


def test_xdsl_opt_resolves_object_paths_against_base_dir_and_refuses_unreadable_ones(tmp_path):
    """The stock `xdsl-opt` has no input file name: relative object paths resolve against
    the pass's `base_dir` (default: the working folder); an object it cannot read is an
    error at the executable, never a cache key without the object's bytes."""
    bin_dir = Path(sys.executable).parent
    xdsl_form = tmp_path / "vecadd.xdsl.mlir"
    converted = subprocess.run(
        [str(bin_dir / "iree-autotune"), "xdsl", str(GROUP), "-o", str(xdsl_form)],
        capture_output=True,
        text=True,
    )
    assert converted.returncode == 0, converted.stderr

    def lower(options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "xdsl-opt"), "--allow-unregistered-dialect", str(xdsl_form)]
            + ["-p", f"autotune-to-iree{{{options}}}", "-t", "iree"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )

    missing = lower("policy=online")
    assert missing.returncode != 0
    assert (
        f'cannot read object file "vecadd.ptx" of @exe (No such file or directory; relative '
        f"paths resolve against {tmp_path})"
    ) in missing.stderr
    found = lower(f'policy=online base_dir="{CUDA}"')
    assert found.returncode == 0, found.stderr
    assert "hal.executable.source private @exe" in found.stdout
    assert "autotune.group @" not in found.stdout
    # The same cache key as `iree-autotune lower`, which resolves against the file's folder.
    by_file = FINGERPRINT.findall(lower_to_iree(GROUP.read_text(), filename=str(GROUP)))
    assert by_file and FINGERPRINT.findall(found.stdout) == by_file
