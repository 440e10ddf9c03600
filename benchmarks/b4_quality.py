"""B4 choice quality: the chosen variant's time over the best variant's.

A suite of 6 matmul sizes with 4 tile-size variants each (`kernels.matmul_module`): which
tile wins depends on the size. The choice is made by online tuning with the default stop
rule (one fresh module, every size called until it commits). The best is found by a long
exhaustive run on the explicit build of the same suite: per size, 200 interleaved calls of
every variant (the choice set through `__autotune_set_*`, untimed, before each call),
medians compared. Ratio: geometric mean over the sizes of median(chosen) / median(best) (1.0: the
best was always chosen); the worst size is in the detail.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import (
    CaseResult,
    Settings,
    compile_module,
    device_array,
    geomean,
    interleaved,
    load_module,
    median,
    raw_function,
)
from benchmarks.kernels import MATMUL_TILES, matmul_module

SIZES = (32, 64, 96, 128, 160, 192)
TILES = tuple(MATMUL_TILES)


def inputs() -> dict[int, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return {n: (rng.random((n, n), np.float32), rng.random((n, n), np.float32)) for n in SIZES}


def online_choices(
    text: str, inputs: dict, evidence: dict[int, dict] | None = None
) -> tuple[dict[int, str], dict[int, int]]:
    """Each size's variant chosen by online tuning with the default stop rule (one fresh
    module, each size called until it commits), and the calls that took; into `evidence`
    where given, per size, what the stop rule had of each variant when it committed."""
    online = load_module(compile_module(text, "online"))
    chosen, tuning_calls = {}, {}
    for n in SIZES:
        a, b = inputs[n]
        call = online.function(f"matmul_{n}")
        before = len(online.decisions())
        calls = 0
        while len(online.decisions()) == before:
            np.testing.assert_allclose(call(a, b), a @ b, rtol=1e-4, atol=1e-3)
            calls += 1
        tuning_calls[n] = calls
        (variant,) = [v for (g, _), v in online.decisions().items() if g == f"mm{n}::matmul"]
        chosen[n] = variant.removeprefix(f"mm{n}_")
        if evidence is not None:
            evidence[n] = _stop_rule_evidence(online, f"mm{n}::matmul", f"mm{n}_")
    online.close()
    return chosen, tuning_calls


def _stop_rule_evidence(module, group: str, prefix: str) -> dict[str, dict]:
    """Each variant of `group` as the stop rule saw it at its commit: runs, timed samples,
    runs held up by other processes (discounted), median and fastest sample, warm-up runs
    (us), whether it was eliminated."""
    (gid,) = [g for g, known in module.groups.items() if known.qualified_name == group]
    (state,) = [s for (g, _), s in module.tuner.states.items() if g == gid]
    return {
        name.removeprefix(prefix): {
            "runs": v.runs,
            "samples": len(v.samples),
            "discounted": v.discounted,
            "median_us": round(v.median / 1e3, 1) if v.samples else None,
            "min_us": round(v.minimum / 1e3, 1) if v.samples else None,
            "warmup_us": [round(c / 1e3, 1) for c in v.cold],
            "eliminated": v.eliminated,
        }
        for name, v in zip(module.groups[gid].variants, state.variants, strict=True)
    }


def against_best(
    text: str, inputs: dict, chosen: dict[int, str], rounds: int, tuning_calls: dict | None
) -> list[dict]:
    """Per size, the chosen variant's median over the best's, every variant timed by
    `rounds` interleaved calls of the explicit build."""
    explicit = load_module(compile_module(text, "explicit"))
    rows = []
    for n in SIZES:
        a, b = inputs[n]
        function = raw_function(explicit, f"matmul_{n}")
        setter = raw_function(explicit, f"__autotune_set_mm{n}_matmul")
        args = (device_array(explicit, a), device_array(explicit, b))

        times = interleaved(
            [lambda f=function, args=args: f(*args)] * len(TILES),
            rounds,
            warmup=3,
            prepare=[lambda i=i, s=setter: s(i) for i in range(len(TILES))],
        )
        medians = {tile: median(t) for tile, t in zip(TILES, times, strict=True)}
        best = min(medians, key=medians.__getitem__)
        ratio = medians[chosen[n]] / medians[best]
        rows.append(
            {
                "size": n,
                "chosen": chosen[n],
                "best": best,
                "chosen_over_best": round(ratio, 4),
                **({"tuning_calls": tuning_calls[n]} if tuning_calls else {}),
                "median_us": {t: round(m / 1e3, 2) for t, m in medians.items()},
            }
        )
        print(
            f"  B4 {n:>4}^3 matmul: chose {chosen[n]:>4}, best {best:>4}, ratio {ratio:.3f}",
            flush=True,
        )
    explicit.close()
    return rows


def run(settings: Settings) -> CaseResult:
    rounds = 40 if settings.quick else 200
    text = matmul_module(SIZES, TILES)
    given = inputs()
    chosen, tuning_calls = online_choices(text, given)
    rows = against_best(text, given, chosen, rounds, tuning_calls)
    overall = geomean(r["chosen_over_best"] for r in rows)
    worst = max(rows, key=lambda r: r["chosen_over_best"])
    detail = {
        "tiles": {t: list(MATMUL_TILES[t]) for t in TILES},
        "exhaustive_calls_per_variant": rounds,
        "sizes": rows,
        "best_chosen": sum(r["chosen"] == r["best"] for r in rows),
        "worst": {"size": worst["size"], "chosen_over_best": worst["chosen_over_best"]},
    }
    return CaseResult(
        id="B4",
        title="choice quality",
        ratio=overall,
        meaning="median time of the chosen variant / of the best, geometric mean over 6 sizes",
        detail=detail,
    )
