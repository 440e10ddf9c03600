"""`make bench`: run the benchmark cases, write `results/latest.json` and `docs/benchmarks.md`.

    python -m benchmarks.run [--quick] [--only B2,B3] [--models mlp,bert_flax]
                             [--out DIR | --write-docs] [--dry-run]

Each case prints its ratio as it finishes; none is an assertion. A whole run (every case,
full size) writes `benchmarks/results/latest.json` (`{"machine": {...}, "cases": [{"id",
"ratio", "seconds", "detail"}, ...]}`) and regenerates `docs/benchmarks.md` and its plots
(`docs/benchmarks/*.png`) from it. A partial run, `--quick` (every case at its smallest
settings: a smoke test of the cases and the page, 9 minutes on an idle 2-core machine
without the frontends' interpreter, where B14 measures nothing), `--only` (some cases) or
`--models` (some of the models that B7, B13, B14 and B15 tune), writes its results, page
and plots to `--out` (default `benchmarks/out/partial/`, not tracked) and leaves the
tracked files alone;
`--only ... --write-docs` merges its cases into `latest.json` and regenerates the page.
`--dry-run` prints the cases and the files a run would write, and runs nothing.

B1 runs last: `iree-compile` of its 1000 groups is the longest step, so it gets the time
left (`--budget`, 22 minutes by default) and reports a bound if it is cut.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
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
    b14_peers,
    b15_specs,
)
from benchmarks.common import DOCS, PLOTS, RESULTS, ROOT, CaseResult, Settings, machine_info

# Run order: B1 last, so that its 1000-group compile gets the time the others left.
ORDER = (
    "B2",
    "B3",
    "B4",
    "B5",
    "B6",
    "B7",
    "B8",
    "B9",
    "B10",
    "B11",
    "B12",
    "B13",
    "B14",
    "B15",
    "B1",
)
BUDGET_S = 22 * 60  # `make bench` finishes within 23 minutes on a 2-core machine
PARTIAL = ROOT / "benchmarks" / "out" / "partial"  # where partial runs write (git-ignored)
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
    "B14": b14_peers.run,
    "B15": b15_specs.run,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--quick", action="store_true", help="every case at its smallest settings (a smoke test)"
    )
    parser.add_argument("--only", metavar="B1,B2", help="comma-separated case ids")
    parser.add_argument(
        "--models",
        metavar="NAME,NAME",
        help="the models the cases that tune whole models (B7, B13, B14, B15) take, of their "
        "own lists (default: all of them; names: the own models and the tests' corpus)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help=f"folder for the results, page and plots (default for --quick and --only: "
        f"{PARTIAL.relative_to(ROOT)})",
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="with --only: merge the cases into results/latest.json and regenerate "
        "docs/benchmarks.md and its plots",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the cases and the files to write; run none"
    )
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
    args.models = _models(parser, args.models)
    if args.write_docs and args.quick:
        parser.error("--write-docs with --quick: the page shows full-size runs only")
    if args.write_docs and args.out is not None:
        parser.error("--write-docs writes the tracked results and page; --out a folder: give one")
    args.ids = ids
    return args


def _models(parser: argparse.ArgumentParser, given: str | None) -> frozenset[str] | None:
    """`--models` as a set of names, each one a model the cases know (else an error)."""
    if given is None:
        return None
    from benchmarks.models import known

    names = frozenset(n.strip() for n in given.split(",") if n.strip())
    unknown = sorted(names - set(known()))
    if unknown or not names:
        named = ", ".join(unknown) or repr(given)
        parser.error(f"unknown model(s) {named}; known: {', '.join(known())}")
    return names


@dataclass(frozen=True)
class Outputs:
    """The files a run writes: its results (JSON), the page made from them and its plots;
    `merge`: the results file's other cases are kept (a run of some cases)."""

    results: Path
    page: Path
    plots: Path
    merge: bool


def outputs(args: argparse.Namespace) -> Outputs:
    """The tracked `results/latest.json`, `docs/benchmarks.md` and its plots for a whole run
    or `--write-docs`; else `--out` (default `PARTIAL` for `--quick` and `--only`), so a
    partial run never replaces the numbers of the last whole one."""
    partial = args.quick or args.models is not None or sorted(args.ids) != sorted(CASES)
    if args.write_docs or (args.out is None and not partial):
        return Outputs(RESULTS / "latest.json", DOCS / "benchmarks.md", PLOTS, merge=True)
    folder = args.out if args.out is not None else PARTIAL
    return Outputs(folder / "results.json", folder / "benchmarks.md", folder / "plots", False)


def merge(path: Path | None, machine: dict, results: list[CaseResult]) -> dict:
    """The new cases over those already in `path` (when some were not run now)."""
    cases = {}
    if path is not None and path.exists():
        try:
            cases = {c["id"]: c for c in json.loads(path.read_text()).get("cases", [])}
        except (json.JSONDecodeError, AttributeError):
            cases = {}
    for result in results:
        cases[result.id] = result.as_json()
    return {"machine": machine, "cases": [cases[c] for c in CASES if c in cases]}


def run_cases(args: argparse.Namespace) -> list[CaseResult]:
    """Run the chosen cases in `ORDER`, each case's wall time in its result."""
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="iree-autotune-bench-") as scratch:
        deadline = time.monotonic() + args.budget - 30  # leave time for the page and plots
        settings = Settings(
            quick=args.quick, scratch=Path(scratch), deadline=deadline, models=args.models
        )
        for cid in sorted(args.ids, key=ORDER.index):
            case_start = time.perf_counter()
            print(f"{cid}: running", flush=True)
            result = CASES[cid](settings)
            result.seconds = round(time.perf_counter() - case_start, 1)
            results.append(result)
            extra = "".join(f", {k} = {v}" for k, v in result.extra.items())
            print(
                f"{cid} ratio {result.ratio:.4g}{extra}  ({result.meaning}; "
                f"{result.seconds:.0f} s)",
                flush=True,
            )
    return results


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = outputs(args)
    order = sorted(args.ids, key=ORDER.index)
    if args.dry_run:
        print(f"would run {', '.join(order)}{' (--quick)' if args.quick else ''} and write")
        for path in (out.results, out.page, out.plots / "*.png"):
            print(f"  {_shown(path)}")
        return 0
    started = time.perf_counter()
    machine = machine_info()
    print(f"benchmarks on {machine['cpu']} ({machine['cores']} cores), device {machine['device']}")
    results = run_cases(args)
    machine["wall_s"] = round(time.perf_counter() - started, 1)
    machine["ran"] = [r.id for r in results]  # the cases of this run (others are merged in)
    machine["quick"] = args.quick
    data = merge(out.results if out.merge else None, machine, results)
    out.results.parent.mkdir(parents=True, exist_ok=True)
    out.results.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {_shown(out.results)}")
    from benchmarks.report import write_docs

    write_docs(data, out.page, out.plots)
    print(f"wrote {_shown(out.page)} and its plots")
    print(f"benchmarks took {machine['wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
