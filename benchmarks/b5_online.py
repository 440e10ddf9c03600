"""B5 online cost: the first 1000 calls with online tuning against 1000 calls of the best.

The B3 module (4 variants, costs in known ratios; `kernels.speed_module`) loaded with
online tuning, against its static build of the fastest variant (`x1`, frozen with
`compile(policy="static", cache=...)`). Each is timed in a fresh process from the load on
(`probe.py time ... fresh`): 1000 calls of the VM function with the input already on the
device, so that neither numpy copies nor another module's allocations (see B2) hide the
costs. The processes alternate, several times. Ratio: median over the pairs of total online
time / total static time (1.0: tuning cost nothing; the excess is the exploration of slower
variants, the host calls and the timing fences, and what the module leaks per call).
"""

from __future__ import annotations

import numpy as np

from benchmarks.b3_protocol import FACTORS, SIZE, speed_vmfb
from benchmarks.common import CaseResult, Settings, freeze, median, time_in_process

CALLS = 1000


def run(settings: Settings) -> CaseResult:
    pairs = 2 if settings.quick else 5
    best = f"x{min(FACTORS)}"
    cache = freeze(settings, "b5", [{"group": "work::step", "workload": [], "variant": best}])
    builds = {"online": speed_vmfb(settings), "static": speed_vmfb(settings, "static", cache)}
    runs = []
    for pair in range(pairs):
        order = ["online", "static"] if pair % 2 == 0 else ["static", "online"]
        measured = {
            name: time_in_process(
                settings, f"b5_{name}", builds[name], "step", SIZE, CALLS, "fresh"
            )
            for name in order
        }
        on, st = measured["online"], measured["static"]
        runs.append(
            {
                "online_total_ms": round(on["sum_ns"] / 1e6, 3),
                "static_total_ms": round(st["sum_ns"] / 1e6, 3),
                "ratio": round(on["sum_ns"] / st["sum_ns"], 4),
                "winner": on["decision"],
                "explored_calls": on["explored_calls"],
                "online_cumulative_ms": np.round(np.cumsum(on["times_ns"]) / 1e6, 3)[::10],
                "static_cumulative_ms": np.round(np.cumsum(st["times_ns"]) / 1e6, 3)[::10],
            }
        )
    ratio = median(r["ratio"] for r in runs)
    first = runs[0]
    detail = {
        "calls": CALLS,
        "best_variant": best,
        "pairs": pairs,
        "runs": [{k: v for k, v in r.items() if "cumulative" not in k} for r in runs],
        "plot": {
            "online_cumulative_ms": first["online_cumulative_ms"].tolist(),
            "static_cumulative_ms": first["static_cumulative_ms"].tolist(),
        },
    }
    print(
        f"  B5 1000 calls: online {median(r['online_total_ms'] for r in runs):.1f} ms vs best "
        f"alone {median(r['static_total_ms'] for r in runs):.1f} ms (medians of {pairs})",
        flush=True,
    )
    return CaseResult(
        id="B5",
        title="online cost",
        ratio=ratio,
        meaning="time of the first 1000 calls with online tuning / 1000 calls of the best variant",
        detail=detail,
    )
