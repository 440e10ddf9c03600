"""B15 tuning specs on the corpus: a frozen module's configurations taken home as an IREE
tuning spec, applied by the stock `iree-compile` to the model as its frontend wrote it.

Each static real model of the tests' corpus (`--quick`: the Flax BERT) is tuned with
`tune-model --freeze --spec-out` (4 candidates per dispatch, 2 with `--quick`; no
end-to-end timing, so the stock option set: the spec's matchers need the flow phase of
the flags its header names, and these are IREE's defaults). Then:

- **configurations**: the model built by the stock `iree-compile` with the spec, to
  `--compile-to=executable-configurations`, against the frozen module's: for each tuned
  dispatch (a frozen choice other than IREE's own), whether its root op gets the frozen
  variant's `lowering_config`; the dispatches the spec says it does not carry, and why;
- **results**: the spec build and the frozen module called on the same inputs
  (`measure.check_model`, the tuner's own tolerance);
- **speed**: the spec build against the frozen module, side by side in 3 fresh loads
  (`measure.time_model_loads`): the median load's ratio and the interval over every load's
  rounds. Goal: within 2% of the frozen module.

Ratio: the spec build's time per call over the frozen module's (geometric mean over the
models). The detail has every model's counts, results check and timing.
"""

from __future__ import annotations

import time
from pathlib import Path

from autotune_bridge import parse_module
from autotune_contracts.errors import DiagnosticError
from autotune_model import TuneOptions, tune_model
from autotune_model.candidates import variant_name
from autotune_model.measure import (
    check_model,
    compared,
    function_inputs,
    model_function,
    time_model_loads,
)
from autotune_model.tuning_setup import DEVICES, flow_phase, input_type_flags
from benchmarks.common import CaseResult, Settings, geomean
from benchmarks.models import STATIC_REAL, real_model
from lowering.dispatch_configs import default_configs
from lowering.driver import SPEC_FLAG, compile_lowered

TITLE = "tuning specs on the corpus"
MEANING = (
    "time per call, the model built by the stock iree-compile with the tuning spec / the "
    "frozen module it came from (geometric mean over the corpus's static real models)"
)
GOAL = 0.02
LOADS, BUDGET_S = 3, 4.5


def _configurations(text: str, flags: list[str], from_flow: bool) -> dict[str, str]:
    """Each dispatch function's `lowering_config` where the stock iree-compile configures
    `text` (a model as written, or a flow-phase module) built with `flags`."""
    configs = default_configs(text, extra_flags=flags, from_flow=from_flow)
    return {name: config.lowering_config for name, config in configs.items()}


def _tuned_dispatches(report) -> dict[str, str]:
    """Export -> the function the frozen module runs for it, for the dispatches frozen to
    a candidate other than IREE's own at one choice for every size."""
    runs = {}
    for d in report.dispatches:
        variants = {f.variant for f in d.frozen}
        if len(variants) == 1 and variants != {"default"}:
            runs[d.export] = variant_name(d.export, variants.pop())
    return runs


def _one(name: str, candidates: int, scratch: Path) -> dict:
    model = real_model(name)
    started = time.perf_counter()
    options = TuneOptions(candidates=candidates, time_model=False, freeze=True, spec_out=True)
    tuned = tune_model(model.text, options, filename=name, quiet=True)
    tuning_s = time.perf_counter() - started
    row: dict = {"model": name, "tuning_s": round(tuning_s, 1)}
    not_carried = [n for n in tuned.report.notes if n.startswith("the tuning spec does not")]
    row["not_carried"] = not_carried
    if tuned.spec is None:
        row["no_spec"] = [n for n in tuned.report.notes if n.startswith("no tuning spec")]
        return row
    spec = scratch / f"b15-{name}.spec.mlir"
    spec.write_text(tuned.spec)
    flags = [*input_type_flags(model.text), *tuned.report.base.flags]
    with_spec = [*flags, f"{SPEC_FLAG}={spec}"]
    applied = _configurations(model.text, with_spec, from_flow=False)
    frozen = _configurations(tuned.lowered, flags, from_flow=True)
    runs = _tuned_dispatches(tuned.report)
    row["tuned"] = len(runs)
    row["carried"] = sorted(e for e, f in runs.items() if applied.get(e) == frozen.get(f))
    spec_vmfb = compile_lowered(model.text, "llvm-cpu", None, extra_args=with_spec)
    function = model_function(parse_module(flow_phase(model.text, "llvm-cpu", None, name)), None)
    inputs = function_inputs(function, None)
    device = DEVICES["llvm-cpu"]
    row["results"] = (
        check_model(
            tuned.vmfb, spec_vmfb, function.name, inputs, "static", device, options.check_tolerance
        )
        or "same"
    )
    _, loads = time_model_loads(
        tuned.vmfb, spec_vmfb, function.name, inputs, "static", device, LOADS, BUDGET_S
    )
    timing = compared(loads)
    row["ratio"] = round(timing.median, 4)
    row["loads"] = [round(r, 4) for r in timing.loads]
    row["interval"] = [round(v, 4) for v in timing.interval]
    print(
        f"  B15 {name:>18}: {len(row['carried'])} of {len(runs)} tuned dispatches carried; "
        f"results {row['results']}; spec build / frozen module {timing.words()}",
        flush=True,
    )
    return row


def run(settings: Settings) -> CaseResult:
    names = settings.chosen(STATIC_REAL[:1] if settings.quick else STATIC_REAL)
    candidates = 2 if settings.quick else 4
    rows = []
    for name in names:
        try:
            rows.append(_one(name, candidates, settings.scratch))
        except (DiagnosticError, RuntimeError) as err:  # (the row says what failed)
            print(f"  B15 {name:>18}: failed: {err}", flush=True)
            rows.append({"model": name, "tuning_s": 0.0, "no_spec": [f"failed: {err}"]})
    timed = [r["ratio"] for r in rows if "ratio" in r]
    ratio = geomean(timed) if timed else float("inf")
    detail = {
        "models": rows,
        "candidates_per_dispatch": candidates,
        "goal": GOAL,
        "within_goal": [r["model"] for r in rows if abs(r.get("ratio", 9) - 1) <= GOAL],
        "tuned": sum(r.get("tuned", 0) for r in rows),
        "carried": sum(len(r.get("carried", [])) for r in rows),
    }
    return CaseResult("B15", TITLE, ratio, MEANING, detail)


NOT_CARRIED = {
    "IREE applies a tuning spec before": "configured in a form IREE makes after it applies "
    "a spec (batch-1 convolutions)",
    "no matcher tells the two apart": "the same root op as another dispatch that keeps "
    "another configuration",
}
"""Why a tuned dispatch is not carried (a phrase of the note) -> the reading's words."""


def _why_not_carried(rows: list[dict]) -> str:
    """How many tuned dispatches each reason left out, in words."""
    counts = dict.fromkeys(NOT_CARRIED.values(), 0)
    other = 0
    for note in (n for r in rows for n in r.get("not_carried", [])):
        found = [words for phrase, words in NOT_CARRIED.items() if phrase in note]
        if found:
            counts[found[0]] += 1
        else:
            other += 1
    parts = [f"{n} {words}" for words, n in counts.items() if n]
    return "; ".join(parts + ([f"{other} for other reasons"] if other else []))


def reading(d: dict, ratio: float) -> str:
    """The case's sentence on the page."""
    rows = d["models"]
    specs = [r for r in rows if "ratio" in r]
    same = sum(r.get("results") == "same" for r in specs)
    none = [r["model"] for r in rows if "ratio" not in r]
    return (
        f"The stock iree-compile with the spec gave {d['carried']} of {d['tuned']} tuned "
        f"dispatches the frozen module's configuration over {len(specs)} models with a spec "
        f"(not carried: {_why_not_carried(rows) or 'none'}"
        + (f"; no spec for {', '.join(none)}" if none else "")
        + f"); the results matched the frozen module's on {same} of {len(specs)}; its time "
        f"per call {ratio:.3f}x the frozen module's (geometric mean), within "
        f"{d['goal']:.0%} on {len(d['within_goal'])} of {len(specs)}: a dispatch the spec "
        "does not carry runs IREE's configuration."
    )


def table(d: dict) -> list[str]:
    """The case's table on the page."""
    lines = [
        "| model | tuned dispatches | carried by the spec | results | spec / frozen (loads; "
        "interval) | tuning (s) |",
        "|---|---:|---:|---|---|---:|",
    ]
    for r in d["models"]:
        if "ratio" not in r:
            lines.append(f"| {r['model']} | - | - | no spec: {'; '.join(r.get('no_spec', []))} "
                         f"| - | {r['tuning_s']:.0f} |")  # fmt: skip
            continue
        loads = ", ".join(f"{x:.3f}" for x in r["loads"])
        low, high = r["interval"]
        lines.append(
            f"| {r['model']} | {r['tuned']} | {len(r['carried'])} | {r['results']} | "
            f"{r['ratio']:.3f} ({loads}; {low:.3f}-{high:.3f}) | {r['tuning_s']:.0f} |"
        )
    left = [f"{r['model']}: {n}" for r in d["models"] for n in r.get("not_carried", [])]
    if left:
        lines += ["", "Not carried:", "", *(f"- {line}" for line in left)]
    return lines


def plot(case: dict, ax) -> None:
    """Each model's spec build time over its frozen module's, with the interval."""
    rows = [r for r in case["detail"]["models"] if "ratio" in r]
    names = [r["model"] for r in rows]
    ratios = [r["ratio"] for r in rows]
    errors = [
        [r["ratio"] - r["interval"][0] for r in rows],
        [r["interval"][1] - r["ratio"] for r in rows],
    ]
    ax.bar(names, ratios, yerr=errors, color="tab:blue", capsize=3)
    ax.axhline(1.0, color="black", linewidth=0.8)
    for bound in (1 - GOAL, 1 + GOAL):
        ax.axhline(bound, color="tab:green", linestyle="--", linewidth=0.8)
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylabel("spec build / frozen module")
