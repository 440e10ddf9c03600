"""The page's per-case text: the sentence that reads each case's ratio (`reading`) and its
tables (`case_table`), from the case's entry of `benchmarks/results/latest.json` alone
(`benchmarks/report.py` puts them on the page)."""

from __future__ import annotations

from benchmarks import (
    b3_protocol,
    b10_model_online,
    b12_compile_cache,
    b13_busy,
    b14_peers,
    b15_specs,
)
from benchmarks.report_b11 import b11_reading, b11_table

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
            f"≤ 1.01: {goal}." + _b2_many(d)
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
            + _b8_decided(d)
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
    if cid == "B11":
        return b11_reading(d, r)
    if cid == "B12":
        return b12_compile_cache.reading(d, r)
    if cid == "B13":
        return b13_busy.reading(d, r)
    if cid == "B14":
        return b14_peers.reading(d, r)
    if cid == "B15":
        return b15_specs.reading(d, r)
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


def _b2_many(d: dict) -> str:
    """Decided calls over many dynamic sizes (`many_sizes`)."""
    many = d.get("many_sizes")
    if not many:
        return ""
    return (
        f" Over {many['lengths']} decided lengths of a dynamic group, shuffled, a call takes "
        f"{many['ratio']:.3f}x the static build's ({many['online_median_us']:.2f} vs "
        f"{many['static_median_us']:.2f} µs): each finds its length's choice in its site's "
        "table of committed keys (1.30x with a table of the last 4 keys)."
    )


def _b8_decided(d: dict) -> str:
    """What calls of decided sizes cost against static builds (`decided_over_static`)."""
    decided = d.get("decided_over_static")
    if not decided:
        return ""
    return (
        f" Once every size is decided, the shuffled stream takes {decided['ratio']:.3f}x the "
        f"time of the static build of each size's best variant ({decided['decided_ms']:.1f} "
        f"against {decided['static_ms']:.1f} ms): each call finds its size's choice in "
        "its site's table, without a host call."
    )


def _b8_why(d: dict) -> str:
    first = d["runs"]["shuffled"][0]["warm"]
    oracle = d["runs"]["shuffled"][0]["oracle"]
    over_ms = (first["total_ns"] - oracle["total_ns"]) / 1e6 if "total_ns" in first else 0.0
    sizes = len(d["lengths"])
    held = first["warm_started"] - first["confirmations_failed"]
    return (
        f" Missed by {d['over_oracle']['shuffled']['warm'] / 1.10:.2f}x. Why: every size is a "
        f"new workload key; warm start explored {first['explored_calls'] / sizes:.0f} of the "
        f"{d['calls_per_length']} calls per size (first shuffled run; {held} of "
        f"{first['warm_started']} keys that took bounds from the others confirmed the likely "
        "winner). What is left: each size's first run is cold, and the first sizes run before "
        "anything is known of the others; each variant is checked once against the "
        "reference variant (the slowest at the large sizes) per size bucket (sizes within "
        "2x), the reference run beside it and both results compared on the host; and every "
        "exploring call pays the tuner's own work in Python (tens of µs, as much as a call "
        "at the small sizes)."
        + (
            f" Of the excess over the oracle ({over_ms:.1f} ms), the exploring calls took "
            f"{first['excess_ms']['exploring']:.1f} ms more than the oracle's median call at "
            f"their sizes and the other calls {first['excess_ms']['other']:.1f} ms (the oracle's "
            f"own calls: {oracle['excess_ms']['other']:.1f} ms over its medians, its first "
            "call at each size reading the tuning cache and running cold)."
            if "excess_ms" in first
            else ""
        )
        + (
            f" Running each slower variant once at every size would cost "
            f"{d['floor_each_slower_variant_once']:.3f}x the oracle's time; the stop rule runs "
            "each contender at a size explored from scratch three times timed (and the size's "
            "first run, cold), once in a confirmation, and not at all where the other sizes' "
            "times rule it out."
            if "floor_each_slower_variant_once" in d
            else ""
        )
    )


def _percent(ratio: float) -> str:
    return f"{100 * (ratio - 1):+.1f}%" if ratio < 2 else f"{ratio:.1f}x"


def _times(ratio: float) -> str:
    return f"{ratio:.2f}x"


# --- tables ---------------------------------------------------------------------------------


def _each_load(ratios: list[float]) -> str:
    """B7's ratios of a model's loads, as the table shows them after the median."""
    return f" ({', '.join(f'{x:.3f}' for x in ratios)})"


def case_table(case: dict) -> list[str]:
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
            "| model | stock (µs) | tuned (µs) | tuned / stock (each load) | best flags | "
            "tuned / best flags (each load) | dispatches tuned | tuning (s) | "
            "analyse / compile / benchmark / combine / build / measure (s) | "
            "peak RSS, tuner / iree-compile (MB) |",
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
            vs_stock = f"{r['ratio']:.3f}"
            if len(r.get("load_ratios", ())) > 1:
                vs_stock += _each_load(r["load_ratios"])
                if r["best_flags"] != "stock":
                    vs_best += _each_load(r["best_load_ratios"])
            lines.append(
                f"| {name} | {r['stock_us']:.0f} | {r['tuned_us']:.0f} | "
                f"{vs_stock} | {best} | {vs_best} | "
                f"{r['dispatches_tuned']} of {r['dispatches_considered']} | "
                f"{r['tuning_wall_s']:.0f} | {split} | {memory} |"
            )
        lines += [
            "",
            "| model | dispatch | default (µs) | best (µs) | best | candidates / failed | kept "
            "| gained in the model (µs) |",
            "|---|---|---:|---:|---|---:|---|---:|",
        ]
        for r in d["models"]:
            for x in r["dispatches"]:
                gained = x.get("model_gain_us")
                in_model = "-" if gained is None else f"{gained} ± {x['model_gain_noise_us']}"
                lines.append(
                    f"| {r['model']} | `{x['dispatch']}` | {x['default_us'] or '-'} | "
                    f"{x['best_us'] or '-'} | {x['best'] or '-'} | {x['candidates']} / "
                    f"{x['failed']} | {', '.join(x['kept']) or '-'} | {in_model} |"
                )
        lines += [
            "",
            f"Policy {d['policy']}, {d['candidates_per_dispatch']} candidates per dispatch, "
            f"top {d['top_k']} kept; end-to-end medians over {d['timing_s_per_model']:.0f} s "
            "of calls per model, stock and tuned alternating call by call on `local-task`"
            + (
                f", in {d['loads']} fresh loads of the tuned module (each settling anew; "
                "the row is the load with the median ratio, every load's ratio in brackets). "
                if d.get("loads", 1) > 1
                else ". "
            )
            + "Dispatch times are those of the candidates alone (side by side, on synthetic "
            "inputs of the model's sizes); the gain in the model is the winner's, against "
            "IREE's own, per model call (± two standard errors), and a dispatch the model "
            "ran slower with its winner is left out (kept: -).",
        ]
        return lines
    if cid == "B8":
        lines = [
            "| stream | repeat | warm (ms) | scratch (ms) | oracle (ms) | explored calls "
            "warm / scratch | warm: excess of exploring / other calls (ms) | "
            "warm starts (failed) |",
            "|---|---:|---:|---:|---:|---|---|---|",
        ]
        for stream, runs in d["runs"].items():
            for i, r in enumerate(runs, start=1):
                w, sc, o = r["warm"], r["scratch"], r["oracle"]
                excess = w.get("excess_ms")
                split = f"{excess['exploring']:.1f} / {excess['other']:.1f}" if excess else "-"
                lines.append(
                    f"| {stream} | {i} | {w['total_ms']:.1f} | {sc['total_ms']:.1f} | "
                    f"{o['total_ms']:.1f} | {w['explored_calls']} / {sc['explored_calls']} | "
                    f"{split} | {w['warm_started']} ({w['confirmations_failed']}) |"
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
    if cid == "B11":
        return b11_table(d)
    if cid == "B12":
        return b12_compile_cache.table(d)
    if cid == "B13":
        return b13_busy.table(d)
    if cid == "B14":
        return b14_peers.table(d)
    if cid == "B15":
        return b15_specs.table(d)
    return []
