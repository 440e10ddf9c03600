"""What the cases that compare an online module with static builds set up alike (B2, B5,
B10): the static build of a set of decisions, and one VM function of several loaded modules
made ready to call, its input already on each module's device."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from benchmarks.common import Settings, compile_module, device_array, freeze, raw_function


def decision_rows(decisions: Mapping[tuple[str, tuple[int, ...]], str]) -> list[dict]:
    """A module's `decisions()` (group, workload key) -> variant, as the rows of a tuning
    cache export (`{"group", "workload", "variant"}`)."""
    return [{"group": g, "workload": list(k), "variant": v} for (g, k), v in decisions.items()]


def static_build(settings: Settings, name: str, text: str, rows: list[dict]) -> bytes:
    """`text` compiled with policy "static" on an export of `rows` (written to the run's
    scratch folder as `name`.json): each group runs its decided variant, no imports."""
    return compile_module(text, "static", freeze(settings, name, rows))


def device_calls(modules: Iterable, function: str, x: np.ndarray) -> list[Callable[[], object]]:
    """Per module, a call of its VM `function` on `x` uploaded once to its device (device
    arrays in and out, no numpy conversion): what `common.interleaved` times."""
    calls = []
    for module in modules:
        vm_function, arg = raw_function(module, function), device_array(module, x)
        calls.append(lambda f=vm_function, a=arg: f(a))
    return calls
