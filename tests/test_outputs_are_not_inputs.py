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


# --- generated: every output of every command pointed at every input, and at each other ----

TEMPLATES = [
    "lower {source} --cache {export} -o {o}",
    "xdsl {source} -o {o}",
    "compile {source} --policy static --cache {export} -o {o}",
    "tune {module} --device local-sync --cache {o_cache} --export {o_export}",
    "run {module} --device local-sync --cache {o_cache}",
    "report {tuning} --plot {o_plot}",
    "report --cache {cache} --plot {o_plot}",
    "cache export {o_file} --cache {cache}",
    "cache import {export} --cache {o_cache}",
    "tune-model {model} --no-timing -o {o} --report {o_report} --compile-cache {o_folder}",
    "spec {model} --report {tuning} --cache {export} -o {o}",
    "import-triton --from-bundle {bundle} -o {o} --bundle --ptx-file",
]
"""Each command once (`cache clear` reads no file); `{o...}`: an output (a file or folder the
command writes; a `--cache` it stores decisions in), the other names: a file it reads."""


def _slots(template: str) -> list[str]:
    return [part.split("}")[0] for part in template.split("{")[1:]]


def generated_cases() -> list[tuple[str, str, str | None]]:
    """(template, output slot, what it is pointed at: an input slot, or None for a second
    output slot's file)."""
    cases = []
    for template in TEMPLATES:
        slots = _slots(template)
        outputs = [s for s in slots if s.startswith("o")]
        for output in outputs:
            cases += [(template, output, i) for i in slots if not i.startswith("o")]
            cases += [(template, output, other) for other in outputs if other > output]
    return cases


def test_the_generated_cases_cover_every_command():
    import argparse

    from autotune_cli.main import build_parser

    def commands(parser: argparse.ArgumentParser, prefix: str = "") -> set[str]:
        found: set[str] = set()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found |= commands(sub, f"{prefix}{name} ") or {prefix + name}
        return found

    covered = {" ".join(t.split()[: 2 if t.startswith("cache") else 1]) for t in TEMPLATES}
    assert commands(build_parser()) - covered == {"cache clear"}


@pytest.fixture
def every_input(files: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    from triton_data import TRITON

    made = dict(files)
    made["tuning"] = tmp_path / "mlp.tune.json"
    made["tuning"].write_text('{"version": 1}\n')
    made["bundle"] = tmp_path / "vecadd.sm_80.json"
    shutil.copy(TRITON / "vecadd.sm_80.json", made["bundle"])
    shutil.copytree(TRITON / "raw", tmp_path / "raw")
    return made


@pytest.mark.parametrize(
    ("template", "output", "target"),
    generated_cases(),
    ids=[f"{t.split(' {')[0]}:{o}->{i}" for t, o, i in generated_cases()],
)
def test_no_output_of_any_command_destroys_an_input_or_another_output(
    every_input, tmp_path, template, output, target
):
    names = {slot: str(tmp_path / f"out-{slot}") for slot in _slots(template)}
    names.update({kind: str(path) for kind, path in every_input.items()})
    names[output] = names[target] if not target.startswith("o") else str(tmp_path / "same")
    if target.startswith("o"):
        names[target] = names[output]
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    result = cli(*template.format(**names).split())
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr and result.stderr.strip(), result.stderr
    for path, content in before.items():
        assert path.read_bytes() == content, f"{path.name} changed"
    assert not (tmp_path / "same").exists()
