"""B14 against the frameworks' own runtimes: a tuned model beside the runtime its users run.

Each static real model of the tests' corpus (`STATIC_REAL`; `--quick`: the Flax BERT) is
tuned by `tune_model` with the defaults, then called in one run, interleaved round by
round (each round every contender once, the order turning each round), with host inputs
and results, on the machine's cores (the rounds take every order of the contenders in
turn: a call after another runtime's runs slower while that runtime's threads spin):

- IREE's stock build and the tuned module (`local-task`; the tuned module settled first);
- the framework the model came from, run by `benchmarks/peer_worker.py` in the frontends'
  interpreter (`make frontends`: `tests/data/models/requirements.txt`, or the interpreter
  `$AUTOTUNE_FRONTENDS_PYTHON` names): `jax.jit` (XLA:CPU) for the Flax models,
  onnxruntime for the ONNX ones, torch eager and `torch.compile` for the iree-turbine ones
  (a runtime that cannot build the model is reported, with its error).

Ratio: the tuned module's time over the best native runtime's (geometric mean over the
models; per model the median of the rounds' ratios, with its 95% interval). Goal: at most
1.00 on average and 1.20 on every model. Each row also says where the tuned module's time
is (its dispatches holding the most, as tune-model timed them) and whether its results
agree with the framework's. Without the frontends' interpreter the case says so and
measures nothing.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from autotune_bridge import parse_module
from autotune_model import TuneOptions, tune_model
from autotune_model.bench import host_outputs
from autotune_model.measure import function_inputs, model_function, side_by_side
from autotune_model.sizes import host_values, times_run
from autotune_model.steadiness import median_interval
from autotune_model.tuning_setup import flow_phase, input_type_flags
from benchmarks.common import ROOT, CaseResult, Settings, geomean
from benchmarks.models import STATIC_REAL, real_model
from lowering.driver import compile_lowered

TITLE = "against the frameworks' own runtimes"
MEANING = (
    "time per call, tuned IREE module / the best of the framework's own CPU runtimes "
    "(jax.jit, onnxruntime, torch, torch.compile; geometric mean over the corpus's static "
    "real models)"
)
GOAL_GEOMEAN, GOAL_WORST = 1.00, 1.20
FRONTENDS = ROOT / ".venv-frontends" / "bin" / "python"
WORKER = Path(__file__).resolve().parent / "peer_worker.py"
RUNTIMES = {"flax": ("jax.jit",), "onnx": ("onnxruntime",), "turbine": ("torch", "torch.compile")}
"""A corpus model's framework (its name's last part) -> the runtimes its users run it with."""
DEVICE = "local-task"
THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
BUDGET_S, MIN_ROUNDS = 8.0, 30
TOP_DISPATCHES = 3


def frontends_python() -> Path | None:
    """The frontends' interpreter: `$AUTOTUNE_FRONTENDS_PYTHON`, else `.venv-frontends`."""
    named = os.environ.get("AUTOTUNE_FRONTENDS_PYTHON")
    path = Path(named) if named else FRONTENDS
    return path if path.exists() else None


class Peer:
    """A model run by its framework's runtime in the frontends' interpreter (the worker)."""

    def __init__(self, python: Path, name: str, runtime: str, inputs_path: Path):
        self.runtime = runtime
        self._process = subprocess.Popen(
            [str(python), str(WORKER), name, runtime, str(THREADS), str(inputs_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        first = self._read()
        self.error: str | None = first.get("error") if "ready" not in first else None

    def _read(self) -> dict:
        line = self._process.stdout.readline() if self._process.stdout else ""
        return json.loads(line) if line.strip() else {"error": "the runtime's process ended"}

    def _ask(self, command: str) -> dict:
        assert self._process.stdin is not None
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        return self._read()

    def call(self) -> int:
        """One call's time, as the worker measured it (ns)."""
        return int(self._ask("call")["ns"])

    def results(self, path: Path) -> list[np.ndarray]:
        self._ask(f"result {path}")
        with np.load(path) as saved:
            return [saved[f"result_{i}"] for i in range(len(saved.files))]

    def close(self) -> None:
        if self._process.poll() is None and self._process.stdin is not None:
            self._process.stdin.write("quit\n")
            self._process.stdin.close()
        self._process.wait(timeout=60)


def interleaved(
    contenders: dict[str, Callable[[], int]], budget_s: float, min_rounds: int, clock
) -> dict[str, list[int]]:
    """Call every contender once per round (each returns its call's time, ns), the rounds
    taking every order of the contenders in turn, until `min_rounds` rounds and `budget_s`
    seconds (by `clock`, ns) have passed: each contender's times, round by round. Every
    order, not a rotation: a call runs slower after another runtime's (its idle threads
    still spin: IREE's stock SqueezeNet took 3.9-4.4 ms alone, 5.3-6.7 ms after
    onnxruntime's), and with three contenders turned by one a round the first followed
    the third in two rounds of three, the second in one."""
    orders = list(itertools.permutations(contenders))
    times: dict[str, list[int]] = {n: [] for n in contenders}
    start = clock()
    rounds = 0
    while rounds < min_rounds or (clock() - start) / 1e9 < budget_s:
        for name in orders[rounds % len(orders)]:
            times[name].append(contenders[name]())
        rounds += 1
    return times


def over(times: dict[str, list[int]], name: str, reference: str) -> dict:
    """`name`'s time over `reference`'s: the median of the rounds' ratios, its interval."""
    ratios = [a / b for a, b in zip(times[name], times[reference], strict=True)]
    low, high = median_interval(ratios)
    return {
        "ratio": round(statistics.median(ratios), 4),
        "interval": [round(low, 4), round(high, 4)],
    }


def _iree_call(context_function, host_args, device) -> Callable[[], int]:
    def call() -> int:
        begin = time.perf_counter_ns()
        host_outputs(context_function(*host_args), device)
        return time.perf_counter_ns() - begin

    return call


def _saved_inputs(host_args: list[np.ndarray], path: Path) -> Path:
    """The arguments as an .npz the worker reads (bfloat16, which .npz cannot hold, as
    float32: the worker casts each to its example's type)."""
    np.savez(
        path,
        **{
            f"arg_{i}": a.astype(np.float32) if a.dtype.kind == "V" else a
            for i, a in enumerate(host_args)
        },
    )
    return path


def _where_the_time_is(report) -> list[dict]:
    """The tuned module's dispatches holding the most time (as tune-model timed them)."""
    rows = []
    for d in report.dispatches:
        if d.best_ns:
            rows.append({"dispatch": d.export, "us": round(d.best_ns * d.per_call / 1e3, 1)})
    return sorted(rows, key=lambda r: -r["us"])[:TOP_DISPATCHES]


def _dispatches_per_call(function, host_args: list[np.ndarray]) -> int:
    """The dispatches one call of the stock build's flow phase runs (those in a loop of the
    host code as many times as it runs them): IREE's cost per dispatch is paid this often."""
    values = host_values(function.body, function.arguments, [a.shape for a in host_args])
    return sum(times_run(d, values) for d in function.dispatches())


def _agreement(got: list[np.ndarray], native: list[np.ndarray]) -> float | None:
    """The largest difference of the tuned module's results from the framework's, over the
    framework's largest magnitude (None: the results differ in number or shape)."""
    if len(got) != len(native) or any(a.shape != b.shape for a, b in zip(got, native, strict=True)):
        return None
    worst = 0.0
    for a, b in zip(got, native, strict=True):
        b64, a64 = b.astype(np.float64), a.astype(np.float64)
        scale = max(1.0, float(np.max(np.abs(b64)))) if b64.size else 1.0
        worst = max(worst, float(np.max(np.abs(a64 - b64))) / scale if b64.size else 0.0)
    return worst


def _one(name: str, python: Path, scratch: Path) -> dict:
    model = real_model(name)
    tuned = tune_model(model.text, TuneOptions(), filename=name, quiet=True)
    stock = compile_lowered(model.text, "llvm-cpu", extra_args=input_type_flags(model.text))
    function = model_function(parse_module(flow_phase(model.text, "llvm-cpu", None, name)), None)
    host_args = [op.array(seed) for seed, op in enumerate(function_inputs(function, None))]
    inputs_path = _saved_inputs(host_args, scratch / f"b14-{name}-inputs.npz")
    row: dict = {
        "model": name,
        "base": tuned.report.base.label,
        "runtimes": {},
        "dispatches_per_call": _dispatches_per_call(function, host_args),
    }
    peers = [Peer(python, name, r, inputs_path) for r in RUNTIMES[name.rsplit("_", 1)[1]]]
    try:
        with side_by_side(
            stock, tuned.vmfb, function.name, host_args, tuned.report.policy, DEVICE
        ) as pair:
            device = pair.tuned.config.device
            contenders = {
                "stock": _iree_call(pair.run_stock, host_args, device),
                "tuned": _iree_call(pair.run_tuned, host_args, device),
            }
            ready = [p for p in peers if p.error is None]
            contenders.update({p.runtime: p.call for p in ready})
            times = interleaved(contenders, BUDGET_S, MIN_ROUNDS, time.perf_counter_ns)
            got = host_outputs(pair.run_tuned(*host_args), device)
            for p in peers:
                row["runtimes"][p.runtime] = (
                    {"error": p.error}
                    if p.error is not None
                    else _native_row(times, p, got, scratch / f"b14-{name}-{p.runtime}.npz")
                )
            row["stock_us"] = round(statistics.median(times["stock"]) / 1e3, 1)
            row["tuned_us"] = round(statistics.median(times["tuned"]) / 1e3, 1)
            row["tuned_over_stock"] = over(times, "tuned", "stock")
            row["rounds"] = len(times["stock"])
    finally:
        for p in peers:
            p.close()
    built = {r: v for r, v in row["runtimes"].items() if "us" in v}
    if built:
        row["best"] = min(built, key=lambda r: built[r]["us"])
        row["ratio"] = built[row["best"]]["tuned_over"]["ratio"]
        row["interval"] = built[row["best"]]["tuned_over"]["interval"]
    row["time_in"] = _where_the_time_is(tuned.report)
    return row


def _native_row(times: dict, peer: Peer, got: list[np.ndarray], path: Path) -> dict:
    return {
        "us": round(statistics.median(times[peer.runtime]) / 1e3, 1),
        "tuned_over": over(times, "tuned", peer.runtime),
        "stock_over": over(times, "stock", peer.runtime),
        "results_difference": _agreement(got, peer.results(path)),
    }


def run(settings: Settings) -> CaseResult:
    python = frontends_python()
    if python is None:
        reason = (
            "no frontends' interpreter (`make frontends`, or $AUTOTUNE_FRONTENDS_PYTHON): "
            "nothing measured"
        )
        print(f"  B14: {reason}", flush=True)
        return CaseResult("B14", TITLE, math.inf, MEANING, {"skipped": reason, "models": []})
    rows = []
    for name in settings.chosen(STATIC_REAL[:1] if settings.quick else STATIC_REAL):
        try:
            row = _one(name, python, settings.scratch)
        except Exception as err:  # any step of one model: its row says what failed
            row = {"model": name, "failed": f"{type(err).__name__}: {err}", "runtimes": {}}
        rows.append(row)
        print(f"  B14 {name:>18}: {_row_words(row)}", flush=True)
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    detail = {
        "models": rows,
        "threads": THREADS,
        "python": sys.version.split()[0],
        "goal_geomean": GOAL_GEOMEAN,
        "goal_worst": GOAL_WORST,
        "stock_over_best": round(
            geomean(r["runtimes"][r["best"]]["stock_over"]["ratio"] for r in rows if "best" in r), 4
        )
        if ratios
        else None,
    }
    return CaseResult("B14", TITLE, geomean(ratios) if ratios else math.inf, MEANING, detail)


def _row_words(row: dict) -> str:
    if "failed" in row:
        return f"failed: {row['failed']}"
    if "best" not in row:
        return "no native runtime ran: " + "; ".join(
            f"{r}: {v['error']}" for r, v in row["runtimes"].items()
        )
    return (
        f"tuned {row['tuned_us']:.0f} us, stock {row['stock_us']:.0f} us, "
        + ", ".join(
            f"{r} {v['us']:.0f} us" if "us" in v else f"{r} failed"
            for r, v in row["runtimes"].items()
        )
        + f"; tuned / {row['best']} {row['ratio']:.3f}"
    )


def reading(d: dict, ratio: float) -> str:
    if "skipped" in d:
        return f"Not measured: {d['skipped']}."
    rows = [r for r in d["models"] if "ratio" in r]
    worst = max(rows, key=lambda r: r["ratio"])
    met = ratio <= d["goal_geomean"] and worst["ratio"] <= d["goal_worst"]
    beaten = [r["model"] for r in rows if r["interval"][1] < 1.0]
    behind = [r for r in rows if r["ratio"] > d["goal_worst"]]
    return (
        f"The tuned IREE modules take {ratio:.3f}x the time of the best of the framework's own "
        f"CPU runtimes (geometric mean over {len(rows)} model{'s' * (len(rows) != 1)}; IREE's "
        "stock build "
        f"{d['stock_over_best']:.3f}x); worst {worst['model']} {worst['ratio']:.3f}x. Goal "
        f"(<= {d['goal_geomean']:.2f} on average, <= {d['goal_worst']:.2f} each): "
        f"{'met' if met else 'missed'}. Faster than every native runtime (interval below 1): "
        f"{', '.join(beaten) or 'none'}. Over {d['goal_worst']:.2f}x: "
        + ("; ".join(f"{r['model']} (time in {_top(r)})" for r in behind) or "none")
        + "."
    )


def _top(row: dict) -> str:
    """Where the tuned module's time is: the stock build's dispatches per call, and the
    tuned module's dispatches holding the most."""
    count = row.get("dispatches_per_call")
    top = ", ".join(f"`{t['dispatch']}` {t['us']:.0f} us" for t in row["time_in"]) or "-"
    return f"{count} dispatches per call; {top}" if count else top


def table(d: dict) -> list[str]:
    if "skipped" in d:
        return []
    lines = [
        "| model | tuned µs | stock µs | native runtimes, µs | tuned / best (interval) | "
        "results vs native | where the tuned module's time is |",
        "|---|---:|---:|---|---|---|---|",
    ]
    for r in d["models"]:
        if "failed" in r:
            lines.append(f"| {r['model']} | - | - | failed: {r['failed']} | - | - | - |")
            continue
        native = ", ".join(
            f"{k} {v['us']:.0f}" if "us" in v else f"{k}: {v['error']}"
            for k, v in r["runtimes"].items()
        )
        diffs = [v["results_difference"] for v in r["runtimes"].values() if "us" in v]
        agree = ", ".join("shapes differ" if x is None else f"{x:.1e}" for x in diffs) or "-"
        best = (
            f"{r['ratio']:.3f} ({r['interval'][0]:.3f}-{r['interval'][1]:.3f}) vs {r['best']}"
            if "best" in r
            else "-"
        )
        lines.append(
            f"| {r['model']} | {r['tuned_us']:.0f} | {r['stock_us']:.0f} | {native} | {best} | "
            f"{agree} | {_top(r)} |"
        )
    return lines


def plot(case: dict, ax) -> None:
    """Per model: the tuned module and the stock build over the best native runtime."""
    rows = [r for r in case["detail"]["models"] if "best" in r]
    names = [r["model"] for r in rows]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["ratio"] for r in rows], 0.4, label="tuned", color="tab:blue")
    stock = [r["runtimes"][r["best"]]["stock_over"]["ratio"] for r in rows]
    ax.bar(x + 0.2, stock, 0.4, label="stock", color="tab:gray")
    ax.set_xticks(x, names)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(GOAL_WORST, color="tab:green", linestyle="--", linewidth=0.8)
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylabel("IREE / best native runtime")
    ax.legend(fontsize=7)
