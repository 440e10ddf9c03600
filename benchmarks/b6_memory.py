"""B6 memory: peak RSS of `lower` on the 1000-group case, and of a tuned run vs a static run.

Each number is the `ru_maxrss` of a fresh process (`benchmarks/probe.py`) that does one
thing: lower the B1 input of 1000 groups (the same measurement B1 times); or load the B3
module and call it 1000 times, once with online tuning and once as the static build of the
fastest variant. Ratio: peak RSS of the tuned run over the static run (1.0: tuning costs no
memory); the lowering's peak is in the detail, with the RSS after the imports.
"""

from __future__ import annotations

from benchmarks.b1_lowering import lower_once, sizes
from benchmarks.b3_protocol import FACTORS, SIZE, speed_vmfb
from benchmarks.common import CaseResult, Settings, freeze, probe

CALLS = 1000


def run(settings: Settings) -> CaseResult:
    groups = sizes(settings)[-1]
    lowering = lower_once(settings, groups)
    best = f"x{min(FACTORS)}"
    cache = freeze(settings, "b6", [{"group": "work::step", "workload": [], "variant": best}])
    runs = {}
    for name, vmfb in (
        ("tuned", speed_vmfb(settings)),
        ("static", speed_vmfb(settings, "static", cache)),
    ):
        path = settings.scratch / f"b6_{name}.vmfb"
        path.write_bytes(vmfb)
        runs[name] = probe("run", str(path), "step", str(SIZE), str(CALLS))
    ratio = runs["tuned"]["peak_rss_mib"] / runs["static"]["peak_rss_mib"]
    mib = lambda v: round(v, 1)  # noqa: E731
    detail = {
        "lower": {
            "groups": groups,
            "variants": groups * 4,
            "peak_rss_mib": mib(lowering["peak_rss_mib"]),
            "after_imports_rss_mib": mib(lowering["baseline_rss_mib"]),
            "input_kib": round(lowering["input_bytes"] / 1024, 1),
            "seconds": round(lowering["seconds"], 3),
        },
        "run_calls": CALLS,
        "tuned_run": {k: (mib(v) if isinstance(v, float) else v) for k, v in runs["tuned"].items()},
        "static_run": {
            k: (mib(v) if isinstance(v, float) else v) for k, v in runs["static"].items()
        },
    }
    print(
        f"  B6 lower {groups} groups: peak RSS {lowering['peak_rss_mib']:.0f} MiB; run "
        f"tuned {runs['tuned']['peak_rss_mib']:.0f} MiB vs "
        f"static {runs['static']['peak_rss_mib']:.0f} MiB",
        flush=True,
    )
    return CaseResult(
        id="B6",
        title="memory",
        ratio=ratio,
        meaning="peak RSS of a tuned run / a static run (1000 calls); `lower` peak in detail",
        detail=detail,
    )
