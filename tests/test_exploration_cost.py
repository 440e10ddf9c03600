"""What an exploring call runs between its two clock reads: the chosen variant's dispatch on
its operands and a result buffer, nothing else. The operands are waited for before the first
read; the dispatch used to read the operands as given to the wait rather than as the wait
returned them, and IREE then copied them first, inside the timed run (a 4 MiB operand: the
variant's time 1.5 ms against 0.2 ms for its own call). Read in the module IREE builds
(`--compile-to=vm`)."""

from __future__ import annotations

import re

import numpy as np
from iree.compiler.tools import compile_str

from autotune_runtime import load
from benchmarks.kernels import many_groups_module, speed_module
from lowering import lower_to_iree
from lowering.driver import compile

SIZE = 65536


def vm_functions(text: str) -> dict[str, str]:
    """The VM module's functions by name: their text."""
    built = compile_str(text, target_backends=["llvm-cpu"], extra_args=["--compile-to=vm"]).decode()
    parts = built.split("\n    vm.func private @")[1:]
    return {part.split("(", 1)[0]: part.split("\n    }", 1)[0] for part in parts}


def test_the_timed_run_holds_the_variant_alone():
    functions = vm_functions(lower_to_iree(speed_module((16, 1), SIZE), policy="online"))
    (explore,) = [n for n in functions if re.fullmatch(r"__autotune\.g0\.step\.explore\d+", n)]
    body = functions[explore]
    reads = [m.start() for m in re.finditer(r"vm\.call @autotune\.now_ns\(", body)]
    assert len(reads) == 3  # the start, and the stop of each branch's run (with or without check)
    for start, stop in zip(reads, reads[1:], strict=False):
        timed = body[start:stop]
        assert timed.count("@hal.device.queue.alloca(") == 1, timed  # the result; no copies
        assert "@hal.device.queue.dealloca(" not in timed
    recorded = [f for n, f in functions.items() if n.startswith(f"__{explore}_memoize_apply")]
    assert recorded and all("@hal.command_buffer.dispatch(" in f for f in recorded)
    assert not any("copy_buffer" in f for f in recorded)


def test_committed_sites_replay_their_command_buffers():
    """A chain of online groups, as `explicit` builds it: each site's command buffer is
    recorded once and replayed (`queue.execute.indirect`), none recorded per call. The
    exploration function used to return its results through an optimization barrier,
    which hid their size; every site after the first then recorded its command buffer
    on every call."""
    functions = vm_functions(lower_to_iree(many_groups_module(4, 3, SIZE), policy="online"))
    caller = functions["run0"]
    assert caller.count("vm.call.variadic @hal.device.queue.execute.indirect(") == 4, caller
    assert "@hal.command_buffer.create(" not in caller


def test_exploring_calls_do_not_keep_results_alive():
    """Calls that explore without end (the stop rule never met) return every result
    buffer: the process does not grow by a result per call."""
    module = load(
        compile(speed_module((2, 3), SIZE * 4), target="llvm-cpu"),
        "local-task",
        False,
        min_samples=100_000,
        max_samples=100_000,
        early_drop=float("inf"),
    )
    x = np.ones(SIZE * 4, np.float32)
    for _ in range(20):
        module.step(x)
    before = resident_mib()
    for _ in range(200):
        module.step(x)
    grown = resident_mib() - before
    assert module.stats()[0]["explored_calls"] == 220
    assert grown < 50, grown  # a kept result per call: 200 MiB
    module.close()


def resident_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def test_exploring_calls_return_what_the_variants_compute():
    module = load(compile(speed_module((16, 1), SIZE), target="llvm-cpu"), "local-sync", False)
    x = np.linspace(-3, 3, SIZE, dtype=np.float32)
    for _ in range(12):
        np.testing.assert_allclose(module.step(x), x, rtol=1e-4)
    assert module.stats()[0]["explored_calls"] >= 3
    module.close()


def test_the_host_side_of_a_validation_is_warmed_at_load(monkeypatch):
    # numpy's first comparison in a process costs about 0.3 ms: run at load, not inside
    # the first exploring call that validates a variant
    import autotune_runtime.host as host

    calls = []
    monkeypatch.setattr(host, "warm_up", lambda: calls.append(1))
    grouped = load(compile(speed_module((16, 1), SIZE), target="llvm-cpu"), "local-sync", False)
    assert calls == [1]
    grouped.close()
    plain = compile_str(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }",
        target_backends=["llvm-cpu"],
    )
    load(plain, "local-sync", False).close()
    assert calls == [1]


def test_the_warm_up_leaves_comparisons_as_they_were():
    from autotune_runtime.compare import agrees, warm_up

    warm_up()
    x = np.linspace(-1, 1, 100, dtype=np.float32)
    assert agrees(x, x, 1e-3)
    assert not agrees(x + 0.01, x, 1e-3)
    assert not agrees(np.full_like(x, np.nan), x, 1e-3)


def test_a_group_of_two_results_runs_while_exploring_and_once_committed():
    """Both results of a kernel live in one buffer; each branch of the validation choice
    running the variant itself made the caller's branch pass that one value twice, and
    IREE's VM then left one of the two empty (`binding table slot requires a buffer but
    none was provided`, on the first call)."""
    from modules import two_result_module

    vmfb = compile(two_result_module(), target="llvm-cpu")
    module = load(vmfb, "local-task", False, max_samples=5)
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    for _ in range(40):
        np.testing.assert_allclose(module.run(x), 3 * x + 1, atol=1e-6)
    (stats,) = module.stats()
    assert stats["explored_calls"] >= 3 and stats["decision"] is not None, stats
    np.testing.assert_allclose(module.run(x), 3 * x + 1, atol=1e-6)
    module.close()
