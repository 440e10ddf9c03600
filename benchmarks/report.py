"""`docs/benchmarks.md` and its plots, generated from `benchmarks/results/latest.json` alone.

Everything shown is read from the JSON (the plots too), so the page and the results file
cannot disagree: `python -m benchmarks.report` regenerates the page from the file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks import b3_protocol, b10_model_online, b12_compile_cache
from benchmarks.common import DOCS, PLOTS, RESULTS

TITLES = {
    "B1": "lowering cost",
    "B2": "steady-state overhead",
    "B3": "tuning cost vs Triton's protocol",
    "B4": "choice quality",
    "B5": "online cost",
    "B6": "memory",
    "B7": "tuning a whole model",
    "B8": "warm start over sizes",
    "B9": "lowering throughput",
    "B10": "a whole model online",
    "B12": b12_compile_cache.TITLE,
}

MEANINGS = {
    "B1": "`lower` time / `iree-compile` time of its output (largest size)",
    "B2": "per-call time, committed online module / static build of its winner",
    "B3": "tuning wall time, stop rule / Triton protocol (25 ms + 100 ms per variant)",
    "B4": "median time of the chosen variant / of the best (geometric mean, 6 sizes)",
    "B5": "first 1000 calls with online tuning / 1000 calls of the best variant",
    "B6": "peak RSS, tuned run / static run (1000 calls)",
    "B7": "end-to-end time, tuned module / stock build (geometric mean, 4 models; the "
    "real models of the tests' corpus apart)",
    "B8": "time of a shuffled stream over 40 sizes, warm start / each size's best always",
    "B9": "`iree-autotune lower` / `iree-opt` wall time on the same 5 MB file",
    "B10": "time per call of a real model's online module once every group has decided / "
    "its frozen build",
    "B12": b12_compile_cache.MEANING,
}


# --- one sentence per case ------------------------------------------------------------------


def reading(case: dict) -> str:
    d, r = case["detail"], case["ratio"]
    cid = case["id"]
    if cid == "B1":
        big = d["sizes"][-1]
        steps = ", ".join(
            f"{g['time_factor']:.1f}x for {g['groups_factor']:.3g}x the groups "
            f"({g['groups'][0]} → {g['groups'][1]})"
            for g in d["growth"]
        )
        verdict = "linear" if d["linear"] else "**not linear**"
        share = f"{100 * r:.1f}%" if big["finished"] else f"at most {100 * r:.1f}%"
        cut = (
            ""
            if big["finished"]
            else f" (`iree-compile` was stopped after {big['iree_compile_s']:.0f} s, the time "
            "left in the run)"
        )
        return (
            f"`lower` takes {share} of `iree-compile`'s time at {big['groups']} groups{cut}; "
            f"its time grows {steps}: {verdict}."
        )
    if cid == "B2":
        grid = d.get("by_device_and_size", [])
        worst = max(grid, key=lambda g: g["ratio"]) if grid else None
        also = (
            f" Over 3 sizes on local-sync and local-task the worst is {worst['ratio']:.3f} "
            f"({worst['overhead_ns']:+.0f} ns, {worst['size']} elements on {worst['device']})."
            if worst
            else ""
        )
        goal = "met" if r <= 1.01 and (not worst or worst["ratio"] <= 1.01) else "**missed**"
        return (
            f"Once committed, a call takes {d['overhead_ns']:+.0f} ns against the static "
            f"build ({d['online_median_us']:.2f} vs {d['static_median_us']:.2f} µs), "
            f"{_times(r)} its time, on a kernel where any overhead shows most.{also} Goal "
            f"≤ 1.01: {goal}."
        )
    if cid == "B3":
        same = "the same winner" if case.get("same_winner") else "**different winners**"
        return (
            f"The stop rule tunes in {d['stop_rule_median_s'] * 1e3:.0f} ms against "
            f"{d['triton_median_s'] * 1e3:.0f} ms for the fixed protocol "
            f"({1 / r:.0f}x cheaper), and both chose {same}."
        )
    if cid == "B4":
        if d["best_chosen"] == len(d["sizes"]):
            return (
                f"Online tuning chose the best tile at every one of the {len(d['sizes'])} "
                "sizes, as the long exhaustive run ranks them."
            )
        return (
            f"The chosen tile was the best in {d['best_chosen']} of {len(d['sizes'])} sizes; "
            f"on average the choice runs {_percent(r)} slower than the best, at worst "
            f"{_percent(d['worst']['chosen_over_best'])} ({d['worst']['size']}³)."
        )
    if cid == "B5":
        explored = d["runs"][0]["explored_calls"]
        regret = d.get("exploration_regret")
        tail = (
            f" Exploration regret {regret:.2f} (1.0: each slower variant run once; goal ≤ 2.0: "
            + ("met)." if regret <= 2.0 else f"**missed** by {regret / 2.0:.2f}x).")
            if regret is not None
            else ""
        )
        if regret is not None and regret > 2.0:
            slower = len(d["variant_call_us"]) - 1
            tail += (
                f" Why: the stop rule explores {explored} calls, about {explored / slower:.1f} "
                "per slower variant (its first run in the process is cold, then timed samples "
                "until it is eliminated), the first exploring call of each variant also runs "
                "the reference variant and compares the results on the host"
            )
            timed = d["runs"][0].get("explored_median_us")
            if timed:
                best = d["best_variant"]
                tail += (
                    f", and a run inside an exploring call costs more than the same variant "
                    f"alone: {best} timed {timed[best]:.0f} µs there (median), against "
                    f"{d['variant_call_us'][best]:.0f} µs per warm call of its static build"
                )
            tail += "."
        return (
            f"Tuning online makes the first 1000 calls take {r:.2f}x the time of the best "
            f"variant alone ({explored} calls explored before the commit).{tail}"
        )
    if cid == "B6":
        low = d["lower"]
        return (
            f"Lowering {low['groups']} groups peaks at {low['peak_rss_mib']:.0f} MiB "
            f"({low['after_imports_rss_mib']:.0f} MiB after the imports); a tuned run of "
            f"{d['run_calls']} calls peaks at {_times(r)} the memory of a static one."
        )
    if cid == "B7":
        worst = d["worst"]
        verdict = (
            "both goals met"
            if d["met"]
            else f"goals (geometric mean ≤ {d['goal_geomean']}, every model ≤ "
            f"{d['goal_worst']}) **not met**"
        )
        real = d.get("real_models") or {}
        real_text = ""
        if real.get("geomean") is not None:
            met = real["geomean"] <= real["goal_geomean"] and real["worst"] <= real["goal_worst"]
            real_text = (
                f" On the real models of the tests' corpus: {real['geomean']:.3f} on average, "
                f"worst {real['worst']:.3f}; goals (≤ {real['goal_geomean']}, none above "
                f"{real['goal_worst']}) {'met' if met else '**not met**'}."
            )
            if real.get("geomean_best") is not None:
                met = real["geomean_best"] <= real["goal_geomean_best"] and real["worst_best"] <= 1
                real_text += (
                    " Against the best of IREE's option sets for each model: "
                    f"{real['geomean_best']:.3f} on average, worst {real['worst_best']:.3f}; "
                    f"goals (≤ {real['goal_geomean_best']}, none above 1.00) "
                    f"{'met' if met else '**not met**'}."
                )
        return (
            f"Tuned modules run in {r:.3f}x the stock build's time on average "
            f"(worst: {worst['model']}, {worst['ratio']:.3f}); {verdict}. Tuning took "
            f"{d['tuning_wall_s_total']:.0f} s for the {len(d['models'])} models.{real_text}"
        )
    if cid == "B8":
        over = d["over_oracle"]
        goal = "met" if r <= 1.10 else "**missed**"
        return (
            f"On a stream of every call shuffled, warm start takes {r:.2f}x the oracle's time "
            f"and tuning each size from scratch {over['shuffled']['scratch']:.2f}x; with the "
            f"sizes in phases, {over['phased']['warm']:.2f}x and "
            f"{over['phased']['scratch']:.2f}x. The best variant changes "
            f"{d['best_changes']} times over the sizes. Goal ≤ 1.10: {goal}."
            + ("" if r <= 1.10 else _b8_why(d))
        )
    if cid == "B9":
        goal = "met" if r <= d["goal"] else f"**missed** by {r / d['goal']:.1f}x"
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in d["stages_s"].items())
        return (
            f"Lowering {d['input_mb']:.1f} MB ({d['groups']} groups) takes {d['lower_s']:.1f} s "
            f"({d['lower_s_per_mb']:.1f} s per MB) where `iree-opt` reads and prints it in "
            f"{d['iree_opt_s']:.2f} s: {r:.1f}x. Goal ≤ {d['goal']:.0f}x: {goal}. Stages of one "
            f"lowering: {stages}; the output is {d['lowered_mb']:.1f} MB."
            + _b9_typical(d)
            + ("" if r <= d["goal"] else _b9_why(d))
        )
    if cid == "B10":
        return b10_model_online.reading(d, r)
    if cid == "B12":
        return b12_compile_cache.reading(d, r)
    return ""


def _b9_typical(d: dict) -> str:
    typical = d.get("typical")
    if typical is None:
        return ""
    goal = "met" if typical["ratio"] <= d["goal"] else "missed"
    return (
        f" With {typical['groups']} of the {d['groups']} executables in groups "
        f"({typical['input_mb']:.1f} MB), lowering takes {typical['lower_s']:.1f} s against "
        f"`iree-opt`'s {typical['iree_opt_s']:.2f} s: {typical['ratio']:.1f}x ({goal})."
    )


def _b9_why(d: dict) -> str:
    stages = d["stages_s"]
    iree = stages.get("iree_read", 0) + stages.get("iree_print", 0)
    python = sum(v for k, v in stages.items() if not k.startswith("iree_"))
    text = (
        f" Why: IREE's own work, reading the input and reading and printing the "
        f"{d['lowered_mb'] / d['input_mb']:.1f}x larger output (selection, exploration and "
        f"validation code per group, with locations), takes {iree:.1f} s "
        f"({iree / d['iree_opt_s']:.1f}x `iree-opt`'s run) and Python's start "
        f"{d.get('python_start_s', 0):.1f} s; the rest, {python:.1f} s, is Python building "
        "and printing xDSL ops: the executables with groups and the functions are imported "
        "op by op, and every generated op is built and written as text for IREE."
    )
    if "bare_build_s" in d:
        floor = iree + d.get("python_start_s", 0) + d["bare_build_s"]
        budget = d["goal"] * d["iree_opt_s"] - floor
        rest = python - d["bare_build_s"]
        left = (
            f"10x leaves {budget:.1f} s for importing the input, the lowering's own work and "
            f"writing its text, which take {rest:.1f} s now"
            if budget > 0
            else "10x leaves nothing for importing the input, the lowering's own work and "
            "writing its text"
        )
        text += (
            f" The lowering makes {d['generated_ops']} ops "
            f"({d['generated_ops'] / d['groups']:.0f} per group); xDSL alone takes "
            f"{d['bare_build_s']:.1f} s to build as many of its simplest op, so a lowering "
            f"that builds its code as xDSL ops needs at least {floor:.1f} s here "
            f"({floor / d['iree_opt_s']:.1f}x `iree-opt`) and {left}. 10x on this file needs "
            "the generated code made outside xDSL (as text from templates, parsed by IREE) "
            "and the lowering done on IREE's module, xDSL holding the groups and their sites "
            "only."
        )
    return text


def _b8_why(d: dict) -> str:
    first = d["runs"]["shuffled"][0]["warm"]
    sizes = len(d["lengths"])
    held = first["warm_started"] - first["confirmations_failed"]
    return (
        f" Missed by {d['over_oracle']['shuffled']['warm'] / 1.10:.2f}x. Why: every size is a "
        f"new workload key; warm start explored {first['explored_calls'] / sizes:.0f} of the "
        f"{d['calls_per_length']} calls per size (first shuffled run; {held} of "
        f"{first['warm_started']} warm starts confirmed the neighbour's winner), and each "
        "variant's first runs at a new size are cold and are checked once against the "
        "reference variant (the slowest at the large sizes), per size."
    )


def _percent(ratio: float) -> str:
    return f"{100 * (ratio - 1):+.1f}%" if ratio < 2 else f"{ratio:.1f}x"


def _times(ratio: float) -> str:
    return f"{ratio:.2f}x"


# --- plots ------------------------------------------------------------------------------------


def _figure(width: float = 6.4, height: float = 3.6):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def plot_b1(case: dict, ax) -> None:
    rows = case["detail"]["sizes"]
    groups = [r["groups"] for r in rows]
    ax.loglog(groups, [r["lower_s"] for r in rows], "o-", label="lower")
    ax.loglog(groups, [r["iree_compile_s"] for r in rows], "s-", label="iree-compile (llvm-cpu)")
    stopped = [r for r in rows if not r["finished"]]
    if stopped:
        ax.loglog(
            [r["groups"] for r in stopped],
            [r["iree_compile_s"] for r in stopped],
            "^",
            color="tab:red",
            markersize=10,
            label="iree-compile stopped (at least this)",
        )
    first = rows[0]
    ax.loglog(
        groups,
        [first["lower_s"] * g / first["groups"] for g in groups],
        ":",
        color="gray",
        label="lower, if linear",
    )
    ax.set_xlabel("groups (4 variants each)")
    ax.set_ylabel("seconds")
    ax.legend(fontsize=8)


def plot_b2(case: dict, ax) -> None:
    d = case["detail"]
    names = ["online (committed)", "static (winner)"]
    medians = [d["online_median_us"], d["static_median_us"]]
    spans = [d["online_p10_p90_us"], d["static_p10_p90_us"]]
    errors = [[m - s[0] for m, s in zip(medians, spans, strict=True)]]
    errors.append([s[1] - m for m, s in zip(medians, spans, strict=True)])
    ax.bar(names, medians, yerr=errors, capsize=6, color=["tab:blue", "tab:gray"])
    ax.set_ylabel("µs per call (median, p10-p90)")


def plot_b3(case: dict, ax) -> None:
    d = case["detail"]
    runs = [("stop rule", r) for r in d["stop_rule"]] + [("Triton", r) for r in d["triton"]]
    labels = [f"{name} #{i % len(d['stop_rule']) + 1}" for i, (name, _) in enumerate(runs)]
    values = [r["seconds"] * 1e3 for _, r in runs]
    colors = ["tab:blue" if name == "stop rule" else "tab:orange" for name, _ in runs]
    bars = ax.bar(labels, values, color=colors)
    for bar, (_, r) in zip(bars, runs, strict=True):
        ax.annotate(
            r["winner"],
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_ylabel("tuning wall time (ms)")
    ax.tick_params(axis="x", labelsize=7)


def plot_b4(case: dict, ax) -> None:
    from matplotlib.patches import Patch

    rows = case["detail"]["sizes"]
    tiles = list(case["detail"]["tiles"])
    width = 0.8 / len(tiles)
    handles = []
    for k, tile in enumerate(tiles):
        xs = [i + (k - (len(tiles) - 1) / 2) * width for i in range(len(rows))]
        best = [r["median_us"][r["best"]] for r in rows]
        values = [r["median_us"][tile] / b for r, b in zip(rows, best, strict=True)]
        color = f"C{k}"
        handles.append(Patch(facecolor=color, label=tile))
        bars = ax.bar(xs, values, width, color=color)
        for bar, r in zip(bars, rows, strict=True):
            if r["chosen"] == tile:
                bar.set_edgecolor("black")
                bar.set_linewidth(2)
    ax.set_xticks(range(len(rows)), [f"{r['size']}³" for r in rows])
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_ylabel("median / best (outlined: chosen)")
    ax.legend(handles=handles, fontsize=7, ncols=len(tiles))


def plot_b5(case: dict, ax) -> None:
    run = case["detail"]["plot"]
    calls = [10 * i + 1 for i in range(len(run["online_cumulative_ms"]))]
    ax.plot(calls, run["online_cumulative_ms"], label="online tuning")
    ax.plot(calls, run["static_cumulative_ms"], label="best variant alone (static)")
    ax.set_xlabel("call")
    ax.set_ylabel("cumulative ms")
    ax.legend(fontsize=8)


def plot_b6(case: dict, ax) -> None:
    d = case["detail"]
    names = [f"lower ({d['lower']['groups']} groups)", "tuned run", "static run"]
    peaks = [d["lower"]["peak_rss_mib"], d["tuned_run"]["peak_rss_mib"]]
    peaks.append(d["static_run"]["peak_rss_mib"])
    bases = [d["lower"]["after_imports_rss_mib"], d["tuned_run"]["baseline_rss_mib"]]
    bases.append(d["static_run"]["baseline_rss_mib"])
    ax.bar(names, peaks, color="tab:blue", label="peak RSS")
    ax.bar(names, bases, color="tab:gray", label="after imports")
    ax.set_ylabel("MiB")
    ax.legend(fontsize=8)


def plot_b7(case: dict, ax) -> None:
    rows = case["detail"]["models"]
    names = [r["model"] for r in rows]
    ax.bar(names, [r["ratio"] for r in rows], color="tab:blue")
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.axhline(case["detail"]["goal_geomean"], color="tab:green", linestyle="--", linewidth=0.8)
    ax.set_ylabel("tuned / stock time")


def plot_b8(case: dict, ax) -> None:
    d = case["detail"]
    sizes = d["lengths"]
    for variant in d["median_us"][str(sizes[0])]:
        ax.plot(sizes, [d["median_us"][str(n)][variant] for n in sizes], marker=".", label=variant)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("length (elements)")
    ax.set_ylabel("median µs per call")
    ax.legend(title="variant")


def plot_b9(case: dict, ax) -> None:
    d = case["detail"]
    stages = d["stages_s"]
    names = [*stages, "lower (command)", "iree-opt"]
    ax.bar(names, [*stages.values(), d["lower_s"], d["iree_opt_s"]], color="tab:blue")
    typical = d.get("typical")
    if typical is not None:
        label = f"{typical['groups']} groups"
        ax.bar(
            [f"lower, {label}", f"iree-opt, {label}"],
            [typical["lower_s"], typical["iree_opt_s"]],
            color="tab:orange",
        )
    ax.axhline(d["iree_opt_s"] * d["goal"], color="tab:green", linestyle="--", linewidth=0.8)
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylabel(f"seconds ({d['input_mb']:.1f} MB input)")


PLOTTERS = {
    "B1": plot_b1,
    "B2": plot_b2,
    "B3": plot_b3,
    "B4": plot_b4,
    "B5": plot_b5,
    "B6": plot_b6,
    "B7": plot_b7,
    "B8": plot_b8,
    "B9": plot_b9,
    "B10": b10_model_online.plot,
    "B12": b12_compile_cache.plot,
}


def write_plot(case: dict, folder: Path = PLOTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    PLOTTERS[case["id"]](case, ax)
    bound = "≤ " if case.get("compile_finished") is False else ""
    title = f"{case['id']} {TITLES[case['id']]}: ratio {bound}{case['ratio']:.3g}"
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path = folder / f"{case['id'].lower()}.png"
    fig.savefig(path, format="png")
    return path


# --- the page ---------------------------------------------------------------------------------


def _ratio(value: float) -> str:
    return f"{value:.3f}" if value >= 0.01 else f"{value:.2g}"


def _case_table(case: dict) -> list[str]:
    d = case["detail"]
    cid = case["id"]
    if cid == "B1":
        lines = [
            "| groups | variants | lower, median (s) | all runs (s) | iree-compile (s) "
            "| lower / compile | ms per group |",
            "|---:|---:|---:|---|---:|---:|---:|",
        ]
        for r in d["sizes"]:
            if r["finished"]:
                compile_s, ratio = f"{r['iree_compile_s']:.2f}", f"{r['lower_over_compile']:.3f}"
            else:
                compile_s = f"> {r['iree_compile_s']:.0f} (stopped)"
                ratio = f"< {r['lower_over_compile_at_most']:.3f}"
            lines.append(
                f"| {r['groups']} | {r['variants']} | {r['lower_s']:.3f} | "
                f"{', '.join(f'{t:.2f}' for t in r['lower_runs_s'])} | {compile_s} | "
                f"{ratio} | {r['lower_ms_per_group']:.2f} |"
            )
        runs = len(d["sizes"][0]["lower_runs_s"])
        lines += [
            "",
            f"`lower` ran {runs} times per size, each in a fresh process, the sizes interleaved, "
            "so that slow and fast spells of the machine fall on every size alike; the median "
            "counts. `iree-compile` ran once per size.",
        ]
        lines += ["", "| growth | time factor | per-group factor | linear |", "|---|---:|---:|---|"]
        for g in d["growth"]:
            lines.append(
                f"| {g['groups'][0]} → {g['groups'][1]} groups | {g['time_factor']:.2f}x | "
                f"{g['per_group_factor']:.2f} | {'yes' if g['linear'] else 'no'} |"
            )
        return lines
    if cid == "B2":
        return [
            "| build | median µs per call | p10-p90 µs |",
            "|---|---:|---|",
            f"| online, committed ({d['winner']}) | {d['online_median_us']:.3f} | "
            f"{d['online_p10_p90_us'][0]:.3f}-{d['online_p10_p90_us'][1]:.3f} |",
            f"| static ({d['winner']}) | {d['static_median_us']:.3f} | "
            f"{d['static_p10_p90_us'][0]:.3f}-{d['static_p10_p90_us'][1]:.3f} |",
            "",
            f"{d['interleaved_calls']} calls of each, alternating call by call in one process; "
            f"the online module committed after {d['tuning_calls']} calls, and the process grew "
            f"{d['leak_kib_per_call']:.2f} KiB per call. Cross-check in separate processes "
            f"({d['processes_each']} per build, alternating, {d['calls_per_process']} calls "
            f"each): pair ratios {', '.join(f'{r:.3f}' for r in d['process_pair_ratios'])}, "
            "spread by the per-process level of the machine rather than by the build.",
            "",
            "| device | elements | online (µs) | static (µs) | overhead (ns) | ratio |",
            "|---|---:|---:|---:|---:|---:|",
            *(
                f"| {g['device']} | {g['size']} | {g['online_median_us']:.3f} | "
                f"{g['static_median_us']:.3f} | {g['overhead_ns']:+.0f} | {g['ratio']:.3f} |"
                for g in d.get("by_device_and_size", [])
            ),
        ]
    if cid == "B3":
        lines = ["| protocol | run | wall time (ms) | calls | winner |", "|---|---:|---:|---:|---|"]
        for name, key in (("stop rule", "stop_rule"), ("Triton", "triton")):
            for i, r in enumerate(d[key], start=1):
                lines.append(
                    f"| {name} | {i} | {r['seconds'] * 1e3:.1f} | {r['calls']} | {r['winner']} |"
                )
        lines += ["", f"Variants {', '.join(d['variants'])} ({d['size']} elements); "]
        lines[-1] += f"the fastest by construction is {d['expected_winner']}."
        return lines + b3_protocol.scaling_lines(d)
    if cid == "B4":
        tiles = list(d["tiles"])
        head = "| size | " + " | ".join(f"{t} (µs)" for t in tiles) + " | chosen | best | ratio |"
        lines = [head, "|---:|" + "---:|" * len(tiles) + "---|---|---:|"]
        for r in d["sizes"]:
            cells = " | ".join(f"{r['median_us'][t]:.1f}" for t in tiles)
            lines.append(
                f"| {r['size']}³ | {cells} | {r['chosen']} | {r['best']} | "
                f"{r['chosen_over_best']:.3f} |"
            )
        lines += ["", f"Medians of {d['exhaustive_calls_per_variant']} interleaved calls per "]
        lines[-1] += "variant (the exhaustive run); tiles: " + ", ".join(
            f"{t} = {v}" for t, v in d["tiles"].items()
        )
        lines[-1] += " (distribution, vector, reduction)."
        return lines
    if cid == "B5":
        lines = [
            "| pair | online (ms) | best alone (ms) | ratio | explored calls | winner |",
            "|---:|---:|---:|---:|---:|---|",
        ]
        for i, r in enumerate(d["runs"], start=1):
            lines.append(
                f"| {i} | {r['online_total_ms']:.1f} | {r['static_total_ms']:.1f} | "
                f"{r['ratio']:.3f} | {r['explored_calls']} | {r['winner']} |"
            )
        if "variant_call_us" in d:
            calls = ", ".join(
                f"{v} {t:.1f} µs (first call {d['variant_first_call_us'][v]:.0f} µs)"
                for v, t in d["variant_call_us"].items()
            )
            lines += [
                "",
                f"One call of each variant (static builds, interleaved; first call in a fresh "
                f"process): {calls}. Regret = online excess {d['online_excess_us'] / 1e3:.2f} "
                f"ms / the slower variants' first calls' extra time "
                f"{d['slower_variants_first_call_extra_us'] / 1e3:.3f} ms = "
                f"{d['exploration_regret']:.2f} (over warm calls' extra time "
                f"{d['slower_variants_extra_us'] / 1e3:.3f} ms: "
                f"{d['exploration_regret_warm_calls']:.2f}).",
            ]
        return lines
    if cid == "B6":
        low, tuned, static = d["lower"], d["tuned_run"], d["static_run"]
        return [
            "| process | peak RSS (MiB) | after imports (MiB) |",
            "|---|---:|---:|",
            f"| `lower`, {low['groups']} groups ({low['input_kib']:.0f} KiB of input) | "
            f"{low['peak_rss_mib']:.1f} | {low['after_imports_rss_mib']:.1f} |",
            f"| tuned run, {d['run_calls']} calls | {tuned['peak_rss_mib']:.1f} | "
            f"{tuned['baseline_rss_mib']:.1f} |",
            f"| static run, {d['run_calls']} calls | {static['peak_rss_mib']:.1f} | "
            f"{static['baseline_rss_mib']:.1f} |",
        ]
    if cid == "B7":
        lines = [
            "| model | stock (µs) | tuned (µs) | tuned / stock | best flags | tuned / best "
            "flags | dispatches tuned | tuning (s) | analyse / compile / benchmark / combine / "
            "build / measure (s) | peak RSS, tuner / iree-compile (MB) |",
            "|---|---:|---:|---:|---|---:|---:|---:|---|---|",
        ]
        for r in d["models"]:
            split = " / ".join(
                f"{r['split_s'].get(k, 0):.1f}"
                for k in ("analyse", "compile", "benchmark", "combine", "build", "measure")
            )
            memory = f"{r['peak_rss_mb']} / {r['peak_child_rss_mb']}" if "peak_rss_mb" in r else "-"
            name = f"{r['model']} (real)" if r.get("real") else r["model"]
            best = r.get("best_flags", "-")
            vs_best = f"{r['ratio_best']:.3f}" if "ratio_best" in r else "-"
            lines.append(
                f"| {name} | {r['stock_us']:.0f} | {r['tuned_us']:.0f} | "
                f"{r['ratio']:.3f} | {best} | {vs_best} | "
                f"{r['dispatches_tuned']} of {r['dispatches_considered']} | "
                f"{r['tuning_wall_s']:.0f} | {split} | {memory} |"
            )
        lines += [
            "",
            "| model | dispatch | default (µs) | best (µs) | best | candidates / failed | kept |",
            "|---|---|---:|---:|---|---:|---|",
        ]
        for r in d["models"]:
            for x in r["dispatches"]:
                lines.append(
                    f"| {r['model']} | `{x['dispatch']}` | {x['default_us'] or '-'} | "
                    f"{x['best_us'] or '-'} | {x['best'] or '-'} | {x['candidates']} / "
                    f"{x['failed']} | {', '.join(x['kept']) or '-'} |"
                )
        lines += [
            "",
            f"Policy {d['policy']}, {d['candidates_per_dispatch']} candidates per dispatch, "
            f"top {d['top_k']} kept; end-to-end medians over {d['timing_s_per_model']:.0f} s "
            "of calls per model, stock and tuned alternating call by call on `local-task`. "
            "Dispatch times are those of the candidates alone (side by side, on synthetic "
            "inputs of the model's sizes).",
        ]
        return lines
    if cid == "B8":
        lines = [
            "| stream | repeat | warm (ms) | scratch (ms) | oracle (ms) | explored calls "
            "warm / scratch | warm starts (failed) |",
            "|---|---:|---:|---:|---:|---|---|",
        ]
        for stream, runs in d["runs"].items():
            for i, r in enumerate(runs, start=1):
                w, sc, o = r["warm"], r["scratch"], r["oracle"]
                lines.append(
                    f"| {stream} | {i} | {w['total_ms']:.1f} | {sc['total_ms']:.1f} | "
                    f"{o['total_ms']:.1f} | {w['explored_calls']} / {sc['explored_calls']} | "
                    f"{w['warm_started']} ({w['confirmations_failed']}) |"
                )
        changes = []
        sizes = d["lengths"]
        for a, b in zip(sizes, sizes[1:], strict=False):
            if d["best"][str(a)] != d["best"][str(b)]:
                changes.append(f"{d['best'][str(a)]} → {d['best'][str(b)]} between {a} and {b}")
        lines += [
            "",
            f"{len(sizes)} lengths from {sizes[0]} to {sizes[-1]}, {d['calls_per_length']} "
            f"calls each; best variant: {'; '.join(changes) or 'the same everywhere'}. "
            f"Decisions that are not the best (first repeat, shuffled): warm start "
            f"{d['decisions_not_the_best']['warm']}, from scratch "
            f"{d['decisions_not_the_best']['scratch']} of {len(sizes)}.",
        ]
        return lines
    if cid == "B10":
        return b10_model_online.table(d)
    if cid == "B12":
        return b12_compile_cache.table(d)
    return []


def markdown(data: dict, plots: dict[str, str]) -> str:
    machine = data["machine"]
    cases = {c["id"]: c for c in data["cases"]}
    out = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (`python -m benchmarks.run`) from "
        "[`benchmarks/results/latest.json`](../benchmarks/results/latest.json); do not edit, "
        "rerun. Every number below is in that file. Each case measures this project against "
        "what users pick today (the static build of the best variant, Triton's tuning "
        "protocol, an exhaustive search) side by side in one run, interleaved or alternating, "
        "and reports a ratio, because these machines are noisy: ratios are what carries "
        "from one run to the next, absolute times are not. No case is a test: the numbers "
        "are reported as measured.",
        "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB, "
        f"{machine['os']}; Python {machine['python']}, IREE {machine['iree_compiler']} "
        f"(compiler) / {machine['iree_runtime']} (runtime), xDSL {machine['xdsl']}. Target "
        f"{machine['target']}, device `{machine['device']}`. Run {machine['date']}, load "
        f"average at start {', '.join(str(x) for x in machine['load_average_at_start'])}; "
        + run_duration(machine, [c["id"] for c in data["cases"]]),
        "",
        "| case | what the ratio is | ratio | reading |",
        "|---|---|---:|---|",
    ]
    for cid in TITLES:
        if cid in cases:
            case = cases[cid]
            bound = "≤ " if case.get("compile_finished") is False else ""
            out.append(
                f"| [{cid}](#{cid.lower()}) {TITLES[cid]} | {MEANINGS[cid]} | "
                f"{bound}{_ratio(case['ratio'])} | {reading(case)} |"
            )
    for cid in TITLES:
        if cid not in cases:
            continue
        case = cases[cid]
        bound = "≤ " if case.get("compile_finished") is False else ""
        out += ["", f"## {cid}", "", f"**{TITLES[cid]}**: {MEANINGS[cid]} = "]
        out[-1] += f"**{bound}{_ratio(case['ratio'])}**"
        if cid == "B3":
            out[-1] += f", same winner: **{'yes' if case['same_winner'] else 'no'}**"
        out[-1] += "."
        out += ["", reading(case), "", *_case_table(case)]
        if cid in plots:
            out += ["", f"![{cid} {TITLES[cid]}]({plots[cid]})"]
    out += [
        "",
        "## Running them",
        "",
        "```sh",
        "make bench                                   # every case; rewrites this page",
        ".venv/bin/python -m benchmarks.run --only B2,B3   # some cases (merged into latest.json)",
        ".venv/bin/python -m benchmarks.run --quick   # smaller sizes, results/quick.json only",
        "```",
        "",
        "How each case is measured is in the docstring of its module, `benchmarks/b<N>_*.py`.",
        "",
    ]
    return "\n".join(out)


def run_duration(machine: dict, cases: list[str]) -> str:
    """How long the run took, and which cases it ran when it did not run them all (a run of
    some cases merges into the results of earlier runs)."""
    took = f"{machine.get('wall_s', float('nan')):.0f} s"
    ran = machine.get("ran")
    if ran is not None and sorted(ran) == sorted(cases):
        return f"`make bench` took {took}."
    which = f"ran {', '.join(ran)} only" if ran else "may have run some of the cases only"
    return (
        f"the last run {which} and took {took}; the other cases' numbers are from earlier "
        "runs on this machine (a full `make bench` takes about 25 minutes)."
    )


def write_docs(data: dict, page: Path = DOCS / "benchmarks.md", folder: Path = PLOTS) -> Path:
    """Plots for every case, then the page."""
    plots = {}
    for case in data["cases"]:
        path = write_plot(case, folder)
        plots[case["id"]] = path.relative_to(page.parent).as_posix()
    page.write_text(markdown(data, plots))
    return page


def main() -> int:
    data = json.loads((RESULTS / "latest.json").read_text())
    print(f"wrote {write_docs(data)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
