"""The stop rule's parameters are declared once (`StopRule`'s fields with their `Setting`),
and each that a group may set reaches, from that declaration alone: the group's
properties and `GroupOp(...)`'s arguments, the group's verifier (kind and range), the
lowered module's metadata, and the rule the runtime builds for the group from that
metadata; each a load option may set is one (`RULE_OPTIONS`). A parameter added to the
declaration, and nowhere else, reaches all of them too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autotune_bridge import DiagnosticError, parse_module
from autotune_contracts import interface
from autotune_contracts.stop_rule import GROUP_SETTINGS, RULE_OPTIONS, SETTINGS, StopRule
from autotune_dialect.autotune import GroupOp
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.tuner import Tuner
from lowering import lower_module

ROOT = Path(__file__).resolve().parent.parent

MODULE = """
util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = util.optimization_barrier %x : tensor<4xf32>
  util.return %0 : tensor<4xf32>
}
autotune.group @f variants([@f1, @f2]) {ATTRIBUTES}
util.func public @run(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %0 : tensor<4xf32>
}
"""


def allowed_value(name: str) -> object:
    """A value in the parameter's range that is not its default."""
    declared, default = SETTINGS[name], StopRule().__dict__[name]
    if declared.kind is bool:
        return not default
    low = declared.at_least if declared.at_least is not None else declared.above
    value = int(low) + 1 if declared.kind is int else 0.5 if declared.below else 2.5  # type: ignore[arg-type]
    return value if value != default else value + 1


def written(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else repr(value)


def lowered_metadata(text: str) -> dict:
    """The metadata the lowered module gives the runtime, for its one group."""
    module = parse_module(text, "settings.mlir")
    lower_module(module, policy="online")
    for op in module.body.block.ops:
        reflection = op.attributes.get("iree.reflection")
        if reflection is not None and interface.METADATA_KEY in reflection.data:
            (entry,) = json.loads(reflection.data[interface.METADATA_KEY].data)
            return entry
    raise AssertionError("no metadata function in the lowered module")


def test_the_declaration_lists_the_group_and_load_parameters():
    assert list(GROUP_SETTINGS) == [
        "warmup",
        "min_samples",
        "max_samples",
        "confidence",
        "tolerance",
        "tie_band",
        "warm_start",
    ]
    assert RULE_OPTIONS == tuple(n for n, s in SETTINGS.items() if s.load)
    assert "tolerance" not in RULE_OPTIONS and "early_drop" in RULE_OPTIONS


@pytest.mark.parametrize("name", list(GROUP_SETTINGS))
def test_each_group_parameter_reaches_the_metadata_and_the_runtime_rule(name):
    value = allowed_value(name)
    group = GroupOp("f", ["f1", "f2"], **{name: value})
    assert name in group.properties
    entry = lowered_metadata(MODULE.replace("ATTRIBUTES", f"{name} = {written(value)}"))
    assert name in entry["params"]
    info = GroupInfo.from_metadata(entry)
    rule = Tuner({info.gid: info}, StopRule(), None).rule_for(info.gid)
    assert getattr(rule, name) == value
    assert getattr(StopRule(), name) != value


@pytest.mark.parametrize("name", [n for n, s in GROUP_SETTINGS.items() if s.kind is not bool])
def test_each_group_parameter_is_range_checked_by_the_group_verifier(name):
    declared = GROUP_SETTINGS[name]
    bad = declared.at_least - 1 if declared.at_least is not None else declared.above
    text = MODULE.replace("ATTRIBUTES", f"{name} = {bad!r}")
    with pytest.raises(DiagnosticError) as raised:
        lower_module(parse_module(text, "settings.mlir"))
    assert f"{name} must be {declared.range_text()}" in str(raised.value)
    with pytest.raises(ValueError, match=f"^{name} must be"):
        StopRule(**{name: bad})


@pytest.mark.parametrize("name", list(GROUP_SETTINGS))
def test_each_group_parameter_is_kind_checked_where_the_group_is_read(name):
    wrong = '"x"'
    with pytest.raises(DiagnosticError, match=f"group attribute '{name}' expects"):
        parse_module(MODULE.replace("ATTRIBUTES", f"{name} = {wrong}"), "settings.mlir")


ADDED = '''    patience: int = setting(4, at_least=2, group=True)
    """A parameter of this test only."""
'''

CHECK_ADDED = r"""
import json, sys, types
source = open("autotune_contracts/stop_rule.py").read()
anchor = "    warm_start: bool = setting("
assert source.count(anchor) == 1
module = types.ModuleType("autotune_contracts.stop_rule")
module.__file__ = "autotune_contracts/stop_rule.py"
sys.modules[module.__name__] = module
exec(compile(source.replace(anchor, sys.argv[1] + anchor), module.__file__, "exec"), module.__dict__)
import autotune_contracts
autotune_contracts.stop_rule = module

from autotune_bridge import DiagnosticError, parse_module
from autotune_dialect.autotune import GroupOp
from autotune_dialect.group_parameters import PARAMETERS
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.tuner import Tuner
from tests.test_stop_rule_settings import MODULE, lowered_metadata

out = {"parameters": list(PARAMETERS), "options": list(module.RULE_OPTIONS)}
out["built"] = GroupOp("f", ["f1", "f2"], patience=6).properties["patience"].value.data
errors = []
for value in ("1", "true"):
    try:
        lowered_metadata(MODULE.replace("ATTRIBUTES", "patience = " + value))
    except DiagnosticError as err:
        errors.append(str(err).split("error: ", 1)[1].splitlines()[0])
out["errors"] = errors
entry = lowered_metadata(MODULE.replace("ATTRIBUTES", "patience = 5"))
out["metadata"] = entry["params"]
info = GroupInfo.from_metadata(entry)
out["rule"] = Tuner({info.gid: info}, module.StopRule(), None).rule_for(info.gid).patience
out["load"] = module.StopRule().with_overrides({"patience": 7}).patience
print(json.dumps(out))
"""


def test_a_parameter_added_to_the_declaration_alone_reaches_every_layer():
    """`StopRule` with one more field (`ADDED`, in a fresh process): the group takes it
    as an attribute and as a `GroupOp` argument, its verifier checks its kind and
    declared range, the lowered metadata carries it, the runtime's rule for the group
    holds it, and it is a load option."""
    result = subprocess.run(
        [sys.executable, "-c", CHECK_ADDED, ADDED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.splitlines()[-1])
    assert out["parameters"][-3:] == ["patience", "workloads", "warm_start"]
    assert "patience" in out["options"]
    assert out["built"] == 6
    assert out["errors"] == [
        "'autotune.group' op patience must be >= 2",
        "'autotune.group' op group attribute 'patience' expects an integer, not a boolean (true)",
    ]
    assert out["metadata"] == {"patience": 5}
    assert out["rule"] == 5
    assert out["load"] == 7


def test_a_group_argument_that_is_no_declared_parameter_is_refused_by_name():
    with pytest.raises(
        TypeError, match="unexpected keyword argument 'min_sample'; the stop rule's"
    ):
        GroupOp("f", ["f1", "f2"], min_sample=3)
