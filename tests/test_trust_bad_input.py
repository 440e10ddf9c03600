"""What users must be able to trust of bad input: deep nesting is read or a located
error, never a crash; a cache export that is not UTF-8, a full disk and an input larger than
memory are one-line errors; static decision files are checked, located and their unused
decisions listed.

One regression test per reproduced failure (docs/runtime.md and docs/lowering.md say what is
guaranteed)."""

from __future__ import annotations

import json

import pytest
from command_line import iree_autotune as _cli
from modules import AXPY, tagged_module

from lowering import compile
from lowering.autotune_to_iree import lower_to_iree


def _nested_ifs(depth: int, error: bool = False) -> str:
    lines = ["util.func public @f(%c: i1, %x: i32) -> i32 {"]
    for level in range(depth):
        lines.append(" " * (level + 2) + "scf.if %c {")
    inner = " " * (depth + 2)
    lines.append(inner + "%y = arith.addi %x, %x : i32")
    if error:
        lines.append(inner + "%z = arith.addi %x, %nope : i32")
    for level in reversed(range(depth)):
        lines.append(" " * (level + 2) + "}")
    lines.append("  util.return %x : i32\n}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("depth", [150, 990])
def test_deep_valid_nesting_is_read_lowered_and_printed(depth):
    from autotune_bridge import parse_module, print_module, xdsl_text

    text = _nested_ifs(depth)
    lowered = lower_to_iree(text, filename="deep.mlir", locations=False)
    assert lowered.count("scf.if") == depth
    module = parse_module(text, "deep.mlir")
    assert xdsl_text(module).count("scf.if") == depth
    assert print_module(module).count("scf.if") == depth


def test_an_error_deep_inside_is_located():
    from autotune_bridge import DiagnosticError

    with pytest.raises(DiagnosticError) as info:
        lower_to_iree(_nested_ifs(400, error=True), filename="deep.mlir")
    assert str(info.value.location).startswith("deep.mlir:403:")
    assert "undeclared SSA value" in info.value.message


@pytest.mark.parametrize(
    "text, line",
    [
        (_nested_ifs(2000), 1001),
        ("util.global private @g = " + "[" * 20000 + "1" + "]" * 20000 + " : i32\n", 1),
    ],
    ids=["regions", "attribute"],
)
def test_absurd_nesting_is_a_located_error(text, line):
    from autotune_bridge import DiagnosticError

    with pytest.raises(DiagnosticError, match="nest deeper than 1000 levels") as info:
        lower_to_iree(text, filename="absurd.mlir")
    assert info.value.location.line == line


def test_cli_reports_a_cache_export_that_is_not_utf8(tmp_path):
    from modules import EXAMPLES

    bad = tmp_path / "decisions.json"
    bad.write_bytes(b'\xff\xfe{"decisions": []}')
    run = _cli("lower", str(EXAMPLES / "matmul_cpu.mlir"), "--cache", str(bad), "-o", "-")
    assert run.returncode == 1
    assert run.stderr.startswith(f"error: tuning cache file {bad} is not UTF-8 text (byte 0)")
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
def test_cli_reports_a_full_disk_on_standard_output():
    from modules import EXAMPLES

    with open("/dev/full", "w") as full:
        run = _cli("lower", str(EXAMPLES / "matmul_cpu.mlir"), stdout=full)
    assert run.returncode == 1
    assert run.stderr == "error: cannot write the output: No space left on device\n"


def test_cli_refuses_an_input_larger_than_memory(tmp_path):
    vmfb = tmp_path / "axpy.vmfb"
    vmfb.write_bytes(compile(AXPY))
    run = _cli("run", str(vmfb), "--input", "f32=2", "--input", "99999999999xf32=0")
    assert run.returncode == 1
    assert "shape 99999999999 needs 372.5 GiB, more than this machine's memory" in run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


@pytest.mark.parametrize(
    "decision, message",
    [
        ('{"group": "tagged::add", "workload": []}', 'decision #0 has no "variant" name'),
        (
            '{"group": "tagged::add", "variant": "v1", "workload": ["16"]}',
            'decision #0 needs a "workload" list of integers',
        ),
        (
            '{"group": "tagged::add", "variant": "v9", "workload": []}',
            "decision #0 of {path} chooses @v9, which is not a variant of the group (@v0, @v1, @v2)",
        ),
        (  # the bare group name, unique in the module, names the group
            '{"group": "add", "variant": "v9", "workload": []}',
            "decision #0 of {path} chooses @v9, which is not a variant of the group (@v0, @v1, @v2)",
        ),
        (
            '{"group": "tagged::add", "variant": 7, "workload": []}',
            'decision #0 has "variant": 7, a number; expected a name (a string)',
        ),
        ('["tagged::add", "v1"]', "decision #0 is a list; expected an object"),
    ],
)
def test_static_decisions_are_checked(tmp_path, decision, message):
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module())
    export = tmp_path / "decisions.json"
    first_decision = '{"group": "tagged::add", "variant": "v1", "workload": [4]},\n  '
    export.write_text('{"decisions": [\n  ' + first_decision + decision + "\n]}")
    run = _cli("lower", str(source), "--policy", "static", "--cache", str(export), "-o", "-")
    assert run.returncode == 1
    lines = run.stderr.splitlines()  # at its line of the JSON file, after a good decision
    assert lines[0].startswith(
        f"{export}:3:3: error: " + message.replace("#0", "#1").format(path=export)
    )
    assert lines[1:3] == ["  " + decision, "  ^"]
    assert "Traceback" not in run.stderr


def test_a_decision_file_that_is_not_json_is_located(tmp_path):
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module())
    export = tmp_path / "decisions.json"
    export.write_text('{"decisions": [\n  {"group": "add", "variant": "v1",}\n]}')
    run = _cli("lower", str(source), "--policy", "static", "--cache", str(export), "-o", "-")
    assert run.returncode == 1
    assert run.stderr.startswith(f"{export}:2:36: error: not JSON: Expecting property name")


def test_static_decisions_for_groups_the_module_lacks_are_listed(tmp_path):
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module())
    export = tmp_path / "decisions.json"
    decisions = [
        {"group": "gone", "variant": "v0", "workload": []},
        {"group": "add", "variant": "v2", "workload": []},
        {"group": "gone", "variant": "v0", "workload": [8]},
    ]
    export.write_text(json.dumps({"decisions": decisions}))
    run = _cli("lower", str(source), "--policy", "static", "--cache", str(export), "-o", "-")
    assert run.returncode == 0, run.stderr
    assert (
        f"warning: 2 decision(s) of {export} name no single group of this module and are not "
        "used: #0 (gone), #2 (gone) (groups: tagged::add)"
    ) in run.stderr
    assert "flow.dispatch @tagged::@v2(" in run.stdout
