"""`iree-autotune tune-model` through the installed console script: a model tuned, its
report written and shown, and errors that name what is wrong, before any output."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import IREE_AUTOTUNE
from small_models import DYNAMIC, MLP, assert_computes_the_mlp

# --- command line ---------------------------------------------------------------------------


def cli(*args) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IREE_AUTOTUNE, *map(str, args)], capture_output=True, text=True)


def assert_error(result, *fragments) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def tune_the_mlp(tmp_path, *options):
    """`tune-model` on the tests' MLP (2 candidates, 1 kept, quiet) with `options`: the
    model's path, the output's, and the command's result."""
    model = tmp_path / "mlp.mlir"
    model.write_text(MLP)
    out = tmp_path / "mlp.vmfb"
    result = cli(
        "tune-model", model, "-o", out, "--candidates", "2", "--top-k", "1", "--quiet", *options
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return model, out, result


def test_cli_tunes_a_model_writes_its_report_and_shows_it(tmp_path):
    # The stock build's dispatches (named below): the choice of build options, timed, is
    # `test_base_builds`'s; on a loaded machine it has picked data tiling here, then written
    # the stock build when the tuned module lost to it (a report of data-tiled dispatches).
    model, out, result = tune_the_mlp(tmp_path, "--base", "stock")
    assert result.stderr == ""  # no progress
    # (the summary lines wrap at the width COLUMNS gives a pipe: read as words)
    words = " ".join(result.stdout.split())
    assert "mlp_dispatch_0_matmul_16x512x256_f32" in words
    report = json.loads((tmp_path / "mlp.tune.json").read_text())
    kept = any(c["fate"] == "kept" for d in report["dispatches"] for c in d["candidates"])
    # (the build's name carries the thread count where it was timed faster told it)
    said = "tuned/stock" if kept else "no variant was kept, so the module is the stock"
    assert "end to end (@mlp" in words and said in words
    assert report["model"] == str(model) and len(report["dispatches"]) == 2
    assert report["timing"]["stock_ns"] > 0 and report["timing"]["tuned_ns"] > 0
    # each dispatch tuned to a candidate: its gain alone and in the model
    for d in report["dispatches"]:
        # (a kept candidate beat IREE's own round by round: its time over IREE's, paired)
        ratios = {c["name"]: c["ratio"] for c in d["candidates"]}
        kept = [c["name"] for c in d["candidates"] if c["fate"] == "kept"]
        gain = d["model_gain"]
        left_out = [c for c in d["candidates"] if "slower per call" in (c["detail"] or "")]
        if left_out:  # measured slower in the model than IREE's own: left out
            assert not kept and gain["gained_ns"] < -gain["noise_ns"]
            continue
        if not kept:
            # IREE's own won (its gain not measured), or the whole model timed against the
            # stock build may have been slower with the group (a loaded machine), and it went
            guarded = [
                c for c in d["candidates"] if "stock build's time with it" in (c["detail"] or "")
            ]
            assert gain is None or (guarded and gain["promised_ns"] > 0), d
            continue
        default_ns = d["candidates"][0]["median_ns"]
        saved = default_ns * (1.0 - min(ratios[k] for k in kept))
        assert saved > 0 and gain["dispatches_per_call"] == 1
        assert gain["promised_ns"] == pytest.approx(saved)
        assert gain["noise_ns"] >= 0 and gain["model_ns"] > 0
        assert f"{d['export']}: " in words and "per call promised" in gain["why"]
    assert_computes_the_mlp(out.read_bytes())
    shown = cli("report", tmp_path / "mlp.tune.json", "--plot", tmp_path / "tune.png")
    assert shown.returncode == 0, shown.stderr
    assert "mlp_dispatch_1_matmul_16x128x512_f32" in shown.stdout
    assert (tmp_path / "tune.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_skip_packing_leaves_a_data_tiled_builds_packs_and_says_so(tmp_path):
    _, out, _ = tune_the_mlp(tmp_path, "--base", "data-tiling", "--skip-packing", "--no-timing")
    report = json.loads((tmp_path / "mlp.tune.json").read_text())
    assert {d["root_op"] for d in report["dispatches"]} == {"linalg.mmt4d"}
    packing = [why for why in report["skipped"].values() if why.startswith("packing")]
    assert len(packing) >= 2 and all("--skip-packing" in why for why in packing)
    assert_computes_the_mlp(out.read_bytes())


UNKNOWN_TORCH_OP = """func.func @main(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.operator "torch.aten.not_an_op"(%x) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
"""


def test_cli_errors_name_what_is_wrong(tmp_path):
    model = tmp_path / "dynamic.mlir"
    model.write_text(DYNAMIC)
    out = tmp_path / "out.vmfb"
    assert_error(
        cli("tune-model", model, "-o", out),
        "argument 0 of @dynamic is tensor<?x256xf32>",
        "--input",
    )
    assert_error(cli("tune-model", model, "-o", out, "--input", "40x256xf32"), "2 arguments")
    assert_error(
        cli("tune-model", model, "-o", out, "--input", "40x255xf32", "--input", "256x256xf32"),
        "does not fit argument 0",
    )
    assert_error(cli("tune-model", model, "-o", out, "--input", "4zx3"), "not like 40x256xf32")
    # The element type given must be the argument's; its rank too.
    assert_error(
        cli("tune-model", model, "-o", out, "--input", "40x256xf16", "--input", "256x256xf32"),
        "40x256xf16 does not fit argument 0 of @dynamic (tensor<?x256xf32>)",
    )
    assert_error(
        cli("tune-model", model, "-o", out, "--input", "40x256x1xf32", "--input", "256x256"),
        "does not fit argument 0",
    )
    assert_error(
        cli("tune-model", model, "-o", out, "--function", "nope"), "no public function @nope"
    )
    assert_error(cli("tune-model", model, "-o", out, "--cache", "c.json"), "needs --freeze")
    missing = tmp_path / "tuning.sqlite3"
    assert_error(
        cli("tune-model", model, "-o", out, "--freeze", "--cache", missing),
        f"error: cannot read tuning cache file {missing}: No such file or directory\n",
    )
    assert_error(cli("tune-model", model, "-o", out, "--tolerance", "nan"), "finite")
    assert_error(
        cli("tune-model", model, "-o", out, "--device", "cuda"),
        "error: device 'cuda' does not run llvm-cpu modules; expected one of local-task, "
        "local-sync",
    )
    broken = tmp_path / "broken.mlir"
    broken.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y\n}\n")
    assert_error(
        cli("tune-model", broken, "-o", out),
        f"{broken}:2:12: error: expected ':'\n  return %y\n           ^\n",
    )
    # an op IREE cannot build (as torch's LSTM through iree-turbine): IREE's message at
    # the op's place in the file, the op's own printed location named so too
    unknown = tmp_path / "unknown_op.mlir"
    unknown.write_text(UNKNOWN_TORCH_OP)
    result = cli("tune-model", unknown, "-o", out)
    assert_error(result, f"{unknown}:2:8: error: failed to legalize operation 'torch.operator'")
    assert f'loc("{unknown}":2:8)' in result.stderr and "<stdin>" not in result.stderr
    empty = tmp_path / "empty.mlir"
    empty.write_text("")
    assert_error(
        cli("tune-model", empty, "-o", out),
        f"error: {empty}: the model has no public function to tune (the file is empty)",
    )
    report = tmp_path / "bad.tune.json"
    report.write_text("{not json")
    assert_error(cli("report", report), str(report), "not JSON")
    assert not out.exists()
