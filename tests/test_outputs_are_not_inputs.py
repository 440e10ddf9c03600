"""No command overwrites what the user has: an output pointed at an input (the model, the
source, the module, the tuning cache), or two outputs at one file, is an error before any
work, and every file is left byte for byte as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from command_line import assert_error, cli

from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "matmul_cpu.mlir"
MODEL = ROOT / "examples" / "mlp.mlir"


@pytest.fixture
def files(tmp_path: Path, vmfbs) -> dict[str, Path]:
    """A copy of each kind of input a command reads, in one folder."""
    made = {
        "source": tmp_path / "matmul.mlir",
        "model": tmp_path / "mlp.mlir",
        "module": tmp_path / "tagged.vmfb",
        "export": tmp_path / "decisions.json",
        "cache": tmp_path / "cache.sqlite3",
    }
    shutil.copy(EXAMPLE, made["source"])
    shutil.copy(MODEL, made["model"])
    shutil.copy(next(iter(vmfbs.values())), made["module"])
    made["export"].write_text('{"format": "iree-autotune-decisions", "decisions": []}\n')
    made["cache"].write_bytes(b"SQLite format 3\x00" + bytes(100))  # read by none: refused first
    return made


# (command line with {names} for the files, the file that must survive, message fragment)
CASES = [
    ("lower {source} -o {source}", "source", "-o"),
    ("xdsl {source} -o {source}", "source", "-o"),
    ("compile {source} -o {source}", "source", "-o"),
    ("compile {source} --policy static --cache {export} -o {export}", "export", "--cache"),
    ("tune-model {model} -o {model} --no-timing", "model", "-o"),
    ("tune-model {model} -o {tmp}/out.vmfb --report {model}", "model", "--report"),
    ("tune-model {model} -o {tmp}/same --report {tmp}/same", None, "are one file"),
    ("cache export {cache} --cache {cache}", "cache", "--cache"),
    ("tune {module} --cache {cache} --export {cache}", "cache", "--cache"),
    ("tune {module} --export {module}", "module", "MODULE"),
]


@pytest.mark.parametrize(("line", "kept", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_an_output_pointed_at_an_input_is_refused_and_the_input_kept(files, line, kept, fragment):
    names = {name: str(path) for name, path in files.items()}
    before = {name: path.read_bytes() for name, path in files.items()}
    result = cli(*line.format(tmp=files["source"].parent, **names).split())
    assert_error(result, fragment)
    for name, path in files.items():
        assert path.read_bytes() == before[name], f"{name} changed"
    if kept is None:
        assert not (files["source"].parent / "same").exists()
