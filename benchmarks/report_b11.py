"""B11's part of `docs/benchmarks.md`: its sentence, its table and its plot, from the
case's `detail` alone (`benchmarks/b11_roofline.py` measures it)."""

from __future__ import annotations

OPTION_SETS = ("stock", "data-tiling", "data-tiling+ukernels")
COLUMNS = (*OPTION_SETS, "tuned", "tuned (stock flags)", "numpy")


def _bf16_peak(d: dict) -> str:
    """The bf16 rows' peak, where a bf16 dot-product loop measured it."""
    if d.get("bf16_peak_gflops") is None:
        return ""
    runs = "/".join(f"{g:.0f}" for g in d.get("bf16_loop_gflops", []))
    return (
        f"; a bf16 row's percent is of the bf16 dot-product loop's peak, "
        f"{d['bf16_peak_gflops']:.1f} GFLOP/s (`vdpbf16ps`, two multiply-adds per f32 lane; "
        f"at the start / after the rows: {runs})"
    )


def _peak(d: dict) -> str:
    if d.get("peak_gflops") is None:
        return f"not measured ({d['peak'].get('error', 'no loop')})"
    return f"{d['peak_gflops']:.1f} GFLOP/s"


def _times(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def b11_reading(d: dict, ratio: float) -> str:
    f32 = [r for r in d["rows"] if r["kind"] == "matmul" and r["element"] == "f32"]
    each = ", ".join(f"{_times(r['tuned_over_numpy'])} ({r['op']})" for r in f32)
    goal = "met" if d["met"] else f"**missed** by {ratio / d['goal']:.2f}x"
    if ratio != ratio:  # NaN: no f32 matmul was timed against numpy
        goal = "not measured"
    text = (
        f"On one thread, against a measured FMA peak of {_peak(d)}, tuned f32 matmuls take "
        f"{each} OpenBLAS's time; goal ≤ {d['goal']}: {goal}."
    )
    if not f32:
        return text
    worst = next((r for r in f32 if r["op"] == d.get("worst")), f32[0])
    tuned, blas = worst["builds"]["tuned"], worst["builds"]["numpy"]
    if tuned.get("percent_of_peak") is not None and blas.get("percent_of_peak") is not None:
        text += (
            f" On {worst['op']} the tuned build reaches {tuned['percent_of_peak']:.0f}% of the "
            f"peak, OpenBLAS {blas['percent_of_peak']:.0f}%."
        )
    if not d["met"] and ratio == ratio:
        text += _why(worst, d["goal"])
    return text


def _why(row: dict, goal: float) -> str:
    """What the worst f32 matmul's builds say about the miss."""
    builds, blas = row["builds"], row["builds"]["numpy"]["ms"]
    tuned = builds["tuned"]
    kept = ", ".join(tuned.get("tuned", [])) or "no tile sizes of its own"
    untuned = " (its data-tiled dispatch is not tuned)" if tuned.get("skipped") else ""
    text = (
        f" Why: tune-model built it with the {tuned.get('base')} options{untuned} and kept {kept}"
    )
    timed = {n: c["ms"] for n, c in builds.items() if n != "numpy" and c.get("ms")}
    if timed and blas:
        fastest = min(timed, key=timed.get)
        over = timed[fastest] / blas
        text += (
            f"; the fastest of IREE's builds here, {fastest}, takes {over:.2f}x OpenBLAS's time"
            + (f": none of them comes within {goal}x of it" if over > goal else "")
        )
    return text + "."


def _cell(cell: dict) -> str:
    if "error" in cell:
        return "failed" if "fail" in cell["error"] else "-"
    if not cell.get("ms"):
        return "-"
    percent = cell.get("percent_of_peak")
    share = f" ({percent:.0f}%)" if percent is not None else ""
    return f"{cell['ms']:.3f} / {cell['gflops']:.1f}{share}"


def b11_table(d: dict) -> list[str]:
    lines = [
        "| operation | GFLOP | " + " | ".join(COLUMNS) + " | best flags | tuned / best flags "
        "| tuned / numpy |",
        "|---|---:|" + "---:|" * len(COLUMNS) + "---|---:|---:|",
    ]
    for r in d["rows"]:
        cells = " | ".join(_cell(r["builds"][c]) for c in COLUMNS)
        lines.append(
            f"| {r['op']} | {r['gflop']:.3g} | {cells} | {r['best_flags'] or '-'} | "
            f"{_times(r['tuned_over_best_flags'])} | {_times(r['tuned_over_numpy'])} |"
        )
    peak = d["peak"]
    per_threads = ", ".join(f"{g:.1f} on {n}" for n, g in peak.get("gflops", {}).items())
    measured = (
        f"The peak is the best run of an FMA loop (`cc {peak['flags']}`, {peak['chains']} "
        f"independent {peak['lanes']}-lane vectors; alone: {per_threads} threads, GFLOP/s), "
        f"and again before and after every row's rounds: {_peak(d)} on {d['threads']} "
        "thread(s)."
        if "gflops" in peak
        else f"The peak is {_peak(d)}: percentages are left out."
    )
    loops = ", ".join(
        "/".join(f"{g:.0f}" for g in r["fma_loop_gflops"])
        for r in d["rows"]
        if "fma_loop_gflops" in r
    )
    tuning = {
        r["op"]: (r["builds"]["tuned"].get("base"), r["builds"]["tuned"].get("tuned"))
        for r in d["rows"]
    }
    built = "; ".join(
        f"{op}: {base} options" + (f", {', '.join(kept)} kept" if kept else ", nothing tuned")
        for op, (base, kept) in tuning.items()
        if base is not None
    )
    numpy_what = "; ".join(
        sorted(
            {
                f"{r['kind']} {r['element']}: {r['builds']['numpy'].get('what', '-')}"
                for r in d["rows"]
            }
        )
    )
    wrong = [
        f"{r['op']} ({n})" for r in d["rows"] for n, ok in r.get("agrees", {}).items() if not ok
    ]
    lines += [
        "",
        "Each cell: median ms per call / GFLOP/s (percent of the peak); every build and numpy "
        f"called in turn, interleaved rounds ({d['timing_s_per_row']:.0f} s of rounds per "
        f"row), on `{d['device']}` with inputs on the device; numpy's BLAS held to "
        f"{d['threads']} thread(s) by {d['numpy_threads_set_by']}"
        + ("" if d.get("numpy_interleaved", True) else ", timed apart")
        + f". {measured} The loop before / after each row: {loops or '-'} "
        "GFLOP/s (how loaded the machine was). numpy: "
        f"{numpy_what}. bf16 arithmetic on this CPU: "
        f"{'yes' if d.get('bf16_arithmetic') else 'no (its FMAs are f32 FMAs)'}"
        + _bf16_peak(d)
        + ". "
        + f"Tuned (`tune-model --freeze --device {d['device']}`, "
        f"{d['candidates_per_dispatch']} candidates per dispatch, timed where the builds "
        f"run): {built or '-'}. Results against numpy's: "
        + (f"**differ** for {', '.join(wrong)}." if wrong else "every build agrees."),
    ]
    return lines


def plot_b11(case: dict, ax) -> None:
    """Percent of the peak (or GFLOP/s) per row and build."""
    d = case["detail"]
    rows = d["rows"]
    key = "percent_of_peak" if d.get("peak_gflops") is not None else "gflops"
    builds = ("stock", "best flags", "tuned", "tuned (stock flags)", "numpy")
    width = 0.8 / len(builds)
    for i, name in enumerate(builds):
        cells = [r["builds"].get(r["best_flags"] if name == "best flags" else name) for r in rows]
        values = [(c or {}).get(key) or 0 for c in cells]
        ax.bar([x + i * width for x in range(len(rows))], values, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))])
    ax.set_xticklabels(
        [r["op"].replace(" f32", "").replace(" ", "\n", 1) for r in rows], fontsize=7
    )
    ax.set_ylabel("% of FMA peak" if key == "percent_of_peak" else "GFLOP/s")
    ax.legend(fontsize=7)
