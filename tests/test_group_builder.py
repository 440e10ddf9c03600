"""Groups built in Python (`GroupOp(...)`) that are wrong: an argument of the wrong Python
type, or an integer i64 does not hold, is a `TypeError` or `ValueError` naming it where the
group is built; a name the runtime would misread, or an `autotune.group` that xDSL holds as
an unregistered op, is a verifier error at the group, before anything is lowered."""

from __future__ import annotations

import re

import pytest
from xdsl.dialects.builtin import (
    ArrayAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnregisteredOp,
    f32,
)
from xdsl.ir import Operation

from autotune_bridge import DiagnosticError, GroupOp, parse_module
from autotune_dialect import util
from lowering import lower_module

VARIANTS = """
util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = util.optimization_barrier %x : tensor<4xf32>
  util.return %0 : tensor<4xf32>
}
"""


def module_with(group: Operation, callee: str) -> ModuleOp:
    """The two variants, `group`, and a public function that calls `callee`."""
    ops = list(parse_module(VARIANTS, "variants.mlir").body.block.ops)
    for op in ops:
        op.detach()
    t = TensorType(f32, [4])
    entry = util.FuncOp("run", ([t], [t]), visibility="public")
    call = util.CallOp(callee, entry.body.block.args, [t])
    entry.body.block.add_ops([call, util.ReturnOp(call.results)])
    return ModuleOp([*ops, group, entry])


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"min_samples": "3"}, TypeError, "'min_samples' must be an int, not str ('3')"),
        ({"min_samples": True}, TypeError, "'min_samples' must be an int, not bool (True)"),
        ({"warmup": 2.0}, TypeError, "'warmup' must be an int, not float (2.0)"),
        ({"confidence": "0.9"}, TypeError, "'confidence' must be a float, not str ('0.9')"),
        ({"tie_band": False}, TypeError, "'tie_band' must be a float, not bool (False)"),
        ({"policy": 3}, TypeError, "'policy' must be a str, not int (3)"),
        ({"choice": ["f1"]}, TypeError, "'choice' must be a str, not list (['f1'])"),
        ({"warm_start": "yes"}, TypeError, "'warm_start' must be a bool, not str ('yes')"),
        ({"workloads": [4]}, TypeError, "'workloads' must hold sequences of ints, not int (4)"),
        ({"workloads": [[4.5]]}, TypeError, "'workloads' must be an int, not float (4.5)"),
        (
            {"max_samples": 2**63},
            ValueError,
            "'max_samples' = 9223372036854775808 is out of range for i64 "
            "(-9223372036854775808 to 9223372036854775807)",
        ),
    ],
)
def test_a_wrong_argument_is_named_where_the_group_is_built(arguments, error, message):
    with pytest.raises(error, match=re.escape(f"GroupOp argument {message}")):
        GroupOp("f", ["f1", "f2"], **arguments)


def test_the_name_and_the_variants_are_checked_too():
    with pytest.raises(TypeError, match=r"'sym_name' must be a str, not int \(7\)"):
        GroupOp(7, ["f1"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"'variants' must be a sequence of variant names, not str"):
        GroupOp("f", "f1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"'variants' must be a str, not int \(1\)"):
        GroupOp("f", [1])  # type: ignore[list-item]


def test_numbers_of_the_right_kinds_are_taken():
    group = GroupOp("f", ["f1", "f2"], min_samples=3, max_samples=2**63 - 1, confidence=1)
    assert group.int_param("min_samples") == 3
    assert group.int_param("max_samples") == 2**63 - 1
    assert group.confidence is not None and group.confidence.value.data == 1.0
    assert isinstance(group.confidence.value.data, float)  # an int given, a float stored


def test_a_group_name_holding_the_runtime_separator_is_refused_before_lowering():
    """The runtime reads `lib::f` as group `f` of executable `lib`."""
    module = module_with(GroupOp("lib::f", ["f1", "f2"]), "lib::f")
    with pytest.raises(DiagnosticError) as info:
        lower_module(module)
    assert str(info.value).startswith(
        'error: \'autotune.group\' op group name "lib::f" must not contain "::"'
    )


def test_an_unregistered_group_op_is_refused_before_lowering():
    group = UnregisteredOp.with_name("autotune.group").create(
        properties={
            "sym_name": StringAttr("f"),
            "variants": ArrayAttr([SymbolRefAttr("f1"), SymbolRefAttr("f2")]),
        }
    )
    with pytest.raises(DiagnosticError) as info:
        lower_module(module_with(group, "f"))
    message = str(info.value)
    assert message.startswith(
        "error: 'autotune.group' op is an unregistered op, not the autotune dialect's group; "
        "build it with autotune_bridge.GroupOp"
    )
    assert "internal error" not in message


def test_an_unknown_op_of_the_dialect_is_refused_before_lowering():
    module = module_with(GroupOp("f", ["f1", "f2"]), "f")
    module.body.block.add_op(UnregisteredOp.with_name("autotune.grop").create())
    with pytest.raises(DiagnosticError) as info:
        lower_module(module)
    assert str(info.value) == (
        "error: 'autotune.grop' op is not an op of the autotune dialect, whose one op is "
        "'autotune.group'"
    )
