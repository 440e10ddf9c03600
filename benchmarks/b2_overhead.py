"""B2 steady-state overhead: a committed online module against the static build of its winner.

A 4096-element add (3 variants, `kernels.add_module`), where a call is a few microseconds
and any per-call cost of the selection shows most. The online module is tuned until it
commits; its winner is frozen into a static build (`compile(policy="static", cache=...)`,
no imports, no globals); both results are checked. Then each build is timed in its own
fresh process (`probe.py time`): tuned until committed (untimed), then many calls of the VM
function with the input already on the device. The processes alternate, several times.
Ratio: median over the pairs of median online call time / median static call time (1.0: no
overhead).

Why separate processes and not calls interleaved in one: the online module leaks one result
buffer per call (see the detail's `leak_kib_per_call`, and B6), and in a shared process the
static build's allocations pay for it too, which hides the overhead. The in-process
interleaved ratio is kept in the detail (`same_process_ratio`) for comparison.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import (
    CaseResult,
    Settings,
    compile_module,
    device_array,
    freeze,
    interleaved,
    load_module,
    median,
    raw_function,
    time_in_process,
    tune_online,
)
from benchmarks.kernels import add_module

SIZE = 4096
VARIANTS = 3


def _rss_kib() -> int:
    try:
        status = open("/proc/self/status").read()
    except OSError:
        return 0
    return int(status.split("VmRSS:")[1].split()[0])


def run(settings: Settings) -> CaseResult:
    calls = 1000 if settings.quick else 5000
    pairs = 2 if settings.quick else 5
    text = add_module(SIZE, VARIANTS)
    online_vmfb = compile_module(text, "online")
    online = load_module(online_vmfb)
    x = np.arange(SIZE, dtype=np.float32)
    tuning_calls, _ = tune_online(online, lambda: online.run(x))
    ((_, winner),) = online.decisions().items()
    cache = freeze(settings, "b2", [{"group": "adds::add", "workload": [], "variant": winner}])
    static_vmfb = compile_module(text, "static", cache)
    static = load_module(static_vmfb)
    for module in (online, static):
        np.testing.assert_array_equal(module.run(x), x + 1)

    # The same comparison inside this process, interleaved call by call.
    functions = [raw_function(m, "run") for m in (online, static)]
    args = [device_array(m, x) for m in (online, static)]
    rss_before = _rss_kib()
    same = interleaved(
        [lambda f=f, a=a: f(a) for f, a in zip(functions, args, strict=True)], calls, warmup=100
    )
    leak = (_rss_kib() - rss_before) / (calls + 100)
    online.close()
    static.close()

    runs = []
    for pair in range(pairs):
        order = ["online", "static"] if pair % 2 == 0 else ["static", "online"]
        measured = {}
        for name in order:
            vmfb = online_vmfb if name == "online" else static_vmfb
            measured[name] = time_in_process(
                settings, f"b2_{name}", vmfb, "run", SIZE, calls, "committed"
            )
        runs.append(measured)
    ratios = [r["online"]["median_ns"] / r["static"]["median_ns"] for r in runs]
    ratio = median(ratios)
    on = median(r["online"]["median_ns"] for r in runs)
    st = median(r["static"]["median_ns"] for r in runs)
    online_times = np.concatenate([r["online"]["times_ns"] for r in runs])
    static_times = np.concatenate([r["static"]["times_ns"] for r in runs])
    q = lambda t, p: round(float(np.percentile(t, p)) / 1e3, 3)  # noqa: E731
    detail = {
        "kernel": f"add, {SIZE} x f32, {VARIANTS} variants",
        "winner": winner,
        "tuning_calls": tuning_calls,
        "processes_each": pairs,
        "calls_per_process": calls,
        "pair_ratios": [round(r, 4) for r in ratios],
        "online_median_us": round(on / 1e3, 3),
        "static_median_us": round(st / 1e3, 3),
        "overhead_ns": round(on - st, 1),
        "online_p10_p90_us": [q(online_times, 10), q(online_times, 90)],
        "static_p10_p90_us": [q(static_times, 10), q(static_times, 90)],
        "same_process_ratio": round(median(same[0]) / median(same[1]), 4),
        "leak_kib_per_call": round(leak, 2),
    }
    print(
        f"  B2 online {on / 1e3:.2f} us vs static {st / 1e3:.2f} us per call "
        f"({pairs} x {calls} calls each, separate processes; in one process "
        f"{detail['same_process_ratio']:.3f}; RSS growth {leak:.1f} KiB per call)",
        flush=True,
    )
    return CaseResult(
        id="B2",
        title="steady-state overhead",
        ratio=ratio,
        meaning="per-call time of a committed online module / the static build of its winner",
        detail=detail,
    )
