"""What users must be able to trust: no wrong result, no lost decision, no hang, no crash.
One regression test per reproduced failure (docs/runtime.md and docs/lowering.md say what is
guaranteed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from modules import tagged_module
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
    from autotune_dialect import DiagnosticError

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


AXPY = """util.func public @axpy(%alpha: f32, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %alpha, %a : f32
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  util.return %r : tensor<4xf32>
}
"""


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


def _children(pid: int, name: str) -> list[int]:
    """Pids of the processes named `name` whose parent is `pid` (Linux /proc)."""
    from pathlib import Path

    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            comm = fields[0].split("(", 1)[1]
            ppid = int(fields[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and comm == name:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_ending_iree_autotune_ends_its_iree_compile(how, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from benchmarks.kernels import many_groups_module

    source = tmp_path / "many.mlir"
    source.write_text(many_groups_module(60, 4, per_function=10))
    tool = str(Path(sys.executable).parent / "iree-autotune")
    proc = subprocess.Popen(
        [tool, "compile", str(source), "-o", str(tmp_path / "m.vmfb")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    children: list[int] = []
    while not children and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        children = _children(proc.pid, "iree-compile")
    assert children, "iree-compile did not start"
    os.kill(proc.pid, getattr(signal, how))
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in children), f"iree-compile outlived iree-autotune ({how})"
    assert not (tmp_path / "m.vmfb").exists()


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
    from autotune_dialect import parse_module, print_module, xdsl_text

    text = _nested_ifs(depth)
    lowered = lower_to_iree(text, filename="deep.mlir", locations=False)
    assert lowered.count("scf.if") == depth
    module = parse_module(text, "deep.mlir")
    assert xdsl_text(module).count("scf.if") == depth
    assert print_module(module).count("scf.if") == depth


def test_an_error_deep_inside_is_located():
    from autotune_dialect import DiagnosticError

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
    from autotune_dialect import DiagnosticError

    with pytest.raises(DiagnosticError, match="nest deeper than 1000 levels") as info:
        lower_to_iree(text, filename="absurd.mlir")
    assert info.value.location.line == line


def _cli(*args: str, **kwargs):
    import subprocess
    import sys
    from pathlib import Path

    tool = str(Path(sys.executable).parent / "iree-autotune")
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([tool, *args], text=True, **kwargs)


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


# --- the tuning cache ------------------------------------------------------------------

LOCKED_TUNER = """
import json, sys
import numpy as np
from autotune_runtime import load
from autotune_runtime.cache import TuningCache
cache = TuningCache(sys.argv[2], busy_timeout_s=0.3)
module = load(sys.argv[1], device="local-sync", cache=cache, max_samples=2)
n = int(sys.argv[3])
for _ in range(12):
    module.run(np.zeros(n, np.float32))
committed = {f"{g}|{list(w)}": v for (g, w), v in module.decisions().items()}
module.close()  # writes what the locked file could not take
print(json.dumps(committed))
"""

LOCK_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
conn.close()
"""


def test_a_cache_locked_longer_than_the_busy_timeout_loses_no_decision(tmp_path):
    import json
    import subprocess
    import sys

    from autotune_runtime.cache import TuningCache

    vmfb = tmp_path / "dyn.vmfb"
    vmfb.write_bytes(compile(tagged_module(dynamic=True)))
    path = tmp_path / "shared.sqlite3"
    TuningCache(path).close()  # an existing, healthy cache
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(path), "6"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "locked"
    sizes = [8 + k for k in range(8)]
    tuners = [
        subprocess.Popen(
            [sys.executable, "-c", LOCKED_TUNER, str(vmfb), str(path), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in sizes
    ]
    reported: dict[str, str] = {}
    for tuner in tuners:
        out, err = tuner.communicate(timeout=300)
        assert tuner.returncode == 0, err
        assert "is busy" in err  # each waited for the lock instead of losing data
        reported.update(json.loads(out.strip().splitlines()[-1]))
    assert holder.wait(timeout=60) == 0
    assert len(reported) == 8
    stored = {
        f"{e.key.group}|{list(e.key.workload)}": e.variant for e in TuningCache(path).entries()
    }
    assert stored == reported
    assert not list(tmp_path.glob("shared.sqlite3.corrupt-*"))  # nothing set aside


def test_damaged_caches_set_aside_in_the_same_second_keep_distinct_names(tmp_path):
    from autotune_runtime.cache import CacheWarning, TuningCache

    path = tmp_path / "c.sqlite3"
    for content in (b"SQLite format 3\x00first", b"SQLite format 3\x00second"):
        path.write_bytes(content)
        with pytest.warns(CacheWarning, match="moved to"):
            TuningCache(path).close()
    asides = sorted(p.read_bytes() for p in tmp_path.glob("c.sqlite3.corrupt-*"))
    assert asides == [b"SQLite format 3\x00first", b"SQLite format 3\x00second"]


def _decision(group: str, workload: tuple, variant: str):
    from autotune_runtime.cache import CacheKey, Entry

    return Entry(CacheKey("dev", "mod", group, workload), variant, {"n": 1}, {}, 1.0)


def test_a_damaged_row_is_skipped_and_the_rest_keeps_serving(tmp_path):
    import sqlite3

    from autotune_runtime.cache import CacheWarning, TuningCache

    path = tmp_path / "rows.sqlite3"
    cache = TuningCache(path)
    cache.put(_decision("good", (1,), "v1"))
    cache.put(_decision("bad", (2,), "v2"))
    cache.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE decisions SET stats = 'not json{' WHERE grp = 'bad'")
    conn.commit()
    conn.close()
    cache = TuningCache(path)
    with pytest.warns(CacheWarning, match="the decision for bad at \\[2\\] is damaged"):
        assert [e.key.group for e in cache.entries()] == ["good"]
        assert cache.get(_decision("bad", (2,), "v2").key) is None
    assert cache.get(_decision("good", (1,), "v1").key).variant == "v1"
    cache.close()
    for args in (["report", "--cache", str(path)], ["cache", "export", "-", "--cache", str(path)]):
        run = _cli(*args)
        assert run.returncode == 0, run.stderr
        assert "good" in run.stdout and "damaged" in run.stderr


def test_a_read_only_cache_is_read_and_not_written(tmp_path, monkeypatch):
    import os

    from autotune_runtime.cache import CacheWarning, TuningCache

    path = tmp_path / "ro.sqlite3"
    cache = TuningCache(path)
    cache.put(_decision("g", (4,), "v1"))
    cache.close()
    before = path.read_bytes()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if mode == os.W_OK else real_access(p, mode)
    )
    with pytest.warns(CacheWarning, match="read-only: its decisions are used"):
        cache = TuningCache(path)
    assert cache.get(_decision("g", (4,), "v1").key).variant == "v1"
    cache.put(_decision("g", (5,), "v2"))  # kept in memory
    assert cache.get(_decision("g", (5,), "v2").key).variant == "v2"
    cache.close()
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("variant", None, '"variant" must be a non-empty string'),
        ("workload", [True, 2.7], '"workload" must be a list of integers'),
        ("workload", [1.0], '"workload" must be a list of integers'),
    ],
)
def test_cache_import_refuses_malformed_decisions(tmp_path, field, value, message):
    from autotune_runtime.cache import TuningCache

    cache = TuningCache(tmp_path / "a.sqlite3")
    cache.put(_decision("g", (1,), "v1"))
    data = cache.export()
    data["decisions"][0][field] = value
    with pytest.raises(ValueError, match=f"decision #0 is malformed \\({message}"):
        TuningCache(tmp_path / "b.sqlite3").import_(data)
    cache.close()


def test_cache_options_tell_a_cache_file_from_an_export_and_touch_neither(tmp_path):
    from autotune_runtime.cache import TuningCache

    text = tagged_module()
    source = tmp_path / "tagged.mlir"
    source.write_text(text)
    vmfb = tmp_path / "tagged.vmfb"
    assert _cli("compile", str(source), "-o", str(vmfb)).returncode == 0
    module_bytes = vmfb.read_bytes()
    # `report` / `run` given a compiled module or a JSON export: refused, left alone.
    run = _cli("report", "--cache", str(vmfb))
    assert run.returncode == 1 and "is not a tuning cache" in run.stderr
    assert vmfb.read_bytes() == module_bytes
    export = tmp_path / "decisions.json"
    export.write_text('{"format": "iree-autotune-cache", "decisions": []}')
    run = _cli("run", str(vmfb), "--input", "16xf32=0", "--cache", str(export))
    assert run.returncode == 1 and "is not a tuning cache" in run.stderr
    assert export.read_text() == '{"format": "iree-autotune-cache", "decisions": []}'
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "decisions.json",
        "tagged.mlir",
        "tagged.vmfb",
    ]
    # `compile --cache` takes the cache file itself as well as an export.
    cache_file = tmp_path / "tuning.sqlite3"
    cache = TuningCache(cache_file)
    cache.put(_decision("tagged::add", (), "v2"))
    cache.close()
    lowered = tmp_path / "static.mlir"
    run = _cli(
        "lower", str(source), "--policy", "static", "--cache", str(cache_file), "-o", str(lowered)
    )
    assert run.returncode == 0, run.stderr
    assert "flow.dispatch @tagged::@v2(" in lowered.read_text()


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
        (
            '{"group": "other::add", "variant": "v1", "workload": []}',
            "error: no decision of {path} names a group of this module: decisions #0 "
            "(other::add); the module's groups are tagged::add",
        ),
    ],
)
def test_static_decisions_are_checked(tmp_path, decision, message):
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module())
    export = tmp_path / "decisions.json"
    whole_file = "no decision" in message  # else one decision's fault, after a good one
    first_decision = (
        "" if whole_file else '{"group": "tagged::add", "variant": "v1", "workload": [4]},\n  '
    )
    export.write_text('{"decisions": [\n  ' + first_decision + decision + "\n]}")
    run = _cli("lower", str(source), "--policy", "static", "--cache", str(export), "-o", "-")
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    if whole_file:
        assert message.format(path=export) in lines[0]
    else:  # at its line of the JSON file
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


def test_a_damaged_page_costs_only_the_decisions_on_it(tmp_path):
    from autotune_runtime.cache import CacheKey, CacheWarning, Entry, TuningCache

    path = tmp_path / "paged.sqlite3"
    cache = TuningCache(path)
    for i in range(300):
        cache.put(Entry(CacheKey("d", "m", "g", (i,)), f"v{i % 3}", {"pad": "x" * 400}, {}, 1.0))
    cache.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 30 * page
    data[20 * page : 21 * page] = b"\xab" * page  # one page in the middle of the table
    path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning, match="is damaged .* with the \\d+ decisions still readable"):
        cache = TuningCache(path)
    kept = {e.key.workload[0]: e.variant for e in cache.entries()}
    assert 250 <= len(kept) < 300  # only the rows of the damaged page are gone
    assert all(v == f"v{i % 3}" for i, v in kept.items())
    assert cache.get(CacheKey("d", "m", "g", (0,))).variant == "v0"
    cache.put(Entry(CacheKey("d", "m", "g", (999,)), "v1", {}, {}, 2.0))
    cache.close()
    assert len(list(TuningCache(path).entries())) == len(kept) + 1  # the new file is healthy
    (aside,) = tmp_path.glob("paged.sqlite3.corrupt-*")
    assert aside.read_bytes() == bytes(data)  # the damaged file is kept as it was


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
