"""`make bench`: run the benchmark cases, write `results/latest.json` and `docs/benchmarks.md`.

    python -m benchmarks.run [--quick] [--only B2,B3]

Each case prints its ratio as it finishes; none is an assertion. A full run writes
`benchmarks/results/latest.json` (`{"machine": {...}, "cases": [{"id", "ratio", "detail"},
...]}`) and regenerates `docs/benchmarks.md` and its plots (`docs/benchmarks/*.png`) from
it. `--only` runs some cases and merges them into the existing results. `--quick` runs
smaller versions of every case (a smoke test) and writes `results/quick.json` only.

B1 runs last: `iree-compile` of its 1000 groups is the longest step, so it gets the time
left (`--budget`, 22 minutes by default) and reports a bound if it is cut.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import (
    b1_lowering,
    b2_overhead,
    b3_protocol,
    b4_quality,
    b5_online,
    b6_memory,
    b7_tune_model,
    b8_warm_start,
    b9_throughput,
    b10_model_online,
    b11_roofline,
    b12_compile_cache,
    b13_busy,
)
from benchmarks.common import RESULTS, CaseResult, Settings, machine_info

# Run order: B1 last, so that its 1000-group compile gets the time the others left.
ORDER = ("B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10", "B11", "B12", "B13", "B1")
BUDGET_S = 22 * 60  # `make bench` finishes within 23 minutes on a 2-core machine
CASES = {
    "B1": b1_lowering.run,
    "B2": b2_overhead.run,
    "B3": b3_protocol.run,
    "B4": b4_quality.run,
    "B5": b5_online.run,
    "B6": b6_memory.run,
    "B7": b7_tune_model.run,
    "B8": b8_warm_start.run,
    "B9": b9_throughput.run,
    "B10": b10_model_online.run,
    "B11": b11_roofline.run,
    "B12": b12_compile_cache.run,
    "B13": b13_busy.run,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes; results/quick.json")
    parser.add_argument("--only", metavar="B1,B2", help="comma-separated case ids")
    parser.add_argument(
        "--budget",
        type=float,
        default=BUDGET_S,
        metavar="SECONDS",
        help=f"time the whole run may take (default {BUDGET_S}); B1's largest compile "
        "stops when it runs out",
    )
    args = parser.parse_args(argv)
    ids = list(CASES)
    if args.only:
        ids = [c.strip().upper() for c in args.only.split(",") if c.strip()]
        unknown = [c for c in ids if c not in CASES]
        if unknown:
            parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    args.ids = ids
    return args


def merge(path: Path, machine: dict, results: list[CaseResult]) -> dict:
    """The new cases over those already in `path` (when some were not run now)."""
    cases = {}
    if path.exists():
        try:
            cases = {c["id"]: c for c in json.loads(path.read_text()).get("cases", [])}
        except (json.JSONDecodeError, AttributeError):
            cases = {}
    for result in results:
        cases[result.id] = result.as_json()
    return {"machine": machine, "cases": [cases[c] for c in CASES if c in cases]}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    machine = machine_info()
    print(f"benchmarks on {machine['cpu']} ({machine['cores']} cores), device {machine['device']}")
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="iree-autotune-bench-") as scratch:
        deadline = time.monotonic() + args.budget - 30  # leave time for the page and plots
        settings = Settings(quick=args.quick, scratch=Path(scratch), deadline=deadline)
        for cid in sorted(args.ids, key=ORDER.index):
            case_start = time.perf_counter()
            print(f"{cid}: running", flush=True)
            result = CASES[cid](settings)
            results.append(result)
            extra = "".join(f", {k} = {v}" for k, v in result.extra.items())
            print(
                f"{cid} ratio {result.ratio:.4g}{extra}  ({result.meaning}; "
                f"{time.perf_counter() - case_start:.0f} s)",
                flush=True,
            )
    machine["wall_s"] = round(time.perf_counter() - started, 1)
    machine["ran"] = [r.id for r in results]  # the cases of this run (others are merged in)
    machine["quick"] = args.quick
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / ("quick.json" if args.quick else "latest.json")
    data = merge(path, machine, results)
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {path.relative_to(RESULTS.parent.parent)}")
    if not args.quick:
        from benchmarks.report import write_docs

        page = write_docs(data)
        print(f"wrote {page.relative_to(RESULTS.parent.parent)} and its plots")
    print(f"benchmarks took {machine['wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
