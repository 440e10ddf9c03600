"""The stock `xdsl-opt` route: `iree-autotune xdsl IN.mlir -o x.mlir`, then
`xdsl-opt --allow-unregistered-dialect x.mlir -p 'autotune-to-iree{...}' -t iree`, gives what
`iree-autotune lower --no-locations` gives, for every program that `lower` takes.

Every .mlir of tests/data and examples/ says what `lower` does with it: a file whose first
line is `// expected-error: LINE:COL: error: MESSAGE` (tests/data/verify, one per rule of
docs/dialect.md) is refused with that diagnostic, by `lower` and by `iree-autotune xdsl`
(the route's first step), without a traceback; every other file lowers, and a file that
stops lowering fails its test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA
from xdsl.xdsl_opt_main import xDSLOptMain

from autotune_bridge import DiagnosticError, parse_module
from autotune_bridge.ir import xdsl_text
from autotune_cli.main import main as cli_main
from lowering import lower_to_iree

BIN = Path(sys.executable).parent
ROOT = Path(__file__).parent.parent
CORPUS = sorted([*DATA.rglob("*.mlir"), *(ROOT / "examples").rglob("*.mlir")])
EXPECTED_ERROR = re.compile(r"// expected-error: (\d+:\d+: error: .+)")


def expected_error(path: Path) -> str | None:
    """The diagnostic a file's first line says `lower` gives it (`{FILE}`: the file's
    path), or None for a file that must lower."""
    match = EXPECTED_ERROR.fullmatch(path.read_text().split("\n", 1)[0])
    return None if match is None else f"{path}:{match[1]}".replace("{FILE}", str(path))


VALID = [p for p in CORPUS if expected_error(p) is None]
INVALID = [p for p in CORPUS if expected_error(p) is not None]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=False)


def through_xdsl_opt(text: str, filename: str, tmp_path: Path, options: str) -> str:
    """The module in xDSL's syntax, lowered and printed by `xdsl-opt` (in this process)."""
    source = tmp_path / "x.mlir"
    source.write_text(xdsl_text(parse_module(text, filename), locations=True))
    out = tmp_path / "out.mlir"
    xDSLOptMain(
        args=[
            str(source),
            "--allow-unregistered-dialect",
            "-p",
            f"autotune-to-iree{{{options}}}",
            "-t",
            "iree",
            "-o",
            str(out),
        ]
    ).run()
    return out.read_text()


def test_the_rfc_example_goes_through_the_stock_xdsl_opt(tmp_path):
    """PTX exports whose count regions use a semi-affine `affine.apply`, which xDSL's own
    affine parser cannot read and its `affine.apply` verifier needs as an affine map."""
    path = DATA / "semi_affine" / "rfc_ptx.mlir"
    assert "affine_map<()[s0, s1] -> ((s0 ceildiv 8) * (s1 ceildiv 8))>" in path.read_text()
    xdsl_file = tmp_path / "x.mlir"
    made = run(str(BIN / "iree-autotune"), "xdsl", str(path), "-o", str(xdsl_file))
    assert made.returncode == 0, made.stderr
    assert (
        '#verbatim.affine_map<"affine_map<()[s0, s1] -> (((s0 ceildiv 8)' in xdsl_file.read_text()
    )
    via_xdsl = run(
        str(BIN / "xdsl-opt"),
        "--allow-unregistered-dialect",
        str(xdsl_file),
        "-p",
        f'autotune-to-iree{{policy=static base_dir="{path.parent}"}}',
        "-t",
        "iree",
    )
    assert via_xdsl.returncode == 0, via_xdsl.stderr
    lowered = run(
        str(BIN / "iree-autotune"), "lower", str(path), "--policy", "static", "--no-locations"
    )
    assert lowered.returncode == 0, lowered.stderr
    assert via_xdsl.stdout == lowered.stdout
    assert "#map = affine_map<()[s0, s1] -> ((s0 ceildiv 8) * (s1 ceildiv 8))>" in lowered.stdout


def _route_cases():
    for path in VALID:
        for policy in ("static", "online"):
            yield pytest.param(path, policy, id=f"{path.relative_to(ROOT)}-{policy}")


def test_the_corpus_holds_files_of_both_kinds():
    """Each file of tests/data/verify is refused, and no other file is."""
    verify = DATA / "verify"
    assert INVALID == sorted(verify.glob("*.mlir"))
    assert len(VALID) >= 50


@pytest.mark.parametrize(("path", "policy"), list(_route_cases()))
def test_every_valid_file_lowers_the_same_through_xdsl_opt(path, policy, tmp_path):
    text = path.read_text()
    expected = lower_to_iree(text, policy=policy, filename=str(path), locations=False)
    options = f'policy={policy} base_dir="{path.parent}"'
    assert through_xdsl_opt(text, str(path), tmp_path, options) == expected


@pytest.mark.parametrize("path", INVALID, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_invalid_file_is_refused_with_its_diagnostic(path, tmp_path, capsys):
    """By `lower` under either policy, and by the command that starts the route (run in
    this process: an exception other than the diagnostic would fail the test)."""
    text = path.read_text()
    for policy in ("static", "online"):
        with pytest.raises(DiagnosticError) as refused:
            lower_to_iree(text, policy=policy, filename=str(path), locations=False)
        assert refused.value.render().split("\n", 1)[0] == expected_error(path)
    out = tmp_path / "x.mlir"
    assert cli_main(["xdsl", str(path), "-o", str(out)]) == 1
    printed = capsys.readouterr()
    assert printed.out == ""
    assert printed.err.split("\n", 1)[0] == expected_error(path)
    assert not out.exists()


RESOURCE_PROGRAM = """util.func public @f() -> tensor<2xf32> {
  %c = arith.constant dense_resource<weights> : tensor<2xf32>
  util.return %c : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F00000040"
    }
  }
#-}
"""


def test_modules_read_one_after_another_in_one_process_keep_their_blobs(tmp_path):
    """xDSL's parser keeps blobs in one store per process; each run's are released once
    `-t iree` has printed them, so the next module's handles are read as written."""
    expected = lower_to_iree(RESOURCE_PROGRAM, filename="r.mlir", locations=False)
    assert 'weights: "0x040000000000803F00000040"' in expected
    for run_index in range(3):
        folder = tmp_path / str(run_index)
        folder.mkdir()
        assert through_xdsl_opt(RESOURCE_PROGRAM, "r.mlir", folder, "policy=online") == expected


@pytest.mark.parametrize(
    "text",
    [
        # A value of a type xDSL does not model (`!hal.fence`), used again.
        """util.func public @f(%t: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %d = hal.devices.get %c0 : !hal.device
  %f = hal.fence.create device(%d : !hal.device) flags("None") : !hal.fence
  %r = hal.tensor.barrier join(%t : tensor<4xf32>) => %f : !hal.fence
  %m = arith.constant -1 : i32
  %s = hal.fence.await until([%f]) timeout_millis(%m) flags("None") : i32
  util.return %r : tensor<4xf32>
}""",
        # A function type holding an encoding (IREE's Flow/IR/test/tensor_ops.mlir).
        """#encoding = #iree_encoding.testing<>
util.func public @encode(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32, #encoding> {
  %0 = flow.tensor.encode %arg0 : tensor<4x4xf32> -> tensor<4x4xf32, #encoding>
  util.return %0 : tensor<4x4xf32, #encoding>
}""",
        # A declaration with argument and result attributes.
        """util.func private @imported(%arg0: tensor<4xf32> {iree.abi.name = "x"}) -> (tensor<4xf32> {iree.abi.name = "y"})""",
        # Semi-affine maps other than a product of quotients.
        """util.func public @f(%a: index, %b: index) -> (index, index) {
  %0 = affine.apply affine_map<()[s0] -> ((s0 * s0) * 4)>()[%a]
  %1 = affine.apply affine_map<(d0)[s0] -> (d0 mod s0 - 1)>(%a)[%b]
  %2 = affine.apply affine_map<(d0)[s0] -> (d0 floordiv s0 + d0 ceildiv s0)>(%a)[%b]
  %3 = arith.addi %1, %2 : index
  util.return %0, %3 : index, index
}""",
    ],
    ids=["fence", "encoding", "declaration", "semi-affine"],
)
def test_forms_xdsl_reads_otherwise(text, tmp_path):
    expected = lower_to_iree(text, filename="t.mlir", locations=False)
    assert through_xdsl_opt(text, "t.mlir", tmp_path, "policy=static") == expected


@pytest.mark.parametrize(
    "options, message",
    [
        ("policy=fast", 'error: unknown policy "fast"; expected one of online, explicit'),
        (
            "policy=online",
            "rfc_ptx.mlir:6:3: error: 'hal.executable.source' op cannot read object file \"../cuda/vecadd.ptx\" of @exe",
        ),
    ],
    ids=["bad-option", "missing-ptx"],
)
def test_pass_errors_are_xdsl_diagnostics(options, message, tmp_path):
    """Without `--verify-diagnostics`, the plug-in prints the pass's error as a diagnostic
    (exit status 1, no traceback); with it, xDSL prints the message on stdout and exits 0
    (the flag is for tests of diagnostics). tests/test_xdsl_opt_errors.py has the rest."""
    xdsl_file = tmp_path / "x.mlir"  # not beside the PTX file: the relative path is missing
    made = run(
        str(BIN / "iree-autotune"),
        "xdsl",
        str(DATA / "semi_affine" / "rfc_ptx.mlir"),
        "-o",
        str(xdsl_file),
    )
    assert made.returncode == 0, made.stderr
    args = [str(BIN / "xdsl-opt"), "--allow-unregistered-dialect", str(xdsl_file), "-t", "iree"]
    args += ["-p", f"autotune-to-iree{{{options}}}"]
    plain = run(*args)
    assert plain.returncode == 1
    assert "Traceback" not in plain.stderr
    first = plain.stderr.split("\n", 1)[0]
    assert message in first
    diagnostic = run(*args, "--verify-diagnostics")
    assert diagnostic.returncode == 0 and "Traceback" not in diagnostic.stdout + diagnostic.stderr
    assert message in diagnostic.stdout.strip().splitlines()[0]
