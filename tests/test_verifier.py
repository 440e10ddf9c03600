"""The `autotune.group` verifier: one file per rule, each reporting its exact diagnostic.

Every `tests/data/verify/*.mlir` is a valid module except for one broken rule and starts
with `// expected-error: LINE:COL: error: MESSAGE`; the first line of the rendered
diagnostic must be `PATH:LINE:COL: error: MESSAGE` (`{FILE}` in MESSAGE stands for PATH).
"""

from __future__ import annotations

import re

import pytest
from conftest import DATA

from autotune_bridge import DiagnosticError, GroupOp, parse_module
from autotune_dialect.interop import op_name, symbol_name, workload_arity

VERIFY = DATA / "verify"
CASES = sorted(VERIFY.glob("*.mlir"))

EXPECTED = re.compile(r"// expected-error: (\d+):(\d+): error: (.+)")

# Rules that must keep a file of their own (file name = rule).
RULES = {
    "empty_group",
    "nested_variant_symbol",
    "duplicate_variant",
    "unknown_policy",
    "choice_not_variant",
    "reference_not_variant",
    "choice_without_static",
    "negative_warmup",
    "zero_min_samples",
    "zero_max_samples",
    "min_exceeds_max",
    "min_exceeds_default_max",
    "confidence_out_of_range",
    "negative_tolerance",
    "bad_workloads",
    "sample_workloads_differ_in_length",
    "sample_workload_length",
    "group_outside_container",
    "name_collision",
    "unknown_variant",
    "unknown_variant_module",
    "group_lists_itself",
    "variant_wrong_kind_hal",
    "variant_wrong_kind_flow",
    "variant_wrong_kind_module",
    "layout_mismatch",
    "workload_count_mismatch_between_variants",
    "function_type_mismatch",
    "dispatch_of_function_group",
    "dispatch_workload_mismatch",
    "dispatch_binding_count",
    "dispatch_push_constant_count",
    "dispatch_flow_kernel_arity",
    "dispatch_result_type_mismatch",
    "kernel_arity_differs_between_variants",
    "call_of_export_group",
    "call_type_mismatch",
    "unknown_group_attribute",
    "group_attribute_wrong_type",
    "variants_not_symbols",
    "group_in_nested_module",
}


def expected_error(path) -> str:
    first = path.read_text().split("\n", 1)[0]
    match = EXPECTED.fullmatch(first)
    assert match, f"{path.name}: first line is not '// expected-error: LINE:COL: error: ...'"
    return first.removeprefix("// expected-error: ")


# --- one file per rule ------------------------------------------------------------------


def test_every_rule_has_a_file():
    assert RULES <= {p.stem for p in CASES}, sorted(RULES - {p.stem for p in CASES})


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_file_has_expected_error_line(path):
    lines = path.read_text().split("\n")
    match = EXPECTED.fullmatch(lines[0])
    assert match, f"first line: {lines[0]!r}"
    line, col = int(match[1]), int(match[2])
    # The location points into the module, not at the comment itself.
    assert 1 < line <= len(lines)
    assert 1 <= col <= len(lines[line - 1])
    assert not lines[line - 1][col - 1].isspace()


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_reports_expected_error(path):
    text = path.read_text()
    expected = expected_error(path)
    with pytest.raises(DiagnosticError) as info:
        parse_module(text, str(path))
    rendered = info.value.render().split("\n")
    assert rendered[0] == f"{path}:{expected}".replace("{FILE}", str(path))
    # The source line and a caret under the reported column follow.
    line, col = (int(n) for n in expected.split(":")[:2])
    assert rendered[1] == text.split("\n")[line - 1]
    assert rendered[2] == " " * (col - 1) + "^"


# --- valid modules, one per container kind ----------------------------------------------

HAL_GROUP = """\
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
module {
  hal.executable.source private @ptx <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{path = "k.ptx"}>]}>}> {
    hal.executable.export public @add_64 ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
    hal.executable.export public @add_128 ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
    autotune.group @add variants([@add_128, @add_64]) {policy = "online", reference = @add_64, warmup = 0, min_samples = 3, max_samples = 20, confidence = 0.95, tolerance = 0, workloads = [[64], [4096]]}
  }
  util.func public @main(%a: tensor<64xf32>, %k: i32) -> tensor<64xf32> {
    %c64 = arith.constant 64 : index
    %r = flow.dispatch @ptx::@add[%c64](%a, %k) : (tensor<64xf32>, i32) -> tensor<64xf32>
    util.return %r : tensor<64xf32>
  }
}
"""

FLOW_GROUP = """\
module {
  flow.executable private @mm_ex {
    flow.executable.export public @mm_0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_1 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    autotune.group @mm variants([@mm_0, @mm_1]) {policy = "static", choice = @mm_1}
    builtin.module {
      func.func @mm_0(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
      func.func @mm_1(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
    }
  }
  util.func public @main(%lhs: tensor<8x8xf32>, %rhs: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = flow.dispatch @mm_ex::@mm(%lhs, %rhs) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    util.return %0 : tensor<8x8xf32>
  }
}
"""

UTIL_FUNC_GROUP = """\
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.optimization_barrier %x : tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  autotune.group @f variants([@f1, @f2]) {policy = "init"}
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
"""

FUNC_FUNC_GROUP = """\
module {
  func.func private @g1(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func private @g2(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func private @g3(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  autotune.group @g variants([@g1, @g2, @g3]) {policy = "explicit"}
  util.func public @main(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
    %0 = util.call @g(%x, %s) : (tensor<4xf32>, f32) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
"""


def groups_of(module) -> list[GroupOp]:
    return [op for op in module.walk() if isinstance(op, GroupOp)]


@pytest.mark.parametrize(
    "text, container, name",
    [
        (HAL_GROUP, "hal.executable.source", "add"),
        (FLOW_GROUP, "flow.executable", "mm"),
        (UTIL_FUNC_GROUP, None, "f"),
        (FUNC_FUNC_GROUP, None, "g"),
    ],
    ids=["hal.executable.source", "flow.executable", "util.func", "func.func"],
)
def test_valid_group_verifies(text, container, name):
    module = parse_module(text, "valid.mlir")
    (group,) = groups_of(module)
    assert group.group_name == name
    parent = group.parent_op()
    if container is None:
        assert parent is module
    else:
        assert op_name(parent) == container


def test_verify_module_catches_a_group_broken_after_parsing():
    """verify_module on a parsed valid module passes, and checks groups edited later."""
    from autotune_bridge import verify_module

    module = parse_module(UTIL_FUNC_GROUP, "valid.mlir")
    verify_module(module, UTIL_FUNC_GROUP)
    # ... and breaking the module afterwards is caught by the same verifier.
    (group,) = groups_of(module)
    group.properties["variants"] = GroupOp("tmp", ["f1", "f1"]).variants
    with pytest.raises(DiagnosticError, match="variant @f1 is listed more than once"):
        verify_module(module, UTIL_FUNC_GROUP)


def test_func_call_of_function_group_verifies():
    text = (
        FUNC_FUNC_GROUP.replace("util.func public @main", "func.func public @main")
        .replace("%0 = util.call @g(%x, %s)", "%0 = func.call @g(%x, %s)")
        .replace("util.return %0", "return %0")
    )
    assert "func.call @g(" in text
    module = parse_module(text, "func_call.mlir")
    (call,) = [op for op in module.walk() if op_name(op) == "func.call"]
    assert call.properties["callee"].root_reference.data == "g"
    # A call of a different type is refused by the group, at the call.
    bad = text.replace(
        "func.call @g(%x, %s) : (tensor<4xf32>, f32)",
        "func.call @g(%x, %x) : (tensor<4xf32>, tensor<4xf32>)",
    )
    with pytest.raises(DiagnosticError, match="call of group @g has type"):
        parse_module(bad, "func_call.mlir")


# --- accessors --------------------------------------------------------------------------


def test_accessors_on_parsed_hal_group():
    module = parse_module(HAL_GROUP, "valid.mlir")
    (group,) = groups_of(module)
    assert group.variant_names == ["add_128", "add_64"]
    assert group.policy_or("static") == "online"
    assert group.sample_workloads() == [[64], [4096]]
    assert group.int_param("warmup") == 0
    assert group.int_param("min_samples") == 3
    assert group.int_param("max_samples") == 20
    assert group.confidence is not None and group.confidence.value.data == pytest.approx(0.95)
    tolerance = group.tolerance  # an integer literal, read as a float
    assert tolerance is not None and tolerance.value.data == 0.0
    assert isinstance(tolerance.value.data, float)
    assert group.reference is not None and group.reference.root_reference.data == "add_64"
    resolved = group.resolve_variants()
    assert all(op_name(op) == "hal.executable.export" for op in resolved)
    assert [symbol_name(op) for op in resolved] == ["add_128", "add_64"]  # group order
    assert [workload_arity(op) for op in resolved] == [1, 1]


def test_accessors_on_parsed_function_group_defaults():
    module = parse_module(UTIL_FUNC_GROUP, "valid.mlir")
    (group,) = groups_of(module)
    assert group.variant_names == ["f1", "f2"]
    assert group.policy_or("online") == "init"
    assert group.sample_workloads() == []
    assert group.int_param("max_samples") is None
    assert group.choice is None
    resolved = group.resolve_variants()
    assert all(op_name(op) == "util.func" for op in resolved)
    assert [symbol_name(op) for op in resolved] == ["f1", "f2"]
    # The group itself is not among its siblings.
    assert "f" not in group.siblings()
    assert set(group.siblings()) == {"f1", "f2", "main"}


def test_policy_or_falls_back_without_policy():
    module = parse_module(FUNC_FUNC_GROUP.replace(' {policy = "explicit"}', ""), "valid.mlir")
    (group,) = groups_of(module)
    assert group.policy is None
    assert group.policy_or("online") == "online"
    assert group.policy_or("static") == "static"
    assert group.variant_names == ["g1", "g2", "g3"]


def test_choice_without_policy_freezes_the_group():
    text = FUNC_GROUP_WITH_CHOICE
    module = parse_module(text, "choice.mlir")
    group = next(op for op in module.walk() if isinstance(op, GroupOp))
    assert group.policy is None
    assert group.policy_or("online") == "static"
    assert group.choice.root_reference.data == "f2"


FUNC_GROUP_WITH_CHOICE = """\
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  autotune.group @f variants([@f1, @f2]) {choice = @f2}
}
"""


# --- places of parse errors ---------------------------------------------------------------


def test_unbalanced_brackets_are_found_where_to_fix_them():
    from autotune_dialect.brackets import unbalanced

    assert unbalanced('module {\n  "x"() {a = "}"} : () -> () // }\n}\n', "f") is None
    extra = unbalanced("module {\n  util.func @f() {\n  }\n}\n}\n", "f")
    assert (extra.location.line, extra.location.column) == (5, 1)
    assert extra.message == "unexpected '}': no open region here"
    # A `}` indented deeper than the region it would close is the extra one.
    stray_close = unbalanced("module {\n  a {\n      }\n    b\n  }\n}\n", "f")
    assert (stray_close.location.line, stray_close.location.column) == (3, 7)
    # A `{` that the next, less indented `}` skips is the one never closed.
    stray_open = unbalanced("module {\n  a {\n    b {\n  }\n}\n", "f")
    assert (stray_open.location.line, stray_open.location.column) == (3, 7)
    assert stray_open.message.startswith("unterminated region: no '}' closes this '{'")
    truncated = unbalanced("module {\n  a {\n    b", "f")
    assert (truncated.location.line, truncated.location.column) == (3, 6)
    assert truncated.message == (
        "unexpected end of input: unterminated region opened at f:2:5; 1 more open around it"
    )
    wrong = unbalanced("module {\n  f(a]\n}\n", "f")
    assert (wrong.location.line, wrong.location.column) == (2, 6)
    assert "the '(' opened at f:2:4 is not closed (expected ')')" in wrong.message


def test_offsets_of_rewritten_groups_and_calls_map_back():
    from autotune_dialect.group_syntax import to_generic_with_offsets

    text = (
        "module {\n"
        "  autotune.group @g variants([@a,\n"
        "                            @b]) {\n"
        '    policy = "online" // kept\n'
        "  }\n"
        "  %0 = util.call @g(%x) {k = 1} : (f32) -> f32\n"
        "}\n"
    )
    generic, offsets = to_generic_with_offsets(text, "f")
    assert generic.count("\n") == text.count("\n")
    assert '"autotune.group"() <{sym_name = "g"' in generic
    assert '"autotune.call"(%x) {callee = @g, call = "util.call", k = 1} : (f32) -> f32' in generic
    for needle in ("@b]", 'policy = "online"', "(%x)", "k = 1", "(f32) -> f32"):
        assert offsets.original(generic.index(needle)) == text.index(needle), needle
    # Written text maps to what it stands for: the keyword, the group's name.
    assert offsets.original(generic.index('"autotune.group"')) == text.index("autotune.group")
    assert offsets.original(generic.index('"g"')) == text.index("@g")


def test_a_group_whose_variants_disagree_is_reported_before_its_dispatch():
    # The dispatch comes first in the file, and passes 3 kernel arguments to kernels of 2.
    text = """module {
  util.func public @main(%lhs: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = flow.dispatch @ex::@mm(%lhs, %lhs) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    util.return %0 : tensor<8x8xf32>
  }
  flow.executable private @ex {
    flow.executable.export public @mm_0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_1 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    autotune.group @mm variants([@mm_0, @mm_1])
    builtin.module {
      func.func @mm_0(%a: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %o: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
      func.func @mm_1(%a: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf16>>, %o: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
    }
  }
}
"""
    with pytest.raises(DiagnosticError) as info:
        parse_module(text, "g.mlir")
    assert (info.value.location.line, info.value.location.column) == (15, 5)
    assert info.value.message.startswith(
        "'autotune.group' op variant @mm_1 of autotune.group @mm has type "
        "(!iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf16>>, "
    )
    assert "but @mm_0 has type (!iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>" in (
        info.value.message
    )


def test_duplicate_symbols_name_the_first_definition():
    text = """module {
  util.func private @f(%x: f32) -> f32 {
    util.return %x : f32
  }
  autotune.group @g variants([@f])
  autotune.group @f variants([@f])
}
"""
    with pytest.raises(DiagnosticError) as info:
        parse_module(text, "d.mlir")
    assert str(info.value.location) == "d.mlir:6:3"
    assert info.value.message == "duplicate symbol @f; first defined at d.mlir:2:3"
