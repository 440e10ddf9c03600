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
from benchmarks.kernels import speed_module
from lowering import lower_to_iree
from lowering.driver import compile

SIZE = 65536


def vm_functions(text: str) -> dict[str, str]:
    """The VM module's functions by name: their text."""
    built = compile_str(
        text, target_backends=["llvm-cpu"], extra_args=["--compile-to=vm"]
    ).decode()
    parts = built.split("\n    vm.func private @")[1:]
    return {part.split("(", 1)[0]: part.split("\n    }", 1)[0] for part in parts}


def test_the_timed_run_holds_the_variant_alone():
    functions = vm_functions(lower_to_iree(speed_module((16, 1), SIZE), policy="online"))
    (explore,) = [n for n in functions if re.fullmatch(r"__autotune\.g0\.step\.explore\d+", n)]
    body = functions[explore]
    start, stop = (m.start() for m in re.finditer(r"vm\.call @autotune\.now_ns\(", body))
    timed = body[start:stop]
    assert timed.count("@hal.device.queue.alloca(") == 1, timed  # the result, no copy of inputs
    assert "@hal.device.queue.dealloca(" not in timed
    recorded = [f for n, f in functions.items() if n.startswith(f"__{explore}_memoize_apply")]
    assert recorded and all("@hal.command_buffer.dispatch(" in f for f in recorded)
    assert not any("copy_buffer" in f for f in recorded)


def test_exploring_calls_return_what_the_variants_compute():
    module = load(compile(speed_module((16, 1), SIZE), target="llvm-cpu"), "local-sync", False)
    x = np.linspace(-3, 3, SIZE, dtype=np.float32)
    for _ in range(12):
        np.testing.assert_allclose(module.step(x), x, rtol=1e-4)
    assert module.stats()[0]["explored_calls"] >= 3
    module.close()
