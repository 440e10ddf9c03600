"""B5 online cost: the first 1000 calls with online tuning against 1000 calls of the best.

The B3 module (4 variants, costs in known ratios; `kernels.speed_module`) loaded with
online tuning, against its static build of the fastest variant (`x1`, frozen with
`compile(policy="static", cache=...)`). Both are timed from their load on, side by side in
one fresh process (`probe.py pair`): 1000 calls of each VM function with the input already
on the device, each call made on both in turn, so that a slow spell of the machine falls
on both (timed in separate processes, one after the other, the regret of one tree moved
between 0.65 and 3.51 from run to run). Several such processes, the module loaded first
alternating. Ratio: median over the pairs of total online
time / total static time (1.0: tuning cost nothing; the excess is the exploration of slower
variants, the host calls and the timing fences, and what the module leaks per call).

Exploration regret, in the same run: (online total - static total) / the sum over the slower
variants of one call's extra time over a warm call of the best. Any tuner without prior
knowledge runs each slower variant at least once, and that one call is its first, cold call
(measured as the first call of its static build in a fresh process, median of 3): so 1.0 is
the floor. `exploration_regret_warm_calls` divides by warm calls' extra time instead. Each run also
has each variant's median as tuning timed it (`explored_median_us`: the runs inside the
exploring calls), next to its static build's warm call (`variant_call_us`). The
variants' results are also checked against the reference variant's (`x16`) once each, which
costs one reference call and a comparison on the host per variant checked.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.b3_protocol import FACTORS, SIZE, speed_vmfb
from benchmarks.common import (
    CaseResult,
    Settings,
    freeze,
    interleaved,
    load_module,
    median,
    probe,
    time_in_process,
)
from benchmarks.kernels import speed_module
from benchmarks.online_setup import decision_rows, device_calls, static_build

CALLS = 1000
GROUP = "work::step"


def run(settings: Settings) -> CaseResult:
    pairs = 2 if settings.quick else 5
    best = f"x{min(FACTORS)}"
    cache = freeze(settings, "b5", decision_rows({(GROUP, ()): best}))
    builds = {"online": speed_vmfb(settings), "static": speed_vmfb(settings, "static", cache)}
    runs = []
    for pair in range(pairs):
        order = ["online", "static"] if pair % 2 == 0 else ["static", "online"]
        measured = time_side_by_side(settings, {name: builds[name] for name in order})
        on, st = measured["online"], measured["static"]
        runs.append(
            {
                "online_total_ms": round(on["sum_ns"] / 1e6, 3),
                "static_total_ms": round(st["sum_ns"] / 1e6, 3),
                "ratio": round(on["sum_ns"] / st["sum_ns"], 4),
                "winner": on["decision"],
                "explored_calls": on["explored_calls"],
                "explored_median_us": {
                    v: round(t / 1e3, 1)
                    for v, t in on["explored_medians_ns"].items()
                    if math.isfinite(t)  # a variant never timed (dropped on its cold run)
                },
                "online_cumulative_ms": np.round(np.cumsum(on["times_ns"]) / 1e6, 3)[::10],
                "static_cumulative_ms": np.round(np.cumsum(st["times_ns"]) / 1e6, 3)[::10],
            }
        )
    ratio = median(r["ratio"] for r in runs)
    call_us, first_us = variant_call_times(
        settings, best, builds["static"], 50 if settings.quick else 300
    )
    extra = sum(t - call_us[best] for v, t in call_us.items() if v != best)
    first_extra = sum(first_us[v] - call_us[best] for v in call_us if v != best)
    excess = median(r["online_total_ms"] - r["static_total_ms"] for r in runs) * 1e3
    regret = excess / first_extra
    first = runs[0]
    detail = {
        "calls": CALLS,
        "best_variant": best,
        "pairs": pairs,
        "runs": [{k: v for k, v in r.items() if "cumulative" not in k} for r in runs],
        "variant_call_us": {v: round(t, 2) for v, t in call_us.items()},
        "variant_first_call_us": {v: round(t, 2) for v, t in first_us.items()},
        "slower_variants_extra_us": round(extra, 2),
        "slower_variants_first_call_extra_us": round(first_extra, 2),
        "online_excess_us": round(excess, 2),
        "exploration_regret": round(regret, 3),
        "exploration_regret_warm_calls": round(excess / extra, 3),
        "plot": {
            "online_cumulative_ms": first["online_cumulative_ms"].tolist(),
            "static_cumulative_ms": first["static_cumulative_ms"].tolist(),
        },
    }
    print(
        f"  B5 1000 calls: online {median(r['online_total_ms'] for r in runs):.1f} ms vs best "
        f"alone {median(r['static_total_ms'] for r in runs):.1f} ms (medians of {pairs}); "
        f"exploration regret {regret:.2f}",
        flush=True,
    )
    return CaseResult(
        id="B5",
        title="online cost",
        ratio=ratio,
        meaning="time of the first 1000 calls with online tuning / 1000 calls of the best variant",
        detail=detail,
    )


def time_side_by_side(settings: Settings, builds: dict[str, bytes]) -> dict[str, dict]:
    """`probe pair`: the first CALLS calls of both builds from their load on, in one fresh
    process, each call made on both in turn (the first named first on even calls)."""
    paths = []
    for name, vmfb in builds.items():
        path = settings.scratch / f"b5_{name}.vmfb"
        if not path.exists():
            path.write_bytes(vmfb)
        paths.append(str(path))
    measured = probe("pair", *paths, "step", str(SIZE), str(CALLS))
    return dict(zip(builds, (measured["first"], measured["second"]), strict=True))


def variant_call_times(
    settings: Settings, best: str, best_vmfb: bytes, rounds: int
) -> tuple[dict, dict]:
    """Per variant (its static build), in µs: the median time of one warm call
    (interleaved in this process), and of its first call in a fresh process (median of 3:
    what running a variant once costs)."""
    builds = {best: best_vmfb}
    for factor in FACTORS:
        name = f"x{factor}"
        if name not in builds:
            rows = decision_rows({(GROUP, ()): name})
            builds[name] = static_build(settings, f"b5_{name}", speed_module(FACTORS, SIZE), rows)
    modules = {name: load_module(vmfb) for name, vmfb in builds.items()}
    calls = device_calls(modules.values(), "step", np.ones(SIZE, np.float32))
    times = interleaved(calls, rounds, warmup=5)
    for module in modules.values():
        module.close()
    first = {
        name: median(
            time_in_process(settings, f"b5_first_{name}", vmfb, "step", SIZE, 1, "fresh")[
                "times_ns"
            ][0]
            for _ in range(3)
        )
        / 1e3
        for name, vmfb in builds.items()
    }
    return {name: median(t) / 1e3 for name, t in zip(modules, times, strict=True)}, first
