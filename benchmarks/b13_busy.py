"""B13 tuning on a busy machine: decisions made beside busy processes against the idle ones.

The harness (`benchmarks.load.BusyLoad`) runs 2 busy processes beside the tuning (on a
2-core machine: every core contended), and the same work runs without it, in one run:

- **Online decisions**: the tutorial's matmul (`examples/matmul_cpu.mlir`, three tile
  sizes) tuned online on `local-task` in fresh processes, 10 idle and 10 under load. A
  decision under load agrees when it is the idle runs' most common choice or within the
  tie band (3%) of it by the idle runs' medians. Goal: at least 9 of 10.
- **Decisions at load**: the same matmul lowered with policy `init` (tuned by
  `__autotune_init` as the module loads), 10 fresh loads idle and 10 under load, read the
  same way. Goal: at least 9 of 10.
- **Choice quality under load**: B4's suite (6 matmul sizes, 4 tile sizes each) chosen by
  online tuning under load, the chosen variants then timed idle against the best by B4's
  exhaustive measurement. Goal: geometric mean <= 1.03.
- **tune-model under load**: B7's models (its four own, an MLP, a conv net, an encoder,
  a dynamic model, and the real models of the tests' corpus; `--quick`: the MLP;
  `--models`: those named) tuned with the defaults idle once and under load twice; each
  written module re-timed idle against the stock build (the median of 5 fresh loads).
  Goals: every module at most 1.00x the stock build, each under-load ratio within 5% of
  the idle-tuned module's, and the dispatches kept by the two runs under load the same for
  at least 80% of the dispatches.

Ratio: choice quality under load (B4's statistic). The detail has every part.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace

import numpy as np

from autotune_bridge import parse_module
from autotune_model import TuneOptions, tune_model
from autotune_model.measure import function_inputs, model_function, time_model_loads
from autotune_model.tuning_setup import DEVICES, flow_phase, input_type_flags
from benchmarks import b4_quality
from benchmarks.common import ROOT, CaseResult, Settings, compile_module, geomean
from benchmarks.kernels import matmul_module
from benchmarks.load import BusyLoad
from benchmarks.models import whole_models
from lowering.driver import compile_lowered

TITLE = "tuning on a busy machine"
MEANING = (
    "choice quality under a load of 2 busy processes (B4's statistic: chosen / best, timed "
    "idle; geometric mean, 6 sizes)"
)
BUSY = 2
TIE_BAND = 0.03

_CHOOSE = """
import json, sys
import numpy as np
from autotune_runtime.session import load
module = load(open(sys.argv[1], "rb").read(), device="local-task", cache=False)
rng = np.random.default_rng(0)
a, b = (rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2))
for _ in range(2000):
    module.matmul(a, b)
    if module.decisions():
        break
(state,) = module.stats()
print(json.dumps({"decision": state["decision"], "medians": {
    v["variant"]: v["median_ns"] if v["samples"] else None for v in state["variants"]}}))
module.close()
"""


def _choices(vmfb_path: str, runs: int) -> list[dict]:
    out = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _CHOOSE, vmfb_path],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def _decisions_part(settings: Settings, runs: int, policy: str) -> dict:
    """The tutorial's matmul lowered with `policy`, decided in `runs` fresh processes idle
    and as many under load (an `init` module is decided as it loads: its first call
    finds the decision made)."""
    source = ROOT / "examples" / "matmul_cpu.mlir"
    path = settings.scratch / f"b13_matmul_{policy}.vmfb"
    path.write_bytes(compile_module(source.read_text(), policy))
    idle = _choices(str(path), runs)
    with BusyLoad(BUSY):
        busy = _choices(str(path), runs)
    idle_choice = Counter(r["decision"] for r in idle).most_common(1)[0][0]
    medians: dict[str, list[float]] = {}
    for r in idle:
        for name, value in r["medians"].items():
            if value is not None:
                medians.setdefault(name, []).append(value)
    typical = {name: float(np.median(values)) for name, values in medians.items()}
    agreeing = {
        name for name, value in typical.items() if value <= typical[idle_choice] * (1.0 + TIE_BAND)
    }
    return {
        "runs": runs,
        "idle_choices": dict(Counter(r["decision"] for r in idle)),
        "busy_choices": dict(Counter(r["decision"] for r in busy)),
        "idle_medians_us": {n: round(v / 1e3, 1) for n, v in typical.items()},
        "agree": sum(r["decision"] in agreeing for r in busy),
    }


def _quality_part(settings: Settings) -> dict:
    rounds = 40 if settings.quick else 200
    text = matmul_module(b4_quality.SIZES, b4_quality.TILES)
    inputs = b4_quality.inputs()
    evidence: dict[int, dict] = {}
    with BusyLoad(BUSY):
        chosen, _ = b4_quality.online_choices(text, inputs, evidence)
    rows = b4_quality.against_best(text, inputs, chosen, rounds, tuning_calls=None)
    for row in rows:  # (what a wrong choice was made on)
        row["stop_rule_evidence"] = evidence[row["size"]]
    return {
        "sizes": rows,
        "chosen_over_best": round(geomean(r["chosen_over_best"] for r in rows), 4),
    }


def _kept(report) -> dict[str, str | None]:
    return {d.export: d.best.name if d.kept and d.best else None for d in report.dispatches}


def _model_part(settings: Settings) -> dict:
    models = whole_models(settings.quick, settings.chosen)
    rows = [_one_model(model) for model in models]
    kept = [r["kept_agreement"] for r in rows]
    return {
        "models": rows,
        "kept_agreement": round(sum(kept) / len(kept), 3),
        "within_5pct_of_idle": all(r["within_5pct_of_idle"] for r in rows),
        "worst_idle_ratio": max(r["worst_idle_ratio"] for r in rows),
    }


def _one_model(model) -> dict:
    options = replace(TuneOptions(compile_cache=False), input_shapes=model.input_shapes)
    stock = compile_lowered(model.text, "llvm-cpu", extra_args=input_type_flags(model.text))
    function = model_function(parse_module(flow_phase(model.text, "llvm-cpu", None, "")), None)
    inputs = function_inputs(function, model.input_shapes)
    runs = []
    for label in ("idle", "busy", "busy"):
        with BusyLoad(BUSY if label == "busy" else 0):
            tuned = tune_model(model.text, options, filename=model.name, quiet=True)
        report = tuned.report
        timing = report.timing
        median, loads = time_model_loads(
            stock, tuned.vmfb, function.name, inputs, report.policy, DEVICES["llvm-cpu"], 5, 10.0
        )
        runs.append(
            {
                "tuned": label,
                "idle_ratio": round(median.ratio, 4),
                "loads": [round(t.ratio, 4) for t in loads],
                "tuning_steadiness": timing.steadiness(),
                "tuning_ratio": round(timing.ratio, 4),
                "base": report.base.label,
                "kept": _kept(report),
            }
        )
        print(
            f"  B13 {model.name} tuned {label} ({report.base.label}): re-timed idle "
            f"{median.ratio:.3f} of stock",
            flush=True,
        )
    first, second = runs[1]["kept"], runs[2]["kept"]
    same = sum(first[e] == second.get(e) for e in first)
    return {
        "model": model.name,
        "runs": runs,
        "kept_agreement": round(same / max(1, len(first)), 3),
        "within_5pct_of_idle": all(
            abs(r["idle_ratio"] / runs[0]["idle_ratio"] - 1.0) <= 0.05 for r in runs[1:]
        ),
        "worst_idle_ratio": max(r["idle_ratio"] for r in runs),
    }


def run(settings: Settings) -> CaseResult:
    runs = 2 if settings.quick else 10
    online = _decisions_part(settings, runs, "online")
    print(f"  B13 online: {online['agree']} of {online['runs']} agree with idle", flush=True)
    at_load = _decisions_part(settings, runs, "init")
    print(f"  B13 at load: {at_load['agree']} of {at_load['runs']} agree with idle", flush=True)
    quality = _quality_part(settings)
    print(f"  B13 choice quality under load: {quality['chosen_over_best']}", flush=True)
    model = _model_part(settings)
    return CaseResult(
        id="B13",
        title=TITLE,
        ratio=quality["chosen_over_best"],
        meaning=MEANING,
        detail={
            "busy_processes": BUSY,
            "online": online,
            "at_load": at_load,
            "quality": quality,
            "model": model,
        },
        extra={
            "online_agree": f"{online['agree']}/{online['runs']}",
            "at_load_agree": f"{at_load['agree']}/{at_load['runs']}",
        },
    )


def _deviations(model: dict) -> str:
    """Per model, the under-load modules' re-timed ratios over the idle-tuned one's."""
    parts = []
    for m in model["models"]:
        idle, *busy = (r["idle_ratio"] for r in m["runs"])
        parts.append(f"{m['model']} " + ", ".join(f"{b / idle:.3f}" for b in busy))
    return "; ".join(parts)


def _at_load(d: dict) -> str:
    """Decisions at load (`init`), where the run measured them."""
    at_load = d.get("at_load")
    if at_load is None:
        return "decisions at load not measured in this run"
    return f"decisions at load (init) {at_load['agree']} of {at_load['runs']}"


def _names(model: dict) -> str:
    return ", ".join(m["model"] for m in model["models"])


def reading(d: dict, ratio: float) -> str:
    online, model = d["online"], d["model"]
    return (
        f"With {d['busy_processes']} busy processes beside it: choice quality {ratio:.3f} "
        f"(goal <= 1.03: {'met' if ratio <= 1.03 else 'missed'}); online decisions agreeing "
        f"with the idle runs' {online['agree']} of {online['runs']} (goal >= 9), "
        f"{_at_load(d)}; the "
        f"models' modules ({_names(model)}) re-timed idle at worst "
        f"{model['worst_idle_ratio']:.3f} of the stock build "
        f"(goal <= 1.00), within 5% of the idle-tuned one: {model['within_5pct_of_idle']} "
        f"(under load / idle-tuned: {_deviations(model)}); "
        f"dispatches kept alike by the two runs under load {model['kept_agreement']:.0%} "
        "(goal >= 80%)."
    )


def table(d: dict) -> list[str]:
    lines = [
        "| model | tuned | built with | re-timed idle (5 loads) | the tuner's own timing |",
        "|---|---|---|---|---|",
    ]
    for m in d["model"]["models"]:
        for r in m["runs"]:
            lines.append(
                f"| {m['model']} | {r['tuned']} | {r['base']} | {r['idle_ratio']:.3f} | "
                f"{r['tuning_steadiness']} |"
            )
    return lines


def plot(case: dict, ax) -> None:
    """The own models' modules re-timed idle, by where they were tuned."""
    rows = [(m["model"], r) for m in case["detail"]["model"]["models"] for r in m["runs"]]
    labels = [f"{name} {r['tuned']} {i % 3}" for i, (name, r) in enumerate(rows)]
    ax.bar(labels, [r["idle_ratio"] for _, r in rows], color="#4c72b0")
    ax.tick_params(axis="x", labelrotation=60, labelsize=6)
    ax.axhline(1.0, color="#999999", linewidth=1)
    ax.set_ylabel("tuned / stock, re-timed idle")
