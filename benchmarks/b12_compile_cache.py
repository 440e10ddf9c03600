"""B12 the compile cache: a second tuning run's compile time over the first's.

Two of B7's models (`benchmarks.models`: the MLP and the conv net from JAX; the MLP alone,
at its small size, with `--quick`) are each tuned by `tune_model` twice for llvm-cpu on the
host CPU, with the default options (8 candidates per dispatch, 2 with `--quick`; round two
on; local workers) but no end-to-end timing (`time_model=False`: both runs then build with
IREE's default options, so they build the same candidates), the two runs sharing one
compile cache folder that is fresh for the model (in the run's scratch folder). The first
run builds every candidate and keeps it; the second takes them from the cache.

Ratio: the second runs' compile seconds over the first runs' (the report's `jobs.compile_s`:
every round, the cache's look-ups and the candidates' text included), summed over the
models; goal < 0.20. The detail has, per model and run, the seconds compiling and
benchmarking (the benchmarks are timed afresh in each run), the candidates compiled and how
many came from the cache, the tuning wall time, and whether both runs kept the same
variants: a close call between two candidates may go the other way, and round two then
joins another pair, which is built anew.
"""

from __future__ import annotations

import time

from autotune_model import TuneOptions, tune_model
from benchmarks.common import CaseResult, Settings
from benchmarks.models import convnet, mlp

GOAL = 0.20
TITLE = "the compile cache"
MEANING = "compile seconds of a second tuning run with the first's compile cache / the first's"


def _run(model, options: TuneOptions) -> dict:
    started = time.perf_counter()
    report = tune_model(model.text, options, filename=model.name, quiet=True).report
    jobs = report.jobs
    return {
        "compile_s": round(jobs.compile_s, 3),
        "benchmark_s": round(jobs.benchmark_s, 3),
        "compiled": jobs.compiled,
        "cached": jobs.cached,
        "tuning_wall_s": round(time.perf_counter() - started, 1),
        "kept": {d.export: d.kept for d in report.dispatches},
    }


def run(settings: Settings) -> CaseResult:
    candidates = 2 if settings.quick else 8
    models = [mlp(quick=True)] if settings.quick else [mlp(), convnet()]
    rows = []
    for model in models:
        folder = settings.scratch / f"b12-compiled-{model.name}"
        options = TuneOptions(
            candidates=candidates, time_model=False, compile_cache_folder=str(folder)
        )
        first, second = _run(model, options), _run(model, options)
        row = {
            "model": model.name,
            "first": first,
            "second": second,
            "ratio": round(second["compile_s"] / first["compile_s"], 4),
            "same_kept": first["kept"] == second["kept"],
        }
        rows.append(row)
        print(
            f"  B12 {model.name:>8}: compile {first['compile_s']:.1f} s -> "
            f"{second['compile_s']:.2f} s ({second['cached']} of {second['compiled']} from "
            f"the cache), ratio {row['ratio']:.3f}; benchmark {first['benchmark_s']:.1f} s, "
            f"{second['benchmark_s']:.1f} s",
            flush=True,
        )
    first_s = sum(r["first"]["compile_s"] for r in rows)
    second_s = sum(r["second"]["compile_s"] for r in rows)
    ratio = second_s / first_s
    detail = {
        "models": rows,
        "candidates_per_dispatch": candidates,
        "first_compile_s": round(first_s, 2),
        "second_compile_s": round(second_s, 2),
        "first_benchmark_s": round(sum(r["first"]["benchmark_s"] for r in rows), 2),
        "second_benchmark_s": round(sum(r["second"]["benchmark_s"] for r in rows), 2),
        "goal": GOAL,
        "met": ratio < GOAL,
    }
    return CaseResult(id="B12", title=TITLE, ratio=ratio, meaning=MEANING, detail=detail)


# --- the report (`benchmarks/report.py` -> docs/benchmarks.md) --------------------------------


def reading(d: dict, ratio: float) -> str:
    """The case's sentence on the page."""
    goal = "met" if ratio < d["goal"] else "**missed**"
    second = [r["second"] for r in d["models"]]
    built = sum(x["compiled"] - x["cached"] for x in second)
    return (
        f"Tuning {', '.join(r['model'] for r in d['models'])} a second time with the first "
        f"run's compile cache compiles in {d['second_compile_s']:.1f} s where the first took "
        f"{d['first_compile_s']:.1f} s: {ratio:.3f}; goal < {d['goal']:.2f}: {goal}. The "
        f"second runs built {built} of {sum(x['compiled'] for x in second)} candidates "
        "(round two's joins of pairs that the first runs' timings did not pick). "
        f"Benchmarking took {d['first_benchmark_s']:.1f} s and {d['second_benchmark_s']:.1f} s."
    )


def table(d: dict) -> list[str]:
    """The case's table on the page."""
    lines = [
        "| model | run | compile (s) | benchmark (s) | compiled (from the cache) | tuning (s) |",
        "|---|---|---:|---:|---|---:|",
    ]
    for r in d["models"]:
        for name in ("first", "second"):
            x = r[name]
            lines.append(
                f"| {r['model']} | {name} | {x['compile_s']:.2f} | {x['benchmark_s']:.2f} | "
                f"{x['compiled']} ({x['cached']}) | {x['tuning_wall_s']:.0f} |"
            )
    same = [r["model"] for r in d["models"] if r["same_kept"]]
    lines += [
        "",
        f"{d['candidates_per_dispatch']} candidates per dispatch, round two on, no end-to-end "
        f"timing; both runs kept the same variants for: {', '.join(same) or 'none'}.",
    ]
    return lines


def plot(case: dict, ax) -> None:
    """Compile and benchmark seconds of each run, per model."""
    d = case["detail"]
    labels = [f"{r['model']} {run}" for r in d["models"] for run in ("first", "second")]
    compile_s = [r[run]["compile_s"] for r in d["models"] for run in ("first", "second")]
    bench_s = [r[run]["benchmark_s"] for r in d["models"] for run in ("first", "second")]
    ax.bar(labels, compile_s, color="#4c72b0", label="compile")
    ax.bar(labels, bench_s, bottom=compile_s, color="#dd8452", label="benchmark")
    ax.set_ylabel("seconds")
    ax.legend()
