"""`docs/benchmarks.md` and its plots, generated from `benchmarks/results/latest.json` alone.

Everything shown is read from the JSON (the plots too), so the page and the results file
cannot disagree: `python -m benchmarks.report` regenerates the page from the file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks import b10_model_online, b12_compile_cache, b13_busy, b14_peers, b15_specs
from benchmarks.common import DOCS, PLOTS, RESULTS
from benchmarks.report_b11 import plot_b11
from benchmarks.report_cases import case_table, reading

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
    "B11": "roofline",
    "B12": b12_compile_cache.TITLE,
    "B13": b13_busy.TITLE,
    "B14": b14_peers.TITLE,
    "B15": b15_specs.TITLE,
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
    "B11": "time, tuned build / numpy's OpenBLAS (worst of the f32 matmuls, one thread)",
    "B12": b12_compile_cache.MEANING,
    "B13": b13_busy.MEANING,
    "B14": b14_peers.MEANING,
    "B15": b15_specs.MEANING,
}


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
    "B11": plot_b11,
    "B12": b12_compile_cache.plot,
    "B13": b13_busy.plot,
    "B14": b14_peers.plot,
    "B15": b15_specs.plot,
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
        out += ["", reading(case), "", *case_table(case)]
        if cid in plots:
            out += ["", f"![{cid} {TITLES[cid]}]({plots[cid]})"]
    out += [
        "",
        "## Running them",
        "",
        "```sh",
        "make bench                                   # every case; rewrites this page",
        ".venv/bin/python -m benchmarks.run --quick   # a smoke test of every case (~9 min)",
        ".venv/bin/python -m benchmarks.run --only B2,B3   # some cases",
        ".venv/bin/python -m benchmarks.run --only B2,B3 --write-docs  # ... merged into this page",
        ".venv/bin/python -m benchmarks.run --only B13 --models mlp,bert_flax  # some models",
        "```",
        "",
        "A run of some cases or a `--quick` one writes its results, page and plots to",
        "`benchmarks/out/partial/` (`--out DIR` elsewhere; not tracked), not to this page;",
        "`--dry-run` prints what a run would write.",
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
        "runs on this machine (a full `make bench` takes over an hour on 2 cores: B7 and B13 "
        "tune whole models)."
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
