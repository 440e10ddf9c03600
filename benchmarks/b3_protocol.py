"""B3 tuning cost against Triton's fixed protocol, on the same module in the same process.

One online module of 4 variants whose costs differ by known factors
(`kernels.speed_module`); it is loaded afresh for every tuning run, once with the project's
`Tuner` (successive elimination, default stop rule) and once with `TritonTuner` (25 ms
warm-up + 100 ms of measured repetitions per variant, lowest median; `protocols.py`). The
tuning wall time is the time of the calls from the first until the commit. Runs alternate
between the two protocols. Ratio: median wall time of the project's over Triton's (below
1: cheaper); `same_winner`: both chose the same variant in every run.

Scaling with samples: `module.tune()` (what `iree-autotune tune` runs) of an `explicit`
module of 3 variants that run the same kernel on 1024 elements, with `min_samples =
max_samples` and no early drop, so that it takes 1k, 10k and 100k samples in all (10x at
a time; 1k and 10k with `--quick`). Its wall time should grow like the samples (10x per
step): the stop rule's work per sample does not depend on how many samples there are.
"""

from __future__ import annotations

import math
import time

import numpy as np

from autotune_runtime.tuner import Tuner
from benchmarks.common import CaseResult, Settings, compile_module, load_module, median, tune_online
from benchmarks.kernels import _elementwise_kernel, group_module, speed_module
from benchmarks.protocols import TritonTuner

FACTORS = (16, 1, 64, 32)
SIZE = 65536
SCALING_SAMPLES = (1_000, 10_000, 100_000)
SCALING_SIZE = 1024
SCALING_VARIANTS = ("same_a", "same_b", "same_c")


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


def same_kernels_module() -> str:
    """`@work::@step` of `SCALING_VARIANTS`, all one kernel (`v * 0.999 / 0.999`)."""
    body = ["%m = arith.mulf %a, %scale : f32", "%v = arith.divf %m, %scale : f32"]
    kernels = {n: _elementwise_kernel(n, SCALING_SIZE, body, "%v") for n in SCALING_VARIANTS}
    return group_module(kernels, SCALING_SIZE)


def scaling(settings: Settings) -> list[dict]:
    """Wall time of `tune()` at each total of samples (see the module docstring)."""
    vmfb = compile_module(same_kernels_module(), "explicit")
    rows = []
    totals = SCALING_SAMPLES[:2] if settings.quick else SCALING_SAMPLES
    for total in totals:
        per_variant = total // len(SCALING_VARIANTS)
        module = load_module(
            vmfb, warmup=0, min_samples=per_variant, max_samples=per_variant, early_drop=math.inf
        )
        start = time.perf_counter()
        module.tune()
        seconds = time.perf_counter() - start
        (stats,) = module.stats()
        samples = sum(v["samples"] for v in stats["variants"])
        module.close()
        rows.append(
            {
                "samples": samples,
                "seconds": round(seconds, 3),
                "us_per_sample": round(seconds / samples * 1e6, 2),
            }
        )
        print(f"  B3 tune of {samples} samples: {seconds:.2f} s", flush=True)
    for before, after in zip(rows, rows[1:], strict=False):
        after["time_factor"] = round(after["seconds"] / before["seconds"], 2)
        after["samples_factor"] = round(after["samples"] / before["samples"], 2)
    return rows


def scaling_lines(detail: dict) -> list[str]:
    """The scaling table of the benchmarks page."""
    rows = detail.get("scaling")
    if not rows:
        return []
    lines = [
        "",
        f"Tuning cost with samples: `tune()` of {len(SCALING_VARIANTS)} variants running one "
        f"kernel ({SCALING_SIZE} elements), sampled to the cap.",
        "",
        "| samples | wall time (s) | µs per sample | samples factor | time factor |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        factors = (
            f"{r['samples_factor']:.1f}x | {r['time_factor']:.2f}x"
            if "time_factor" in r
            else "- | -"
        )
        lines.append(
            f"| {r['samples']} | {r['seconds']:.2f} | {r['us_per_sample']:.1f} | {factors} |"
        )
    return lines


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
        "scaling": scaling(settings),
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
