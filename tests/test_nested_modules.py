"""Groups inside a nested `builtin.module`: `iree-compile` builds the code of the top-level
module only, so such a group is refused at its place, by `lower` and `compile` alike,
with no output written."""

from __future__ import annotations

import subprocess

from command_line import cli
from conftest import DATA
from iree.compiler.tools.binaries import find_tool

from lowering.driver import target_flags

NESTED = DATA / "verify" / "group_in_nested_module.mlir"
MESSAGE = (
    "'autotune.group' op cannot be inside a nested module @lib: iree-compile builds the "
    "top-level module's code only; place the group, its variants and their uses there"
)


def test_lower_refuses_a_group_in_a_nested_module(tmp_path):
    out = tmp_path / "out.mlir"
    result = cli("lower", NESTED, "-o", out)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.split("\n")[0] == f"{NESTED}:11:5: error: {MESSAGE}"
    assert not out.exists()


def test_compile_refuses_a_group_in_a_nested_module(tmp_path):
    out = tmp_path / "out.vmfb"
    result = cli("compile", NESTED, "--target", "llvm-cpu", "-o", out)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert result.stderr.split("\n")[0] == f"{NESTED}:11:5: error: {MESSAGE}"
    assert not out.exists()


NESTED_COMPUTATION = """module {
  builtin.module @lib {
    util.func public @double(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = arith.addf %x, %x : tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
  }
}
"""


def test_iree_compile_does_not_build_code_in_a_nested_module(tmp_path):
    """Why a nested group is refused: without any group, `iree-compile` 3.13 fails on a
    nested module's tensor arithmetic (a module whose top level holds functions as well
    leaves the nested module's functions out)."""
    source = tmp_path / "nested.mlir"
    source.write_text(NESTED_COMPUTATION)
    out = tmp_path / "nested.vmfb"
    command = [find_tool("iree-compile"), str(source), *target_flags("llvm-cpu"), "-o", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "'stream.tensor.sizeof' op illegal for this phase of lowering" in result.stderr
