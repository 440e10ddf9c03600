"""`tune-model`'s example inputs and outputs are checked before any work: dynamic sizes
that disagree where the model's ops meet them (a matmul's K of 64 against 32) are an error
naming the argument and the shapes; an output into a missing folder writes nothing; the
project's warnings print as one `warning:` line."""

from __future__ import annotations

import warnings

import pytest
from command_line import assert_error, cli

from autotune_contracts.errors import DiagnosticError
from autotune_model.commands import _warning_line, write_outputs
from autotune_runtime.tuner import TuningWarning

DYNAMIC_MATMUL = """func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %empty = tensor.empty(%m, %n) : tensor<?x?xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%fill : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %mm : tensor<?x?xf32>
}
"""


def test_dynamic_sizes_that_disagree_in_a_matmul_are_refused_before_tuning(tmp_path):
    model = tmp_path / "mm.mlir"
    model.write_text(DYNAMIC_MATMUL)
    out = tmp_path / "mm.vmfb"
    result = cli("tune-model", model, "-o", out, "--input", "8x64xf32", "--input", "32x16xf32")
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first == (
        f"{model}:1:1: error: input shape 32x16 does not fit argument 1 of @mm (expected "
        "64x16): its dimension 0 must be 64 where @mm uses it with the other inputs at "
        f"{model}:9:9 (IREE: 'linalg.matmul' op inferred input/output operand #1 has shape's "
        "dimension #0 to be 64, but found 32); input shapes given: 8x64, 32x16"
    )
    assert "Traceback" not in result.stderr and "compiled" not in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mm.mlir"]


def test_an_output_into_a_missing_folder_is_refused_before_any_work(tmp_path):
    model = tmp_path / "mm.mlir"
    model.write_text(DYNAMIC_MATMUL)
    out = tmp_path / "mm.vmfb"
    report = tmp_path / "missing" / "mm.json"
    assert_error(
        cli("tune-model", model, "-o", out, "--report", report, "--input", "8x64xf32"),
        f"error: cannot write --report {report}: the folder {report.parent} does not exist",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mm.mlir"]


def test_outputs_are_written_all_or_none(tmp_path):
    kept = tmp_path / "kept.vmfb"
    kept.write_bytes(b"before")
    missing = tmp_path / "missing" / "r.json"
    with pytest.raises(DiagnosticError) as info:
        write_outputs([(str(kept), b"after"), (str(missing), "{}")])
    assert info.value.message == (
        f"cannot write {missing}: No such file or directory; nothing was written"
    )
    assert kept.read_bytes() == b"before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.vmfb"]


def test_a_tuning_warning_is_one_line(capsys):
    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda *args, **kwargs: _warning_line(
            lambda *a: shown.append(a), *args, **kwargs
        )
        warnings.warn("variant v2 of tagged::add disagrees", TuningWarning, stacklevel=1)
        warnings.warn("not ours", UserWarning, stacklevel=1)
    assert capsys.readouterr().err == "warning: variant v2 of tagged::add disagrees\n"
    assert [str(a[0]) for a in shown] == ["not ours"]


def test_a_model_returning_nothing_or_of_an_empty_tensor_is_named_so(tmp_path):
    returns_nothing = tmp_path / "none.mlir"
    returns_nothing.write_text("func.func @f(%a: tensor<8x64xf32>) {\n  return\n}\n")
    empty = tmp_path / "empty.mlir"
    empty.write_text(
        DYNAMIC_MATMUL.replace("@mm(%a: tensor<?x?xf32>", "@mm(%a: tensor<0x64xf32>")
        .replace("tensor.dim %a, %c0 : tensor<?x?xf32>", "tensor.dim %a, %c0 : tensor<0x64xf32>")
        .replace("ins(%a, %b : tensor<?x?xf32>", "ins(%a, %b : tensor<0x64xf32>")
    )
    out = tmp_path / "out.vmfb"
    first = cli("tune-model", returns_nothing, "-o", out).stderr.splitlines()[0]
    assert first == (
        f"{returns_nothing}:1:1: error: @f returns no value: there is nothing to compare or time"
    )
    result = cli("tune-model", empty, "-o", out, "--input", "0x64xf32", "--input", "64x8xf32")
    assert result.stderr.splitlines()[0] == (
        f"{empty}:1:1: error: argument 0 of @mm has a zero-size dimension "
        "(tensor<0x64xf32>): there is nothing to time"
    )
    assert not out.exists()
