"""B3 tuning cost against Triton's fixed protocol, on the same module in the same process.

One online module of 4 variants whose costs differ by known factors
(`kernels.speed_module`); it is loaded afresh for every tuning run, once with the project's
`Tuner` (successive elimination, default stop rule) and once with `TritonTuner` (25 ms
warm-up + 100 ms of measured repetitions per variant, lowest median; `protocols.py`). The
tuning wall time is the time of the calls from the first until the commit. Runs alternate
between the two protocols. Ratio: median wall time of the project's over Triton's (below
1: cheaper); `same_winner`: both chose the same variant in every run.
"""

from __future__ import annotations

import numpy as np

from autotune_runtime.tuner import Tuner
from benchmarks.common import CaseResult, Settings, compile_module, load_module, median, tune_online
from benchmarks.kernels import speed_module
from benchmarks.protocols import TritonTuner

FACTORS = (16, 1, 64, 32)
SIZE = 65536


def speed_vmfb(settings: Settings, policy: str = "online", cache=None) -> bytes:
    """The speed module, compiled once per run (shared with B5)."""
    return settings.memo(
        f"speed:{policy}", lambda: compile_module(speed_module(FACTORS, SIZE), policy, cache)
    )


def tune(vmfb: bytes, tuner_class: type[Tuner]) -> dict:
    module = load_module(vmfb, tuner_class=tuner_class)
    x = np.ones(SIZE, np.float32)
    step = module.function("step")
    calls, seconds = tune_online(module, lambda: step(x))
    ((_, winner),) = module.decisions().items()
    (stats,) = module.stats()
    medians = {v["variant"]: round(v["median_ns"] / 1e3, 2) for v in stats["variants"]}
    module.close()
    return {"seconds": seconds, "calls": calls, "winner": winner, "median_us": medians}


def run(settings: Settings) -> CaseResult:
    repeats = 1 if settings.quick else 3
    vmfb = speed_vmfb(settings)
    ours, triton = [], []
    for r in range(repeats):
        order = [(ours, Tuner), (triton, TritonTuner)]
        for results, cls in order if r % 2 == 0 else order[::-1]:
            results.append(tune(vmfb, cls))
    ratio = median(o["seconds"] for o in ours) / median(t["seconds"] for t in triton)
    same = all(o["winner"] == t["winner"] for o, t in zip(ours, triton, strict=True))
    rounded = lambda runs: [{**r, "seconds": round(r["seconds"], 4)} for r in runs]  # noqa: E731
    detail = {
        "variants": [f"x{f}" for f in FACTORS],
        "size": SIZE,
        "expected_winner": f"x{min(FACTORS)}",
        "repeats": repeats,
        "stop_rule": rounded(ours),
        "triton": rounded(triton),
        "stop_rule_median_s": round(median(o["seconds"] for o in ours), 4),
        "triton_median_s": round(median(t["seconds"] for t in triton), 4),
    }
    print(
        f"  B3 stop rule {detail['stop_rule_median_s']:.3f} s ({ours[0]['calls']} calls) vs "
        f"Triton protocol {detail['triton_median_s']:.3f} s ({triton[0]['calls']} calls); "
        f"winners {[o['winner'] for o in ours]} / {[t['winner'] for t in triton]}",
        flush=True,
    )
    return CaseResult(
        id="B3",
        title="tuning cost vs Triton's protocol",
        ratio=ratio,
        meaning="tuning wall time, stop rule / Triton protocol (25 ms + 100 ms per variant)",
        detail=detail,
        extra={"same_winner": same},
    )
