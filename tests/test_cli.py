"""The installed console scripts: `iree-autotune` and the stock `xdsl-opt` with the plug-in."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA
from modules import tagged_module

from autotune_bridge import parse_module, print_module
from autotune_runtime.session import load as load_module

BIN = Path(sys.executable).parent
IREE_AUTOTUNE = str(BIN / "iree-autotune")
XDSL_OPT = str(BIN / "xdsl-opt")


def load(vmfb, **options):
    return load_module(vmfb, device="local-sync", **options)


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, cwd=cwd, check=False)


@pytest.fixture
def group_file(tmp_path: Path) -> Path:
    path = tmp_path / "tagged.mlir"
    path.write_text(tagged_module())
    return path


@pytest.fixture
def xdsl_file(group_file: Path, tmp_path: Path) -> Path:
    """The group file in xDSL's syntax (`iree-autotune xdsl`), which xdsl-opt reads."""
    path = tmp_path / "tagged.xdsl.mlir"
    result = run(IREE_AUTOTUNE, "xdsl", str(group_file), "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path


def test_xdsl_opt_round_trips_a_file_with_a_group(group_file, xdsl_file):
    text = xdsl_file.read_text()
    assert "autotune.group @add variants([@v0, @v1, @v2])" in text
    assert '"flow.executable"() <{sym_name = "tagged"' in text
    assert "verbatim.op module {" in text
    # xdsl-opt prints back what it read, and `-t iree` prints what the project prints.
    assert f'loc("{group_file}":' in text  # each op's place in the user's file
    again = run(XDSL_OPT, "--allow-unregistered-dialect", "--print-debuginfo", str(xdsl_file))
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == text.strip()
    as_iree = run(XDSL_OPT, "--allow-unregistered-dialect", str(xdsl_file), "-t", "iree")
    assert as_iree.returncode == 0, as_iree.stderr
    assert as_iree.stdout == print_module(parse_module(group_file.read_text()))
    assert "flow.executable private @tagged" in as_iree.stdout


def test_xdsl_opt_lists_and_runs_the_lowering_pass(xdsl_file):
    assert "autotune-to-iree" in run(XDSL_OPT, "--help").stdout
    result = run(
        XDSL_OPT,
        "--allow-unregistered-dialect",
        str(xdsl_file),
        "-p",
        "autotune-to-iree{policy=static}",
        "-t",
        "iree",
    )
    assert result.returncode == 0, result.stderr
    assert "flow.dispatch @tagged::@v0(" in result.stdout
    assert "autotune.group" not in result.stdout


def test_lower_writes_output_file(group_file, tmp_path):
    out = tmp_path / "lowered.mlir"
    result = run(IREE_AUTOTUNE, "lower", str(group_file), "-o", str(out), "--policy", "online")
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "util.call @autotune.select_w0" in text
    assert "autotune.group @add variants" not in text
    # Each op names its place in the input; generated code says what it is.
    assert f'loc("{group_file}":' in text
    assert 'loc("selection (autotune.group @add)"' in text


def test_lower_to_a_pipe_writes_into_the_pipe(group_file, tmp_path):
    """Outputs are written as the runtime's commands write them (`files.atomic_output`): a
    pipe is written in place, not replaced by a file renamed over it."""
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    result = run(IREE_AUTOTUNE, "lower", str(group_file), "-o", str(fifo))
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert received and "util.call @autotune.select_w0" in received[0]
    assert fifo.is_fifo()


def test_compile_writes_vmfb(group_file, tmp_path):
    out = tmp_path / "m.vmfb"
    result = run(IREE_AUTOTUNE, "compile", str(group_file), "--target", "llvm-cpu", "-o", str(out))
    assert result.returncode == 0, result.stderr
    module = load(out)
    assert module.run(np.zeros(16, np.float32)).shape == (16,)
    assert sorted(module.groups[0].variants) == ["v0", "v1", "v2"]
    module.close()


def test_verifier_error_is_located_without_traceback(tmp_path):
    bad = DATA / "verify" / "layout_mismatch.mlir"
    out = tmp_path / "never.mlir"
    result = run(IREE_AUTOTUNE, "lower", str(bad), "-o", str(out))
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{bad}:15:5: error: 'autotune.group' op variant @add_128")
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_parse_error_is_located(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  util.func public @f( {\n}\n")
    result = run(IREE_AUTOTUNE, "lower", str(bad))
    assert result.returncode == 1
    assert result.stderr.startswith(f"{bad}:2:")
    assert "Traceback" not in result.stderr


def test_failed_compile_keeps_existing_output(group_file, tmp_path):
    out = tmp_path / "keep.vmfb"
    out.write_bytes(b"previous")
    bad = tmp_path / "bad.mlir"
    bad.write_text(group_file.read_text().replace("@v1, @v2]", "@v1, @v9]"))
    result = run(IREE_AUTOTUNE, "compile", str(bad), "-o", str(out))
    assert result.returncode == 1
    assert "variant @v9 not found" in result.stderr
    assert out.read_bytes() == b"previous"


@pytest.mark.parametrize(
    "args, message",
    [
        (["lower", "missing.mlir"], "cannot read missing.mlir"),
        (["lower", "x.mlir", "--policy", "fast"], "invalid choice: 'fast'"),
        (["compile", "x.mlir", "--target", "tpu", "-o", "x.vmfb"], "invalid choice: 'tpu'"),
    ],
)
def test_bad_arguments_exit_1(args, message, tmp_path):
    result = run(IREE_AUTOTUNE, *args, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_ipython_displays_ir_as_mlir(group_file):
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    from autotune_bridge.notebook import register
    from autotune_dialect.autotune import GroupOp

    shell = shell_module.InteractiveShell.instance()
    register(shell)
    module = parse_module(group_file.read_text())
    data, _ = shell.display_formatter.format(module)
    assert "\nmodule {" in data["text/plain"]
    assert "autotune.group @add variants([@v0, @v1, @v2])" in data["text/plain"]
    assert data["text/markdown"].startswith("```mlir\n")
    assert "flow.executable private @tagged" in data["text/markdown"]
    group = next(op for op in module.walk() if isinstance(op, GroupOp))
    data, _ = shell.display_formatter.format(group)
    assert data["text/markdown"] == (
        "```mlir\nautotune.group @add variants([@v0, @v1, @v2]) {tolerance = 1.000000e+01 : f64}\n```"
    )


def test_console_scripts_are_installed():
    assert shutil.which(IREE_AUTOTUNE) and shutil.which(XDSL_OPT)


def test_unexpected_failure_is_an_internal_error_without_traceback(
    group_file, tmp_path, monkeypatch, capsys
):
    import autotune_cli.main as cli

    def broken(*args, **kwargs):
        raise RuntimeError("a defect")

    monkeypatch.setattr(cli, "lower_to_iree", broken)
    monkeypatch.setattr(cli.tempfile, "tempdir", str(tmp_path))
    before = group_file.read_text()
    assert cli.main(["lower", str(group_file), "-o", str(tmp_path / "out.mlir")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith(f"{group_file}: error: internal error (RuntimeError: a defect)")
    (report,) = tmp_path.glob("iree-autotune-crash-*.txt")
    assert "RuntimeError: a defect" in report.read_text() and "Traceback" in report.read_text()
    assert group_file.read_text() == before  # the input is kept as it was
    assert not (tmp_path / "out.mlir").exists()


def test_compile_help_says_the_target_default_and_what_cache_takes():
    shown = run(IREE_AUTOTUNE, "compile", "--help").stdout
    assert "default: llvm-cpu" in shown
    assert "tuning-cache export" in shown and "cache" in shown and "file itself" in shown
