"""`autotune-to-iree` end to end on the CPU: lower, compile for llvm-cpu, run on local-sync."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from conftest import runtime_tool
from modules import function_group_module, matmul_example, tagged_module

from autotune_bridge import DiagnosticError
from autotune_runtime.session import load as load_module
from autotune_runtime.tuner import Tuner
from lowering.autotune_to_iree import lower_module, lower_to_iree
from lowering.driver import check_diagnostics, compile, compile_lowered

POLICIES = ("static", "online", "explicit", "init")
ZEROS = np.zeros(16, np.float32)


def load(vmfb, **options):
    """Load on local-sync (deterministic on 2 cores), tuning cache per test."""
    return load_module(vmfb, device="local-sync", **options)


def tag_of(output: np.ndarray) -> int:
    """Index of the tagged variant that produced `output` (variant k adds k + 1)."""
    values = set(np.unique(output).tolist())
    assert len(values) == 1, values
    return int(values.pop()) - 1


@pytest.fixture(scope="module")
def compiled():
    cache: dict[tuple[str, str], bytes] = {}

    def get(text: str, policy: str) -> bytes:
        if (text, policy) not in cache:
            cache[(text, policy)] = compile(text, policy=policy)
        return cache[(text, policy)]

    return get


@pytest.mark.parametrize("policy", POLICIES)
def test_matmul_example_matches_numpy(policy, compiled):
    text, _ = matmul_example()
    module = load(compiled(text, policy), max_samples=3)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 256), dtype=np.float32)
    b = rng.standard_normal((256, 256), dtype=np.float32)
    if policy == "explicit":
        module.tune()
    # Online tuning commits after about 13 calls; calls held up by other processes are not
    # samples, so on a busy machine it takes more.
    for call in range(200):
        np.testing.assert_allclose(module.matmul(a, b), a @ b, rtol=1e-4, atol=1e-3)
        if call >= 12 and module.settled():
            break
    decisions = module.decisions()
    if policy == "static":
        assert decisions == {}
    else:
        assert set(decisions) == {("matmul_kernels::matmul", ())}
        assert decisions[("matmul_kernels::matmul", ())] in ("mm_16x16", "mm_32x32", "mm_64x64")
    module.close()


@pytest.mark.parametrize("policy", POLICIES)
def test_function_group_matches_numpy(policy, compiled):
    module = load(compiled(function_group_module(), policy), max_samples=3)
    if policy == "explicit":
        module.tune()
    x = np.arange(16, dtype=np.float32)
    for call in range(200):  # as above: until online tuning has committed
        out = module.call_f(x)
        assert tag_of(out - x) in (0, 1, 2)
        if call >= 12 and module.settled():
            break
    chosen = module.decisions().get(("f", ()))
    if policy == "static":
        assert tag_of(module.call_f(x) - x) == 0  # the first variant
    else:
        assert tag_of(module.call_f(x) - x) == int(chosen[1:])
    module.close()


def test_online_explores_round_robin_then_commits(compiled):
    text = tagged_module(group_attrs="{tolerance = 10.0}")
    # No early drop: on kernels this small one noisy run can be twice another's, and the
    # order of exploration is what this test checks (test_warm_start checks the drop).
    module = load(
        compiled(text, "online"),
        warmup=1,
        min_samples=2,
        max_samples=2,
        early_drop=float("inf"),
        indifference=0.0,
    )
    tags = [tag_of(module.run(ZEROS)) for _ in range(15)]
    (state,) = module.tuner.states.values()
    # a run that another process held up (a loaded test machine) is made again
    held_up = sum(v.discounted for v in state.variants)
    exploring = 3 * (1 + 2) + held_up
    # The first run of v1 and v2 is checked against the reference v0, whose result is
    # returned; later runs return their own.
    assert tags[:3] == [0, 0, 0]
    if not held_up:
        assert tags[:exploring] == [0, 0, 0] + [0, 1, 2] * 2
    assert [v.runs for v in state.variants] == [3 + v.discounted for v in state.variants]
    ((key, variant),) = module.decisions().items()
    assert key == ("tagged::add", ())
    assert tags[exploring:] == [int(variant[1:])] * (15 - exploring)
    assert state.explored_calls == exploring
    module.close()


def test_committed_calls_do_not_call_the_host(compiled):
    module = load(compiled(tagged_module(), "online"), warmup=0, min_samples=1, max_samples=1)
    for _ in range(12):  # a run of each variant (again where another process held one up)
        module.run(ZEROS)
        if module.decisions():
            break
    assert module.decisions()
    (state,) = module.tuner.states.values()
    selects_before = state.explored_calls
    decided = module.tuner.select
    calls = []
    module.tuner.select = lambda *a: calls.append(a) or decided(*a)
    for _ in range(20):
        module.run(ZEROS)
    assert len(calls) <= 1  # at most the call that learns of the commit
    assert state.explored_calls == selects_before
    module.close()


def test_explicit_setter_getter_and_tuning(compiled):
    text = tagged_module(group_attrs='{policy = "explicit", reference = @v1}')
    module = load(compiled(text, "online"))
    assert module.__autotune_get_tagged_add() == -1
    assert tag_of(module.run(ZEROS)) == 1  # the reference variant before tuning
    module.__autotune_set_tagged_add(2)
    assert module.__autotune_get_tagged_add() == 2
    assert tag_of(module.run(ZEROS)) == 2
    module.__autotune_set_tagged_add(0)
    assert tag_of(module.run(ZEROS)) == 0
    module.tune()
    chosen = int(module.decisions()[("tagged::add", ())][1:])
    assert module.__autotune_get_tagged_add() == chosen
    assert tag_of(module.run(ZEROS)) == chosen
    module.close()


def test_init_policy_is_tuned_at_load(compiled):
    module = load(
        compiled(
            tagged_module(group_attrs='{policy = "init", min_samples = 2, tolerance = 10.0}'),
            "online",
        )
    )
    ((key, variant),) = module.decisions().items()  # decided before any call
    assert tag_of(module.run(ZEROS)) == int(variant[1:])
    (state,) = module.tuner.states.values()
    # tuned until the stop rule committed: every variant measured (a warm-up run, then
    # at least min_samples timed ones unless it was ruled out on the way)
    assert all(v.runs >= 2 for v in state.variants)
    assert all(len(v.samples) >= 2 or v.eliminated for v in state.variants)
    module.close()


def test_init_policy_loads_a_cached_decision_without_measuring(compiled, tmp_path):
    vmfb = compiled(
        tagged_module(group_attrs='{policy = "init", min_samples = 2, tolerance = 10.0}'),
        "online",
    )
    cache = tmp_path / "tuning.sqlite"
    first = load(vmfb, cache=cache)
    decisions = first.decisions()
    (state,) = first.tuner.states.values()
    assert all(v.samples for v in state.variants)
    first.close()
    again = load(vmfb, cache=cache)
    assert again.decisions() == decisions
    (state,) = again.tuner.states.values()
    assert state.from_cache
    assert [len(v.samples) for v in state.variants] == [0, 0, 0]  # nothing ran at load
    ((_, variant),) = decisions.items()
    assert tag_of(again.run(ZEROS)) == int(variant[1:])
    again.close()


def test_static_choice_named_on_group_runs(compiled):
    module = load(compiled(tagged_module(group_attrs="{choice = @v2}"), "online"))
    assert tag_of(module.run(ZEROS)) == 2
    module.close()


def test_static_choice_from_tuning_cache_file(tmp_path):
    cache = tmp_path / "decisions.json"
    cache.write_text(
        json.dumps(
            {
                "decisions": [
                    {"group": "add", "container": "tagged", "workload": [], "variant": "v1"}
                ]
            }
        )
    )
    lowered = lower_to_iree(tagged_module(), policy="static", cache=cache)
    assert "@tagged::@v1" in lowered and "@tagged::@v0" not in lowered.split("builtin.module")[-1]


def test_a_static_dynamic_site_runs_the_nearest_decided_size_at_run_time(tmp_path):
    """Decisions for lengths 8 (v0) and 32 (v2): the static module, whose length is known
    at run time only, runs v0 at 8 and below the geometric mean 16, v2 from 16 on (and at
    32 and above); before, it ran the first decision at every length."""
    cache = tmp_path / "decisions.json"
    decided = [("v0", 8), ("v2", 32)]
    cache.write_text(json.dumps({"decisions": [
        {"group": "add", "container": "tagged", "workload": [n], "variant": v}
        for v, n in decided
    ]}))  # fmt: skip
    lowered = lower_to_iree(tagged_module(dynamic=True), policy="static", cache=cache)
    module = load(compile(lowered, policy="static"))
    for length, tag in ((8, 0), (4, 0), (15, 0), (16, 2), (32, 2), (100, 2)):
        assert tag_of(module.run(np.zeros(length, np.float32))) == tag, length
    module.close()


class SizeDependentCost(Tuner):
    """Measured times replaced by a cost model: v0 wins at n=8, v2 wins at n=16."""

    def record(self, gid, variant, elapsed_ns, key, waited_ns=0.0):
        n = key[0]
        cost = {8: [1.0, 2.0, 3.0], 16: [3.0, 2.0, 1.0]}[n][variant]
        super().record(gid, variant, cost, key)


def test_dynamic_workloads_get_separate_decisions(compiled):
    module = load(
        compiled(tagged_module(dynamic=True, group_attrs="{tolerance = 10.0}"), "online"),
        tuner_class=SizeDependentCost,
        warmup=0,
        min_samples=2,
    )
    small, large = np.zeros(8, np.float32), np.zeros(16, np.float32)
    for _ in range(8):
        module.run(small)
        module.run(large)
    assert module.decisions() == {("tagged::add", (8,)): "v0", ("tagged::add", (16,)): "v2"}
    for _ in range(3):
        assert tag_of(module.run(small)) == 0
        assert tag_of(module.run(large)) == 2
    module.close()


@pytest.mark.parametrize("policy", ("explicit", "init"))
def test_sample_workloads_tune_dynamic_shapes(policy, compiled):
    text = tagged_module(
        dynamic=True,
        group_attrs=f'{{policy = "{policy}", workloads = [[8], [16]], tolerance = 10.0}}',
    )
    module = load(compiled(text, "online"), tuner_class=SizeDependentCost, warmup=0, min_samples=2)
    if policy == "explicit":
        module.tune()
    assert module.decisions() == {("tagged::add", (8,)): "v0", ("tagged::add", (16,)): "v2"}
    assert tag_of(module.run(np.zeros(8, np.float32))) == 0
    assert tag_of(module.run(np.zeros(16, np.float32))) == 2
    assert tag_of(module.run(np.zeros(5, np.float32))) == 0  # unsampled size: reference
    module.close()


def test_static_build_imports_nothing_and_runs_under_iree_run_module(tmp_path):
    text = tagged_module(group_attrs="{choice = @v1}")
    lowered = lower_to_iree(text, policy="online")
    assert "@autotune." not in lowered  # no host import
    assert "util.global" not in lowered
    vmfb = tmp_path / "static.vmfb"
    vmfb.write_bytes(compile(text))
    dump = subprocess.run(
        [runtime_tool("iree-dump-module"), str(vmfb)], capture_output=True, text=True, check=True
    ).stdout
    assert "autotune" not in dump
    run = subprocess.run(
        [
            runtime_tool("iree-run-module"),
            "--device=local-sync",
            f"--module={vmfb}",
            "--function=run",
            "--input=16xf32=0",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "16xf32=2 2 2" in run.stdout


def test_online_output_compiles_without_error_diagnostics():
    # compile() raises on any `error:` line; the lowered text names the host imports.
    text, _ = matmul_example()
    lowered = lower_to_iree(text, policy="online", locations=False)
    assert "util.func private @autotune.select_w0(%arg0: i64) -> (i32, i32, i32)\n" in lowered
    assert "autotune.group @" not in lowered
    assert compile(text, policy="online")


def test_unknown_policy_option_is_a_diagnostic():
    with pytest.raises(DiagnosticError, match='unknown policy "fast"'):
        lower_to_iree(tagged_module(), policy="fast")


def test_error_diagnostic_fails_even_with_exit_code_zero():
    log = "<stdin>:3:5: error: 'util.global' op has no value\nsome note\n"
    with pytest.raises(DiagnosticError, match=r"'util.global' op has no value \(at line 3 of"):
        check_diagnostics(log)
    check_diagnostics("<stdin>:1:1: warning: harmless\n")  # warnings pass


def test_compiler_failure_is_a_diagnostic():
    with pytest.raises(DiagnosticError, match="error"):
        compile_lowered("util.func public @f() { %x = arith.constant 1 : i32 }")


def test_group_built_from_python_lowers_without_text():
    from autotune_bridge import GroupOp, parse_module, print_module
    from autotune_dialect.interop import op_name

    text = tagged_module(with_group=False)
    text = text.replace("@tagged::@add(", "@tagged::@v0(")
    module = parse_module(text)
    executable = next(op for op in module.walk() if op_name(op) == "flow.executable")
    executable.regions[0].block.add_op(GroupOp("add", ["v0", "v1", "v2"], choice="v2"))
    dispatch = next(op for op in module.walk() if op.name == "flow.dispatch")
    dispatch.properties["entry_points"] = type(dispatch.entry_points)(
        [type(dispatch.entry_point)("tagged", ["add"])]
    )
    lower_module(module)
    lowered = print_module(module)
    assert "flow.dispatch @tagged::@v2(" in lowered
    vm = load(compile_lowered(lowered))
    assert tag_of(vm.run(ZEROS)) == 2
    vm.close()


@pytest.mark.parametrize("policy", ["online", "explicit", "init", "static"])
@pytest.mark.parametrize("source", ["flow", "function"])
def test_lowered_module_is_accepted_by_iree(policy, source):
    # What the lowering creates is verified by IREE when the module is printed.
    from autotune_bridge import parse_module, print_module

    module = parse_module(tagged_module() if source == "flow" else function_group_module())
    lower_module(module, policy)
    printed = print_module(module)
    assert "autotune.group @" not in printed
    variant = r"flow.dispatch @tagged::@v\d\(" if source == "flow" else r"util.call @f\d\("
    assert re.search(variant, printed), printed


def test_cyclic_gc_is_enabled_again_after_lowering_and_after_a_diagnostic():
    import gc

    assert gc.isenabled()
    assert "autotune.group @add variants" not in lower_to_iree(tagged_module())
    assert gc.isenabled()
    with pytest.raises(DiagnosticError):
        lower_to_iree(tagged_module(), policy="fast")
    assert gc.isenabled()
    gc.disable()
    try:
        lower_to_iree(tagged_module())
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        (tagged_module(3), "run"),
        (tagged_module(3, dynamic=True), "run"),
        (function_group_module(), "call_f"),
    ],
    ids=["static key", "dynamic key", "function group"],
)
def test_the_committed_path_is_the_chain_alone(text, entry):
    """Online: once a key is committed, a call loads the choice (and the committed key),
    compares and branches into the variant; no host call, no clock, no fence and no
    validation on that path: all of exploration is in an out-of-line function."""
    from autotune_bridge import parse_module
    from autotune_dialect.interop import op_name, symbol_name

    module = parse_module(text)
    lower_module(module, policy="online")
    (function,) = [
        op for op in module.walk() if op_name(op) == "util.func" and symbol_name(op) == entry
    ]
    # the branch into the chain or the exploration function (a dynamic key's look-up in
    # the table of committed keys comes before it: loads, compares, `scf.if`s, no call)
    outer = next(
        op
        for op in function.walk()
        if op_name(op) == "scf.if"
        and any(op_name(inner) == "util.call" for inner in op.regions[1].walk())
    )
    before = [op for op in function.walk() if not outer.is_ancestor(op)]
    assert not [op for op in before if op_name(op) == "util.call"]
    committed = list(outer.regions[0].walk())
    assert {op_name(op) for op in committed} <= {
        "arith.constant",
        "arith.cmpi",
        "scf.if",
        "scf.yield",
        "flow.dispatch",
        "util.call",
    }
    variants = {"v0", "v1", "v2", "f0", "f1", "f2"}
    for op in committed:
        if op_name(op) == "util.call":
            assert op.properties["callee"].string_value() in variants
    dispatched = [op for op in committed if op_name(op) in ("flow.dispatch", "util.call")]
    assert len(dispatched) == 3  # one branch per variant
    (explore,) = [op for op in outer.regions[1].walk() if op_name(op) == "util.call"]
    callee = explore.properties["callee"].string_value()
    assert "explore" in callee
    outlined = next(
        op for op in module.walk() if op_name(op) == "util.func" and symbol_name(op) == callee
    )
    host_calls = {
        op.properties["callee"].string_value()
        for op in outlined.walk()
        if op_name(op) == "util.call"
    }
    assert "autotune.now_ns" in host_calls
    assert any(c.startswith("autotune.select_w") for c in host_calls)
