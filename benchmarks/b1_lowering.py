"""B1 lowering cost: `lower` against `iree-compile` of its output, and how `lower` grows.

For 10, 100 and 1000 groups of 4 variants (one executable per group; the groups are
dispatched in chains of 10 by public functions, like the layers of a model;
`kernels.many_groups_module`): the seconds of `lower_to_iree` and of the `iree-compile`
binary building the lowered output for llvm-cpu (the flags of
`lowering.driver.target_flags`). `lower` runs `ROUNDS` times per size, each in a fresh
process, the sizes interleaved (10, 100, 1000, 10, 100, ...) so that the slow and fast spells
of a shared machine (the same lowering varies by up to 2x here) fall on every size alike;
the time of a size is the median of its runs. Not the fastest run: a 0.2 s run can fall
entirely in a fast spell where a 20 s one cannot, so minimums favour the small sizes (every
run, and the fastest, are in the detail). Ratio: lower time over compile time at the
largest size. Growth: lower time per group at each size over the same at the size before;
linear lowering keeps it near 1 (10x the groups, ~10x the time).

`iree-compile` of 1000 groups is the longest step of `make bench` (about 4 minutes on 2
cores). It therefore runs last in the run (the cases are ordered so), with whatever time is
left before `Settings.deadline`; should it not finish, the time it ran is a lower bound of
the compile time: the detail says `"finished": false` and the ratio at that size is an
upper bound (`lower_over_compile_at_most`).
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

from benchmarks.common import CaseResult, Settings, probe
from benchmarks.kernels import many_groups_module

VARIANTS = 4
PER_FUNCTION = 10  # dispatches per function (IREE compiles one huge function superlinearly)
LINEAR_SLACK = 1.25  # per-group time may grow this much per 10x and still count as linear
MIN_COMPILE_BUDGET_S = 30.0
ROUNDS = 5  # runs of `lower` per size


QUICK_ROUNDS = 2  # a smoke run (--quick)


def sizes(settings: Settings) -> tuple[int, ...]:
    return (10, 30) if settings.quick else (10, 100, 1000)


def lower_once(settings: Settings, groups: int, repeat: int = 0) -> dict:
    """Lower the `groups` case in a fresh process (time, peak RSS, output path); shared
    with B6, which reports the peak RSS of the largest."""

    def make() -> dict:
        source = settings.scratch / f"groups{groups}.mlir"
        if not source.exists():
            source.write_text(many_groups_module(groups, VARIANTS, per_function=PER_FUNCTION))
        target = settings.scratch / f"groups{groups}.lowered.{repeat}.mlir"
        report = probe("lower", str(source), str(target))
        report["output"] = str(target)
        report["input_bytes"] = source.stat().st_size
        return report

    return settings.memo(f"lower:{groups}:{repeat}", make)


def iree_compile(lowered: str, output: str, limit_s: float) -> tuple[float, bool]:
    """Seconds `iree-compile` ran on the file, and whether it finished within `limit_s`."""
    from iree.compiler.tools.binaries import find_tool

    from lowering.driver import target_flags

    command = [find_tool("iree-compile"), lowered, *target_flags("llvm-cpu"), "-o", output]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit_s, check=False)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, False
    seconds = time.perf_counter() - start
    if done.returncode != 0 or "error:" in done.stderr:
        raise RuntimeError(f"iree-compile failed on {lowered}:\n{done.stderr[-2000:]}")
    return seconds, True


def run(settings: Settings) -> CaseResult:
    runs: dict[int, list[dict]] = {groups: [] for groups in sizes(settings)}
    for repeat in range(QUICK_ROUNDS if settings.quick else ROUNDS):
        for groups, reports in runs.items():
            reports.append(lower_once(settings, groups, repeat))
    rows = []
    for groups, reports in runs.items():
        lower_s = statistics.median(r["seconds"] for r in reports)
        lowered = reports[0]["output"]
        vmfb = settings.scratch / f"groups{groups}.vmfb"
        limit = max(MIN_COMPILE_BUDGET_S, settings.deadline - time.monotonic())
        compile_s, finished = iree_compile(lowered, str(vmfb), limit)
        row = {
            "groups": groups,
            "variants": groups * VARIANTS,
            "input_kib": round(reports[0]["input_bytes"] / 1024, 1),
            "lowered_kib": round(Path(lowered).stat().st_size / 1024, 1),
            "lower_s": round(lower_s, 4),
            "lower_fastest_s": round(min(r["seconds"] for r in reports), 4),
            "lower_runs_s": [round(r["seconds"], 4) for r in reports],
            "iree_compile_s": round(compile_s, 3),
            "finished": finished,
            "lower_over_compile": round(lower_s / compile_s, 4),
            "lower_ms_per_group": round(1000 * lower_s / groups, 3),
        }
        if finished:
            row["vmfb_kib"] = round(vmfb.stat().st_size / 1024, 1)
        else:
            row["lower_over_compile_at_most"] = row.pop("lower_over_compile")
        rows.append(row)
        bound = "" if finished else " (stopped: compile time at least this, ratio at most)"
        print(
            f"  B1 {groups:>5} groups: lower {lower_s:8.3f} s, iree-compile {compile_s:8.2f} s, "
            f"ratio {lower_s / compile_s:.3f}{bound}",
            flush=True,
        )
    growth = []
    for before, after in zip(rows, rows[1:], strict=False):
        factor = after["groups"] / before["groups"]
        time_factor = after["lower_s"] / before["lower_s"]
        growth.append(
            {
                "groups": [before["groups"], after["groups"]],
                "groups_factor": factor,
                "time_factor": round(time_factor, 2),
                "per_group_factor": round(time_factor / factor, 2),
                "linear": time_factor <= factor * LINEAR_SLACK,
            }
        )
    linear = all(g["linear"] for g in growth)
    largest = rows[-1]
    detail = {
        "dispatches_per_function": PER_FUNCTION,
        "sizes": rows,
        "growth": growth,
        "linear": linear,
        "linear_slack": LINEAR_SLACK,
    }
    finished = largest["finished"]
    ratio = largest["lower_over_compile" if finished else "lower_over_compile_at_most"]
    return CaseResult(
        id="B1",
        title="lowering cost",
        ratio=ratio,
        meaning=f"`lower` time / `iree-compile` time, {largest['groups']} groups of 4 variants"
        + ("" if finished else " (compile stopped: an upper bound)"),
        detail=detail,
        extra={"linear": linear, "compile_finished": finished},
    )
