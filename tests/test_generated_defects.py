"""Generated defects: every file of `tests/data` that `lower` takes, cut off at several
points, with a stray byte, and with one symbol renamed. Each broken text is refused with a
located message (`file:line:col: error:` at a line of the text) and status 1, never an
internal error; a cut-off text is reported on its last line or at a bracket left open."""

from __future__ import annotations

import os
import re

import pytest
from command_line import iree_autotune
from conftest import DATA, run_iree_opt
from iree.compiler.tools.binaries import find_tool

from autotune_bridge import DiagnosticError, parse_module
from autotune_cli import main as cli

SOURCES = sorted(p for p in DATA.rglob("*.mlir") if "verify" not in p.parts)
CUTS = (0.3, 0.55, 0.8)
_LOCATED = re.compile(r"(.*):(\d+):(\d+): error: ")
_SYMBOL = re.compile(r"@([A-Za-z_][\w$.]*)")


def lower(path, capsys) -> tuple[int, str]:
    status = cli.main(["lower", str(path), "-o", str(path.with_suffix(".out"))])
    return status, capsys.readouterr().err


def assert_located(path, text: str, status: int, err: str) -> int:
    """The message names a line of the text; returns that line."""
    assert status == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    match = _LOCATED.match(err)
    assert match and match[1] == str(path), err
    line = int(match[2])
    assert 1 <= line <= text.count("\n") + 1, err
    assert not path.with_suffix(".out").exists()
    return line


def accepted(source) -> bool:
    try:
        parse_module(source.read_text(), str(source))
    except DiagnosticError:
        return False
    return True


TAKEN = [p for p in SOURCES if accepted(p)]


def test_the_corpus_is_large():
    assert len(TAKEN) >= 40


@pytest.mark.parametrize("source", TAKEN, ids=lambda p: str(p.relative_to(DATA)))
def test_cut_off_text_is_reported_where_it_ends(source, tmp_path, capsys):
    text = source.read_text()
    for cut in CUTS:
        broken = text[: int(len(text) * cut)]
        path = tmp_path / f"cut{cut}.mlir"
        path.write_text(broken)
        status, err = lower(path, capsys)
        line = assert_located(path, broken, status, err)
        last = broken.rstrip().count("\n") + 1
        # On the last line (IREE's message where the text ends), or at a bracket that does
        # not pair up (found by the indentation of the lines around it).
        first = err.split("\n", 1)[0]
        assert line == last or "unterminated" in first or "unexpected '" in first, first


CUT_BLOB = """module {
  util.global private @w = dense_resource<blob> : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x08000000C96C503C3DF2DC3C"""


@pytest.mark.parametrize("perturb", ["165", "1", "255"])
def test_a_resource_blob_cut_off_is_reported_not_read_past(perturb, tmp_path):
    """IREE's lexer reads past the end of its buffer on a string that the text ends in
    inside `dialect_resources` (a model file cut off in its weights); with the memory after
    the buffer filled (glibc's MALLOC_PERTURB_) that read crashed the process."""
    path = tmp_path / "cut.mlir"
    path.write_text(CUT_BLOB)
    env = {**os.environ, "MALLOC_PERTURB_": perturb}
    result = iree_autotune("lower", str(path), "-o", str(tmp_path / "out.mlir"), env=env)
    assert result.returncode == 1, result.stderr
    first = result.stderr.split("\n", 1)[0]
    assert first.startswith(f"{path}:7:40: error: expected '\"' in string literal"), first
    assert not (tmp_path / "out.mlir").exists()


@pytest.mark.parametrize("source", TAKEN, ids=lambda p: str(p.relative_to(DATA)))
def test_stray_byte_is_reported(source, tmp_path, capsys):
    text = source.read_text()
    lines = text.split("\n")
    # The middle op line: a stray backtick before its first token.
    code = [i for i, line in enumerate(lines) if line.strip() and not line.strip().startswith("//")]
    index = code[len(code) // 2]
    indent = len(lines[index]) - len(lines[index].lstrip())
    lines[index] = lines[index][:indent] + "`" + lines[index][indent:]
    broken = "\n".join(lines)
    path = tmp_path / "stray.mlir"
    path.write_text(broken)
    line = assert_located(path, broken, *lower(path, capsys))
    assert line == index + 1
    if "autotune." not in text:  # IREE's own tool reads it: the same place
        stock = run_iree_opt(find_tool("iree-opt"), broken).stderr
        assert stock.startswith(f"<stdin>:{line}:"), stock


@pytest.mark.parametrize("source", TAKEN, ids=lambda p: str(p.relative_to(DATA)))
def test_renamed_symbol_is_reported_or_harmless(source, tmp_path, capsys):
    """The first symbol the text names twice or more, renamed where it first appears: the
    other uses name nothing (refused, located), or it was a use of a symbol defined
    elsewhere that is still valid MLIR (then it lowers)."""
    text = source.read_text()
    names = _SYMBOL.findall(text)
    name = next((n for n in names if names.count(n) > 1), None)
    if name is None:
        pytest.skip("no symbol is named twice")
    first = re.search(rf"@{re.escape(name)}\b", text)
    assert first is not None
    broken = text[: first.start()] + f"@{name}_renamed" + text[first.end() :]
    path = tmp_path / "renamed.mlir"
    path.write_text(broken)
    status, err = lower(path, capsys)
    if status != 0:
        assert_located(path, broken, status, err)
