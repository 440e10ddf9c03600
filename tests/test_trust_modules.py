"""What users must be able to trust of unusual modules: groups whose dotted names coincide
keep their own state, a user symbol named like a host import is refused, a wrong variant of
a function group with dynamic results is rejected, scalar arguments follow the signature,
results outlive close, `func.func` variants and groups dispatched from an initializer run,
and an online dispatch whose results are unused compiles.

One regression test per reproduced failure (docs/runtime.md and docs/lowering.md say what is
guaranteed)."""

from __future__ import annotations

import numpy as np
import pytest
from modules import AXPY, tagged_module
from test_lowering import tag_of

from autotune_runtime.session import load
from lowering import compile
from lowering.autotune_to_iree import lower_to_iree

ZEROS = np.zeros(16, np.float32)


def _body(text: str) -> str:
    """The ops of a `module { ... }` text."""
    return text.split("module {\n", 1)[1].rsplit("}", 1)[0]


def colliding_module() -> str:
    """Executable `@x` with group `@"a.b"` and executable `@"x.a"` with group `@b`: joined
    with dots, their names are the same (`x.a.b`). Also user functions named like the
    lowering's entry points, and a group name that is not ASCII."""
    one = (
        tagged_module(group_attrs='{policy = "explicit"}')
        .replace("@tagged", "@x")
        .replace("@add", '@"a.b"')
        .replace("@run", "@run_one")
    )
    two = (
        tagged_module(group_attrs='{policy = "explicit"}')
        .replace("@tagged", '@"x.a"')
        .replace("@add", "@b")
        .replace("@run", "@run_two")
    )
    three = (
        tagged_module(group_attrs='{policy = "explicit"}')
        .replace("@tagged", "@t3")
        .replace("@add", '@"grüppe"')
        .replace("@run", "@run_three")
    )
    users = """  util.func public @__autotune_metadata() -> i32 {
    %c = arith.constant 7 : i32
    util.return %c : i32
  }
  util.func public @__autotune() -> i32 {
    %c = arith.constant 8 : i32
    util.return %c : i32
  }
"""
    return "module {\n" + _body(one) + _body(two) + _body(three) + users + "}\n"


def test_groups_whose_dotted_names_coincide_keep_their_own_state():
    text = colliding_module()
    lowered = lower_to_iree(text, policy="explicit", locations=False)
    assert lowered.count("util.global private mutable @") == 3  # one choice per group
    module = load(compile(text), device="local-sync")
    try:
        assert len(module.groups) == 3
        by_name = {g.qualified_name: g for g in module.groups.values()}
        assert set(by_name) == {"x::a.b", "x.a::b", "t3::grüppe"}
        # The user's functions keep their names and results.
        assert int(module.__autotune_metadata()) == 7
        assert int(module.__autotune()) == 8
        setters = {name: module.function(g.setter) for name, g in by_name.items()}
        setters["x::a.b"](2)
        setters["x.a::b"](0)
        setters["t3::grüppe"](1)
        for _ in range(3):
            assert module.run_one(ZEROS)[0] == 3.0
            assert module.run_two(ZEROS)[0] == 1.0
            assert module.run_three(ZEROS)[0] == 2.0
        module.tune()  # finds the entry point although `__autotune` is the user's
        assert len(module.decisions()) == 3
    finally:
        module.close()


def test_a_user_symbol_named_like_a_host_import_is_refused_at_that_symbol():
    text = tagged_module(group_attrs='{policy = "online"}').replace(
        "module {\n",
        "module {\n  util.func private @autotune.now_ns() -> i64 {\n"
        "    %c = arith.constant 0 : i64\n    util.return %c : i64\n  }\n",
    )
    from autotune_bridge import DiagnosticError

    with pytest.raises(DiagnosticError) as info:
        lower_to_iree(text, filename="imports.mlir")
    assert str(info.value.location) == "imports.mlir:2:3"
    assert "@autotune.now_ns is the name of a function of the `autotune` host module" in (
        info.value.message
    )


def _adder(name: str, extra: str) -> str:
    t = "tensor<?xf32>"
    return f"""  util.func private @{name}(%a: {t}, %b: {t}) -> {t} {{
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : {t}
    %e = tensor.empty(%n) : {t}
    %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%a, %b : {t}, {t}) outs(%e : {t}) {{
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      %extra = arith.constant {extra} : f32
      %t = arith.addf %s, %extra : f32
      linalg.yield %t : f32
    }} -> {t}
    util.return %r : {t}
  }}
"""


DYNAMIC_FUNCTION_GROUP = (
    "module {\n"
    + _adder("good", "0.0")
    + _adder("wrong", "1.0")
    + """  autotune.group @add variants([@good, @wrong]) {policy = "online"}
  util.func public @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
    %r = util.call @add(%a, %b) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    util.return %r : tensor<?xf32>
  }
}
"""
)


def test_a_wrong_variant_of_a_function_group_with_dynamic_results_is_rejected():
    from autotune_runtime.tuner import TuningWarning

    a = np.arange(8, dtype=np.float32)
    b = np.full(8, 2.0, np.float32)
    module = load(compile(DYNAMIC_FUNCTION_GROUP), device="local-sync", cache=False)
    try:
        with pytest.warns(TuningWarning, match="wrong of add disagrees with the reference"):
            for _ in range(40):
                np.testing.assert_array_equal(module.main(a, b), a + b)
        assert module.decisions() == {("add", (8, 8)): "good"}  # both arguments' lengths
    finally:
        module.close()


def test_scalar_arguments_follow_the_function_signature():
    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, np.float32)
    expected = 2 * x + y
    module = load(compile(AXPY), device="local-sync", cache=False)
    try:
        for alpha in (2, 2.0, np.float32(2), np.int64(2), np.array(2.0)):
            np.testing.assert_array_equal(module.axpy(alpha, x, y), expected)
        with pytest.raises(
            TypeError, match="argument 0 of axpy is a scalar \\(f32\\); got ndarray"
        ):
            module.axpy(x, x, y)
        with pytest.raises(TypeError, match="axpy takes 3 arguments, got 2"):
            module.axpy(2.0, x)
    finally:
        module.close()


def test_results_outlive_close_and_a_call_after_close_is_an_error(tmp_path):
    import subprocess
    import sys

    vmfb = tmp_path / "axpy.vmfb"
    vmfb.write_bytes(compile(AXPY))
    script = f"""
import numpy as np
from autotune_runtime.session import load
module = load({str(vmfb)!r}, device="local-sync", cache=False)
x = np.arange(4, dtype=np.float32)
results = [module.axpy(float(k), x, x) for k in range(50)]
module.close()
try:
    module.axpy(1.0, x, x)
except RuntimeError as err:
    print("closed:", err)
print("sum", float(sum(r.sum() for r in results)))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr  # was 139 (segfault at exit)
    assert "closed: the module is closed" in run.stdout
    # sum over k of (k + 1) * sum(x) = 1275 * 6
    assert f"sum {1275.0 * 6}" in run.stdout


def _plus(kind: str, name: str, tag: float) -> str:
    ret = "util.return" if kind == "util.func" else "return"
    return f"""  {kind} private @{name}(%x: tensor<4xf32>) -> tensor<4xf32> {{
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {{
    ^bb0(%a: f32, %o: f32):
      %t = arith.constant {tag} : f32
      %s = arith.addf %a, %t : f32
      linalg.yield %s : f32
    }} -> tensor<4xf32>
    {ret} %r : tensor<4xf32>
  }}
"""


@pytest.mark.parametrize("kinds", [("func.func", "func.func"), ("func.func", "util.func")])
@pytest.mark.parametrize("policy", ["explicit", "online", "static"])
def test_groups_of_func_func_variants_called_with_util_call_and_func_call(kinds, policy):
    text = (
        "module {\n"
        + _plus(kinds[0], "f1", 1.0)
        + _plus(kinds[1], "f2", 2.0)
        + f'  autotune.group @f variants([@f1, @f2]) {{policy = "{policy}", tolerance = 10.0}}\n'
        + """  util.func public @via_util(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %r : tensor<4xf32>
  }
  func.func @via_func(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
"""
    )
    zeros = np.zeros(4, np.float32)
    module = load(compile(text, policy=policy), device="local-sync", cache=False)
    try:
        if policy == "explicit":
            (group,) = module.groups.values()
            for index, tag in ((0, 1.0), (1, 2.0)):
                module.function(group.setter)(index)
                assert module.via_util(zeros)[0] == tag
                assert module.via_func(zeros)[0] == tag
        else:
            for _ in range(10):
                assert module.via_util(zeros)[0] in (1.0, 2.0)
                assert module.via_func(zeros)[0] in (1.0, 2.0)
    finally:
        module.close()


def initializer_module() -> str:
    """A group dispatched from a `util.initializer` (its result cached in a global) and
    from a function."""
    text = tagged_module(group_attrs="{}")
    return text.replace(
        "  util.func public @run",
        """  util.global private @input = dense<1.0> : tensor<16xf32>
  util.global private @cached : tensor<16xf32>
  util.initializer {
    %z = util.global.load @input : tensor<16xf32>
    %r = flow.dispatch @tagged::@add(%z) : (tensor<16xf32>) -> tensor<16xf32>
    util.global.store %r, @cached : tensor<16xf32>
    util.return
  }
  util.func public @get() -> tensor<16xf32> {
    %v = util.global.load @cached : tensor<16xf32>
    util.return %v : tensor<16xf32>
  }
  util.func public @run""",
    )


@pytest.mark.parametrize("policy", ["online", "explicit", "init", "static"])
def test_a_group_dispatched_from_an_initializer_compiles_and_runs(policy):
    module = load(compile(initializer_module(), policy=policy), device="local-sync", cache=False)
    try:
        # While the module loads, the reference (the first variant, +1) runs.
        np.testing.assert_array_equal(module.get(), np.full(16, 2.0, np.float32))
        assert module.run(ZEROS)[0] in (1.0, 2.0, 3.0)
    finally:
        module.close()


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_an_online_dispatch_whose_results_are_unused_compiles_and_explores_nowhere(dynamic):
    """`iree-compile` cannot build a call of an outlined exploration function whose results
    it drops; such a site runs the committed variant, or the reference, and the used site
    beside it tunes as usual."""
    from modules import function_group_module

    text = tagged_module(dynamic=dynamic)
    used = "    %r = flow.dispatch @tagged::@add"
    unused = used.replace("%r =", "%unused =")
    line = next(ln for ln in text.splitlines() if ln.startswith(used))
    text = text.replace(line, line.replace("%r =", "%unused =") + "\n" + line)
    assert unused in text
    lowered = lower_to_iree(text)
    assert lowered.count("util.call @__autotune.g0.add.explore") == 1  # the used site only
    module = load(compile(text), device="local-sync", cache=False)
    x = np.zeros(16, np.float32)
    calls = 0
    while not module.decisions() and calls < 200:  # variant k adds k + 1 (the tests' tolerance)
        assert tag_of(module.run(x)) in (0, 1, 2)
        calls += 1
    ((key, _),) = module.decisions().items()
    assert key == ("tagged::add", (16,) if dynamic else ())
    module.close()
    calls_of_f = function_group_module().replace(
        "    %r = util.call @f(%a)",
        "    %unused = util.call @f(%a) : (tensor<16xf32>) -> "
        "tensor<16xf32>\n    %r = util.call @f(%a)",
    )
    assert "%unused = util.call @f" in calls_of_f
    module = load(compile(calls_of_f), device="local-sync", cache=False)
    x = np.arange(16, dtype=np.float32)
    added = module.call_f(x) - x
    assert added[0] in (1.0, 2.0, 3.0) and np.all(added == added[0])  # one variant's tag
    module.close()
