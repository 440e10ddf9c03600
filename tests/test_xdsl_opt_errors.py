"""Bad input through the stock `xdsl-opt` with the project's plug-in: a located diagnostic
(`file:line:col: error: message`), exit status 1, no Python traceback and no output,
whichever step finds it: xDSL's parser, xDSL's verifier before the pass, the
`autotune-to-iree` pass, or the `-t iree` target."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

BIN = Path(sys.executable).parent

SOURCE = """module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.optimization_barrier %x : tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  autotune.group @f variants([@f1, @f2])
  util.func public @run(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
"""
GROUP = "autotune.group @f variants([@f1, @f2])"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(map(str, args)), capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> tuple[Path, str]:
    """The source file, and its xDSL form (`iree-autotune xdsl`), whose ops name their
    places in the source."""
    folder = tmp_path_factory.mktemp("xdsl_opt_errors")
    source = folder / "groups.mlir"
    source.write_text(SOURCE)
    made = run(BIN / "iree-autotune", "xdsl", source, "-o", folder / "groups.xdsl.mlir")
    assert made.returncode == 0, made.stderr
    return source, (folder / "groups.xdsl.mlir").read_text()


def xdsl_opt(path: Path, options: str = "") -> subprocess.CompletedProcess[str]:
    pipeline = f"autotune-to-iree{{{options}}}" if options else "autotune-to-iree"
    return run(BIN / "xdsl-opt", "--allow-unregistered-dialect", path, "-p", pipeline, "-t", "iree")


def in_nested_module(text: str) -> str:
    """The xDSL form's module body inside a nested `builtin.module @lib`."""
    head, body = text.split("{\n", 1)
    body, tail = body.rsplit("}", 1)
    return f"{head}{{\n  builtin.module @lib {{\n{body}  }}\n}}{tail}"


# (id, how the xDSL form is changed, pass options, the first line of stderr):
# {SRC} is the source file (the ops' locations), {X} the xDSL file (xDSL's parse errors).
CASES = [
    (
        "bad-option",
        None,
        "policy=fast",
        'error: unknown policy "fast"; expected one of online, explicit, init, static',
    ),
    (
        "missing-cache",
        None,
        'cache="/nonexistent/decisions.json"',
        "error: cannot read tuning cache file /nonexistent/decisions.json: No such file or "
        "directory",
    ),
    (
        "unknown-variant",
        ("[@f1, @f2]", "[@f1, @f3]"),
        "",
        "{SRC}:9:3: error: 'autotune.group' op variant @f3 not found in the enclosing module",
    ),
    (
        "nested-variant-symbol",
        ("[@f1, @f2]", "[@f1, @lib::@f2]"),
        "",
        "{SRC}:9:3: error: 'autotune.group' op variant @lib::@f2 must be a flat symbol (@name) "
        "beside the group",
    ),
    (
        "group-name-separator",
        ("autotune.group @f ", 'autotune.group @"lib::f" '),
        "",
        '{SRC}:9:3: error: \'autotune.group\' op group name "lib::f" must not contain "::", '
        "which separates an executable's name from its group's in the names the runtime and "
        "the tuning cache use (executable::group)",
    ),
    (
        "unknown-attribute",
        (GROUP, GROUP + ' {polcy = "online"}'),
        "",
        "{X}:9:30: error: unknown group attribute 'polcy'; expected one of policy, choice, "
        "reference, expected, warmup, min_samples, max_samples, confidence, tolerance, "
        "tie_band, workloads, warm_start",
    ),
    (
        "min-samples-zero",
        (GROUP, GROUP + " {min_samples = 0}"),
        "",
        "{SRC}:9:3: error: 'autotune.group' op min_samples must be >= 1",
    ),
    (
        "min-samples-boolean",
        (GROUP, GROUP + " {min_samples = true}"),
        "",
        "{X}:9:30: error: group attribute 'min_samples' expects an integer, not a boolean (true)",
    ),
    (
        "max-samples-out-of-range",
        (GROUP, GROUP + " {max_samples = 9223372036854775808}"),
        "",
        "{X}:9:30: error: group attribute 'max_samples' is 9223372036854775808, out of range "
        "for i64 (-9223372036854775808 to 9223372036854775807)",
    ),
    (
        "undefined-callee",
        ("util.call @f(", "util.call @f9("),
        "",
        "{SRC}:11:10: error: 'util.call' op undefined callee @f9",
    ),
    (
        "nested-module",
        in_nested_module,
        "",
        "{SRC}:9:3: error: 'autotune.group' op cannot be inside a nested module @lib: "
        "iree-compile builds the top-level module's code only; place the group, its variants "
        "and their uses there",
    ),
]


@pytest.mark.parametrize(
    ("change", "options", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_a_located_diagnostic(change, options, expected, converted, tmp_path):
    source, text = converted
    if callable(change):
        text = change(text)
    elif change is not None:
        assert change[0] in text
        text = text.replace(change[0], change[1])
    path = tmp_path / "x.mlir"
    path.write_text(text)
    result = xdsl_opt(path, options)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stdout == ""
    first = result.stderr.split("\n", 1)[0]
    assert first == expected.format(SRC=source, X=path)


def test_an_iree_file_without_the_conversion_step_says_what_to_do():
    """IREE's custom syntax (`flow.executable`) is not xDSL's: `iree-autotune xdsl` writes
    the file in xDSL's syntax first (docs/interop.md)."""
    path = ROOT / "examples" / "matmul_cpu.mlir"
    result = xdsl_opt(path, "policy=static")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().split("\n")
    assert lines[0] == (
        f"{path}:7:19: error: Operation builtin.unregistered does not have a custom format."
    )
    assert lines[1] == "  flow.executable private @matmul_kernels {"
    assert lines[2] == " " * 18 + "^"
    assert lines[3].startswith("note: xdsl-opt reads xDSL's syntax")
    assert "iree-autotune xdsl FILE.mlir -o FILE.xdsl.mlir" in lines[3]


def test_a_valid_module_still_lowers(converted, tmp_path):
    _, text = converted
    path = tmp_path / "x.mlir"
    path.write_text(text)
    result = xdsl_opt(path, "policy=static")
    assert result.returncode == 0, result.stderr
    assert "util.call @f1(%arg0)" in result.stdout
