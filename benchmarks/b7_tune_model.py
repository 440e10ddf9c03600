"""B7 tuning a whole model: the tuned module's end-to-end time over the stock build's.

Four models (`benchmarks.models`: an MLP, a small conv net and a transformer encoder block
from JAX, and a linalg model with a dynamic batch size) are tuned by `tune_model` for
llvm-cpu on the host CPU, with the default options (policy `online`, 8 candidates per
dispatch, top 2 kept) and local workers. Then, apart from the timing that `tune_model`
itself does (its guard), the tuned module (online, settled) and the stock `iree-compile`
build of the same model with the same flags are called in turn on the same inputs, held
on the device, on `local-task` (the device a user runs on): medians of each, for 8 s per
model, split into five fresh loads of the tuned module (each settling online anew), the
load with the median ratio reported: one load whose groups settled off their expected
variants, or one noisy window, does not decide a model's row. Ratio: the geometric mean
over the models of tuned / stock (below 1: the tuned module is faster). The detail has
each model's ratio (and every load's), its tuning wall time and its split (analyse,
compile, benchmark, build, measure) and every dispatch's result.

The real models of the tests' corpus (`tests/data/models`: Flax BERT and ViT, a bf16 ViT,
GPT-2 and SqueezeNet through ONNX, MobileNetV2 through iree-turbine, as their frontends
exported them) are tuned and timed the same way and reported apart, with their own goal
(geometric mean <= 0.70, none above 1.00), and the peak resident memory after each.

Each model is also timed against what a speed-minded user picks instead of tuning: the
fastest of IREE's option sets (stock, data tiling, data tiling with micro-kernels, and on
a model with convolutions each of those with im2col; `autotune_model.base_builds`), each
timed against the stock build, and the tuned module
then against the fastest (goal on the real models: geometric mean <= 0.85, none above
1.00). `tune_model` itself starts from the fastest set (`base`: its report says which).

`--quick` (a smoke run): the MLP alone at its small size, 2 candidates per dispatch, one
load timed for 2 s, none of the real models.
"""

from __future__ import annotations

import resource
import time
from dataclasses import replace

from autotune_bridge import parse_module
from autotune_model import TuneOptions, tune_model
from autotune_model.base_builds import STOCK, bases_for, choose_base, timed_ratio
from autotune_model.measure import function_inputs, model_function, time_model_loads
from autotune_model.steadiness import Comparison
from autotune_model.tuning_setup import DEVICES, flow_phase, input_type_flags
from benchmarks.common import CaseResult, Settings, geomean
from benchmarks.models import whole_models
from lowering.driver import compile_lowered

LOADS = 5  # fresh loads of each tuned module per timing (the median one reported)
GOAL_GEOMEAN = 0.90
GOAL_WORST = 1.02
GOAL_REAL_GEOMEAN = 0.70  # over the real models of the tests' corpus
GOAL_REAL_WORST = 1.00
GOAL_REAL_GEOMEAN_BEST = 0.85  # against the best of IREE's option sets, none above 1.00


def _dispatch_rows(report) -> list[dict]:
    rows = []
    for d in report.dispatches:
        best = d.best
        rows.append(
            {
                "dispatch": d.export,
                "operands": d.operands,
                "default_us": None if d.default_ns is None else round(d.default_ns / 1e3, 1),
                "best": best.name if best else None,
                "best_us": None if d.best_ns is None else round(d.best_ns / 1e3, 1),
                "candidates": len(d.candidates),
                "failed": d.failed,
                "kept": d.kept,
                # what the winner gained in the model (None: not measured); a negative
                # gain beyond the noise left the dispatch out
                "model_gain_us": None
                if d.model_gain is None
                else round(d.model_gain.gained_ns / 1e3, 1),
                "model_gain_noise_us": None
                if d.model_gain is None
                else round(d.model_gain.noise_ns / 1e3, 1),
            }
        )
    return rows


def _by_median(timed):
    """`timed` (a `timed_ratio`) with each comparison reduced to its median load: the set a
    user picks by the median alone."""

    def ratio(stock: bytes, other: bytes, resolve: float | None = None) -> Comparison:
        median = timed(stock, other, resolve).median
        return Comparison([median], (median, median))

    return ratio


def _median_timing(reference, tuned, function, inputs, policy, device, budget_s, loads):
    """`time_model_loads`: the timing of the load with the median ratio, and every
    load's ratio (rounded for the table) and how its online tuning settled (the calls it
    took, or None where it did not settle within `time_model`'s warm-up): a slow load
    then says whether its module ran settled."""
    median, timings = time_model_loads(
        reference, tuned, function, inputs, policy, device, loads, budget_s
    )
    settled = [t.settle_calls if t.settled else None for t in timings]
    return median, [round(t.ratio, 4) for t in timings], settled


def run(settings: Settings) -> CaseResult:
    # From scratch every run: no compile cache (B12 measures what one saves).
    options = TuneOptions(candidates=2 if settings.quick else 8, compile_cache=False)
    budget = 2.0 if settings.quick else 8.0
    loads = 1 if settings.quick else LOADS
    rows = []
    # A smoke run (--quick): the MLP at its small size, none of the real models.
    models = whole_models(settings.quick, settings.chosen)
    for model in models:
        started = time.perf_counter()
        tuned = tune_model(
            model.text, replace(options, input_shapes=model.input_shapes), filename=model.name
        )
        wall = time.perf_counter() - started
        report = tuned.report
        stock = compile_lowered(model.text, "llvm-cpu", extra_args=input_type_flags(model.text))
        stock_flow = flow_phase(model.text, "llvm-cpu", None, "")
        function = model_function(parse_module(stock_flow), None)
        inputs = function_inputs(function, model.input_shapes)
        name = function.name
        device = DEVICES["llvm-cpu"]
        timing, load_ratios, load_settled = _median_timing(
            stock, tuned.vmfb, name, inputs, report.policy, device, budget, loads
        )
        # What a speed-minded user picks instead: the fastest of IREE's option sets, by
        # its median load (tune-model's own choice needs every load and the interval).
        flags = input_type_flags(model.text)
        per_load = timed_ratio(name, inputs, device)
        best, best_vmfb = choose_base(
            model.text,
            "llvm-cpu",
            None,
            flags,
            1.0,
            _by_median(per_load),
            stock,
            among=bases_for(stock_flow),
        )
        against_best, best_load_ratios, best_load_settled = (
            (timing, load_ratios, load_settled)
            if best.name == STOCK
            else _median_timing(
                best_vmfb, tuned.vmfb, name, inputs, report.policy, device, budget, loads
            )
        )
        row = {
            "model": model.name,
            "ratio": round(timing.ratio, 4),
            "stock_us": round(timing.stock_ns / 1e3, 1),
            "tuned_us": round(timing.tuned_ns / 1e3, 1),
            "calls_each": timing.calls,
            "load_ratios": load_ratios,
            "best_load_ratios": best_load_ratios,
            # per load: the calls the online module took to settle (None: it did not)
            "load_settle_calls": load_settled,
            "best_load_settle_calls": best_load_settled,
            "base": report.base.label,
            # the build told the device's thread count over the build not told, per load
            "threads_loads": [round(r, 4) for r in report.base.threads_loads],
            "threads_interval": [round(r, 4) for r in report.base.threads_interval],
            "best_flags": best.name,
            "flag_ratios": best.ratios,
            "ratio_best": round(against_best.ratio, 4),
            "guard_ratio": None if report.timing is None else round(report.timing.ratio, 4),
            "tuning_wall_s": round(wall, 1),
            "split_s": {k: round(v, 1) for k, v in report.seconds.items()},
            "dispatches_tuned": sum(1 for d in report.dispatches if d.kept),
            "dispatches_considered": len(report.dispatches),
            "skipped": report.skipped,
            "dispatches": _dispatch_rows(report),
            "real": model.real,
            # Largest resident set so far (it only grows): this process, and the largest
            # of its iree-compile children.
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "peak_child_rss_mb": round(
                resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            ),
        }
        rows.append(row)
        print(
            f"  B7 {model.name:>8}: tuned/stock {timing.ratio:.3f}, tuned/{best.name} "
            f"{against_best.ratio:.3f} (built with {report.base.label}) "
            f"({row['tuned_us']:.0f} vs {row['stock_us']:.0f} µs), "
            f"{row['dispatches_tuned']}/{row['dispatches_considered']} dispatches tuned, "
            f"tuning {wall:.0f} s",
            flush=True,
        )
    own = [r for r in rows if not r["real"]]
    real = [r for r in rows if r["real"]]
    overall = geomean(r["ratio"] for r in own)
    worst = max(own, key=lambda r: r["ratio"])
    detail = {
        "models": rows,
        "policy": "online",
        "candidates_per_dispatch": options.candidates,
        "top_k": options.top_k,
        "timing_s_per_model": budget,
        "loads": loads,
        "goal_geomean": GOAL_GEOMEAN,
        "goal_worst": GOAL_WORST,
        "worst": {"model": worst["model"], "ratio": worst["ratio"]},
        "met": overall <= GOAL_GEOMEAN and worst["ratio"] <= GOAL_WORST,
        "tuning_wall_s_total": round(sum(r["tuning_wall_s"] for r in rows), 1),
        "real_models": {
            "geomean": round(geomean(r["ratio"] for r in real), 4) if real else None,
            "worst": max((r["ratio"] for r in real), default=None),
            "goal_geomean": GOAL_REAL_GEOMEAN,
            "goal_worst": GOAL_REAL_WORST,
            "geomean_best": round(geomean(r["ratio_best"] for r in real), 4) if real else None,
            "worst_best": max((r["ratio_best"] for r in real), default=None),
            "goal_geomean_best": GOAL_REAL_GEOMEAN_BEST,
        },
    }
    return CaseResult(
        id="B7",
        title="tuning a whole model",
        ratio=overall,
        meaning="end-to-end time, tuned module / stock build (geometric mean, 4 models; the "
        "real models of the tests' corpus apart)",
        detail=detail,
    )
