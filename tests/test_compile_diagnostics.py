"""Errors that only iree-compile finds are reported at the user's `file:line:col`, with
the generated code they are in or were reached through; targets and architectures are
checked before anything is built."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from modules import EXAMPLES

from autotune_contracts.errors import DiagnosticError
from lowering.driver import (
    CUDA_ARCHS,
    _Context,
    check_target,
    compile,
    compile_lowered,
    compiler_error,
    first_error,
    target_flags,
)

IREE_AUTOTUNE = str(Path(sys.executable).parent / "iree-autotune")

GOOD = (
    "#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = "
    "[16, 16, 0], vector_common_parallel = [4, 4, 0], vector_reduction = [0, 0, 4]>, "
    "translation_info = #iree_codegen.translation_info<pipeline = "
    "#iree_cpu.pipeline<DoubleTilingExpert>>>"
)
# A tile size on the reduction loop in the parallel level: only the CPU backend refuses it.
BAD = GOOD.replace("vector_common_parallel = [4, 4, 0]", "vector_common_parallel = [4, 4, 4]")
T = "tensor<64x64xf32>"


def matmul_function(name: str, config: str) -> str:
    return f"""  util.func private @{name}(%a: {T}, %b: {T}) -> {T} {{
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : {T}
    %acc = linalg.fill ins(%zero : f32) outs(%init : {T}) -> {T}
    %c = linalg.matmul {{compilation_info = {config}}} ins(%a, %b : {T}, {T}) outs(%acc : {T}) -> {T}
    util.return %c : {T}
  }}
"""


# Line 16 is the matmul of @mm_bad, line 21 the call of the group, line 20 @run.
FUNCTION_GROUP = (
    "// A group of functions whose second variant has a tiling the CPU backend refuses.\n"
    "module {\n"
    + matmul_function("mm_good", GOOD)
    + "  // The variant below is only reached through the group.\n"
    + "\n"
    + matmul_function("mm_bad", BAD)
    + f"""  autotune.group @mm variants([@mm_good, @mm_bad])
  util.func public @run(%a: {T}, %b: {T}) -> {T} {{
    %r = util.call @mm(%a, %b) : ({T}, {T}) -> {T}
    util.return %r : {T}
  }}
}}
"""
)


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IREE_AUTOTUNE, *args], capture_output=True, text=True, cwd=cwd, check=False
    )


def line_of(text: str, fragment: str) -> int:
    """The 1-based line of the only line of `text` containing `fragment`."""
    lines = [i for i, line in enumerate(text.split("\n"), 1) if fragment in line]
    assert len(lines) == 1, (fragment, lines)
    return lines[0]


def test_function_group_fixture_lines():
    lines = FUNCTION_GROUP.split("\n")
    assert "linalg.matmul" in lines[15] and "[4, 4, 4]" in lines[15]
    assert lines[20].startswith("    %r = util.call @mm(")
    assert lines[19].startswith("  util.func public @run(")


@pytest.mark.parametrize("policy", ["online", "explicit"])
def test_error_in_a_function_variant_is_at_the_users_line(policy, tmp_path):
    path = tmp_path / "group.mlir"
    path.write_text(FUNCTION_GROUP)
    result = run_cli("compile", str(path), "--policy", policy, "-o", str(tmp_path / "x.vmfb"))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(
        f"{path}:16:10: error: 'linalg.matmul' op expected only parallel dims to be set"
    ), result.stderr
    assert lines[0].endswith("(called through: variant @mm_bad (autotune.group @mm))")
    assert lines[1] == FUNCTION_GROUP.split("\n")[15]  # the user's line, then the caret
    assert lines[2] == " " * 9 + "^"
    assert f"{path}:21:10: note: called from" in lines
    assert "<stdin>" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.vmfb").exists()


def test_error_in_an_export_body_is_at_the_users_line(tmp_path):
    # iree-compile prints this error and exits 0: it still fails, at the count region's op.
    text = (EXAMPLES / "vecadd_cuda.mlir").read_text()
    wrong = "      %t = tensor.empty(%n) : tensor<?xf32>\n      %d = tensor.dim %t, %c1 : tensor<?xf32>\n      %x = arith.ceildivui %d, %c128 : index"
    text = text.replace("      %x = arith.ceildivui %n, %c128 : index", wrong, 1)
    path = tmp_path / "vecadd.mlir"
    path.write_text(text)
    shutil.copy(EXAMPLES / "vecadd.ptx", tmp_path / "vecadd.ptx")
    line = line_of(text, "%t = tensor.empty(%n)")
    result = run_cli("compile", str(path), "--target", "cuda", "-o", str(tmp_path / "x.vmfb"))
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first == (
        f"{path}:{line}:12: error: iree-compile reported an error: "
        "'tensor.empty' op invalid dimension"
    ), result.stderr
    assert "<stdin>" not in result.stderr


def test_error_in_the_function_that_dispatches_the_group(tmp_path):
    text = (EXAMPLES / "matmul_cpu.mlir").read_text()
    call = "    %c = flow.dispatch @matmul_kernels::@matmul(%a, %b)"
    extra = (
        "    %zero = arith.constant 0.0 : f32\n"
        "    %e = tensor.empty() : tensor<256x256xf32>\n"
        "    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>\n"
        f"    %d = linalg.matmul {{compilation_info = {BAD}}} ins(%a, %b : tensor<256x256xf32>, "
        "tensor<256x256xf32>) outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>\n"
    )
    text = text.replace(call, extra + call, 1)
    text = text.replace(
        "tensor<256x256xf32>) -> tensor<256x256xf32> {",
        "tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<256x256xf32>) {",
    )
    text = text.replace(
        "util.return %c : tensor<256x256xf32>",
        "util.return %c, %d : tensor<256x256xf32>, tensor<256x256xf32>",
    )
    path = tmp_path / "matmul.mlir"
    path.write_text(text)
    line = line_of(text, "%d = linalg.matmul")
    with pytest.raises(DiagnosticError) as caught:
        compile(text, filename=path, policy="online")
    assert caught.value.location is not None
    assert (caught.value.location.line, caught.value.location.column) == (line, 10)
    assert str(caught.value).startswith(
        f"{path}:{line}:10: error: 'linalg.matmul' op expected only parallel dims"
    )


def test_a_place_in_the_lowered_text_is_mapped_to_the_op_around_it():
    # The return has no location of its own: iree-compile names its line of the text it
    # read (`<stdin>:3:3`); the function around it came from user.mlir:7:3.
    lowered = (
        "module {\n"
        "  util.func public @f() -> i32 {\n"
        '    %x = arith.constant 1 : i64 loc("user.mlir":8:5)\n'
        "    util.return %x : i64\n"
        '  } loc("@__autotune.g0.add.explore0 (autotune.group @add)"("user.mlir":7:3))\n'
        "}\n"
    )
    with pytest.raises(DiagnosticError) as caught:
        compile_lowered(lowered)
    message = str(caught.value)
    assert message.startswith("user.mlir:7:3: error: 'util.return' op"), message
    assert message.endswith(
        "(code generated here: @__autotune.g0.add.explore0 (autotune.group @add))"
    )


def test_the_shown_op_names_the_generated_code():
    lowered = '#loc3 = loc("selection (autotune.group @add)"("m.mlir":36:10))\n'
    log = (
        "m.mlir:36:10: error: 'arith.cmpi' op failed\n"
        'm.mlir:36:10: note: see current operation: %3 = "arith.cmpi"(%1, %2) '
        '<{predicate = 0 : i64}> : (i32, i32) -> i1 loc(callsite("variant @v1 '
        '(autotune.group @add)"("m.mlir":36:10) at "m.mlir":30:3))\n'
        "    %r = flow.dispatch @exe::@add[%n](%a) : (tensor<?xf32>{%n}) -> tensor<?xf32>{%n}\n"
        "         ^\n"
    )
    error = compiler_error(log, _Context(lowered, filename="m.mlir"))
    assert error is not None
    assert str(error.location) == "m.mlir:36:10"
    assert error.message == (
        "'arith.cmpi' op failed (code generated here: variant @v1 (autotune.group @add))"
    )
    # Without the op, every name the lowering gave to code at that place is listed.
    alone = compiler_error(log.split("\n")[0], _Context(lowered))
    assert alone is not None
    assert alone.message.endswith("(code generated here: selection (autotune.group @add))")


def test_an_error_without_a_place_is_still_an_error():
    log = "<unknown>:0: error: Unknown CUDA target 'sm90'\nPlease report issues\n"
    assert first_error(log) == "<unknown>:0: Unknown CUDA target 'sm90'"
    error = compiler_error(log, _Context())
    assert error is not None and error.location is None
    assert str(error) == "error: Unknown CUDA target 'sm90'"


# --- targets and architectures ------------------------------------------------------------


@pytest.mark.parametrize("arch", ["sm_10", "sm90", "sm_80;rm", "sm_88", "ampere", "", "sm_80 "])
def test_unknown_cuda_architectures_are_refused_with_the_list(arch):
    with pytest.raises(DiagnosticError) as caught:
        target_flags("cuda", arch)
    message = str(caught.value)
    assert message.startswith(f"error: unknown CUDA architecture {arch!r}; iree-compile 3.13")
    assert ", ".join(CUDA_ARCHS) in message


def test_known_cuda_architectures_and_defaults():
    assert target_flags("cuda") == ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"]
    assert check_target("cuda", "sm_90") == "sm_90"
    assert check_target("llvm-cpu") == "host"
    with pytest.raises(
        DiagnosticError, match="unknown target 'tpu'; expected one of llvm-cpu, cuda"
    ):
        check_target("tpu")


@pytest.mark.parametrize("arch", ["x;rm -rf /", "--iree-flag", "a b", "host\n", "é"])
def test_cpu_names_with_other_characters_are_refused_before_the_compiler(arch):
    with pytest.raises(DiagnosticError, match="is not a CPU name; expected 'host' or a CPU name"):
        check_target("llvm-cpu", arch)


def test_cpu_names_are_checked_by_the_compiler():
    assert check_target("llvm-cpu", "x86-64-v3" if _x86() else "generic") in (
        "x86-64-v3",
        "generic",
    )
    with pytest.raises(DiagnosticError) as caught:
        check_target("llvm-cpu", "notacpu")
    message = str(caught.value)
    assert message.startswith("error: iree-compile does not know the CPU 'notacpu' (llvm-cpu)")
    accepted = message.split("it accepts host or one of: ", 1)[1].split(", ")
    assert len(accepted) > 10


def _x86() -> bool:
    import platform

    return platform.machine() in ("x86_64", "AMD64")


def test_python_api_checks_the_architecture_before_lowering():
    # The text is not even parsed: the architecture is refused first.
    with pytest.raises(DiagnosticError, match="unknown CUDA architecture 'sm_10'"):
        compile("not mlir", target="cuda", arch="sm_10")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--target", "llvm-cpu", "--arch", "notacpu"], "does not know the CPU 'notacpu'"),
        (["--target", "llvm-cpu", "--arch", "sm90"], "does not know the CPU 'sm90'"),
        (["--target", "cuda", "--arch", "sm_10"], "unknown CUDA architecture 'sm_10'"),
        (["--target", "cuda", "--arch", "sm_80;rm"], "unknown CUDA architecture 'sm_80;rm'"),
        (["--target", "cuda", "--arch", "sm90"], "unknown CUDA architecture 'sm90'"),
    ],
)
def test_cli_refuses_unknown_architectures(args, message, tmp_path):
    source = EXAMPLES / "vecadd_cuda.mlir"
    out = tmp_path / "x.vmfb"
    result = run_cli("compile", str(source), *args, "-o", str(out))
    assert result.returncode == 1
    assert result.stderr.startswith("error: "), result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr and "exit code" not in result.stderr
    assert not out.exists()


def test_an_embedded_object_is_never_echoed(tmp_path):
    """A Triton module with its PTX embedded (`dense<[47, 47, ...]>`, ~100 KB on one line)
    compiled for llvm-cpu: the error shows the line around the caret, and no literal whole."""
    data = Path(__file__).parent / "data" / "triton"
    ptx = (data / "vecadd.sm_80.ptx").read_bytes()
    embedded = "data = dense<[" + ", ".join(map(str, ptx)) + f"]> : vector<{len(ptx)}xi8>"
    path = tmp_path / "vecadd.mlir"
    path.write_text(
        (data / "vecadd.sm_80.mlir").read_text().replace('path = "vecadd.sm_80.ptx"', embedded)
    )
    out = tmp_path / "v.vmfb"
    result = subprocess.run(
        [IREE_AUTOTUNE, "compile", str(path), "--target", "llvm-cpu", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1 and not out.exists()
    assert result.stderr.startswith(f"{path}:6:3: error: 'hal.executable.source' op has kernel")
    assert len(result.stderr) < 2500, len(result.stderr)
    line, caret = result.stderr.splitlines()[1:3]
    assert line.endswith("...") and caret == "  ^"


def test_long_source_lines_and_literals_are_cut_around_the_place():
    from autotune_contracts.errors import SourceLocation

    line = "x" * 5000 + "@here" + "y" * 5000
    err = DiagnosticError("bad", SourceLocation("f.mlir", 1, 5001), line)
    shown, caret = err.render().splitlines()[1:]
    assert shown.startswith("...") and shown.endswith("...") and len(shown) <= 1006
    assert shown[len(caret) - 1 :].startswith("@here")
    literal = "dense<[" + ", ".join(["47"] * 1000) + "]>"
    assert DiagnosticError(f"op {literal} : vector<1000xi8>").render() == (
        "error: op dense<[47, 47, 47, 47, 47, 47, 47, 47, ...]> : vector<1000xi8>"
    )


def test_a_dispatch_of_an_executable_the_module_lacks_is_named(tmp_path):
    """`iree-compile` crashes on it (ConvertToHALPass); `lower` passes it through, as
    IREE's parser does (IREE's own tests dispatch executables they do not define)."""
    text = (
        (EXAMPLES / "matmul_cpu.mlir")
        .read_text()
        .replace("flow.dispatch @matmul_kernels::@matmul", "flow.dispatch @nokernels::@matmul")
    )
    path = tmp_path / "m.mlir"
    path.write_text(text)
    line = next(i for i, text_line in enumerate(text.split("\n"), 1) if "@nokernels" in text_line)
    with pytest.raises(DiagnosticError) as info:
        compile(text, target="llvm-cpu", filename=str(path))
    assert info.value.render().split("\n")[0] == (
        f"{path}:{line}:10: error: 'flow.dispatch' op dispatches @nokernels::@matmul, but the "
        "module defines no executable @nokernels"
    )
