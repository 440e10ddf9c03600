"""`iree-autotune spec`: a tuned model's choices written as an IREE tuning spec after the
fact, from its `tune-model` report and, where given, the tuning cache of the module's runs.

The report names the build options the model was tuned with (the option set, the thread
count, the target) and what each tuned dispatch runs: the frozen choice of a `static`
module, else the offline winner. A tuning cache holds what an `online` or `explicit`
module chose where it ran; its decisions, where they name a dispatch of the model, replace
the report's. The dispatches are found again as `tune-model` finds them (the same options:
the same flow phase, IREE's same configurations, and the candidates named as before), and
the spec is built and checked as `tune-model --spec-out` builds it (`tuning_spec`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.files import read_source, refuse_overwrite, write_atomically
from autotune_contracts.policy import Policy
from autotune_model.commands import add_function_options
from autotune_model.report import TuneReport


def merged_decisions(from_report: Sequence[dict], from_cache: Sequence[dict]) -> list[dict]:
    """The report's decisions, those of each group the cache decides replaced by the
    cache's."""
    from autotune_model.freeze import decision_group

    def name(decision: dict) -> str:
        return decision_group(decision).split("::")[-1]

    decided = {name(d) for d in from_cache}
    return [*(d for d in from_report if name(d) not in decided), *from_cache]


def spec_from_report(
    model: str,
    filename: str,
    report: TuneReport,
    cache: str | None = None,
    function: str | None = None,
    input_shapes: tuple[str, ...] | None = None,
) -> tuple[str | None, list[str]]:
    """The tuning spec of the choices of `report` (a tune-model report of `model`), the
    decisions of the tuning cache `cache` taking precedence, and the notes that say what
    it does not carry (the spec is None where none can be written; the notes say why)."""
    from autotune_model.base_builds import IREE_THREADS
    from autotune_model.executors import SerialExecutor
    from autotune_model.freeze import report_decisions
    from autotune_model.progress import NoProgress
    from autotune_model.tunable import TuneOptions
    from autotune_model.tuning_pass import analyse, choose_option_set, choose_thread_count
    from autotune_model.tuning_setup import start
    from autotune_model.tuning_spec import model_spec
    from lowering.decisions import load_decisions

    threads = IREE_THREADS if report.base.threads is None else str(report.base.threads)
    options = TuneOptions(
        target=report.target, arch=report.arch, function=function, input_shapes=input_shapes,
        policy=Policy.STATIC, time_model=False, base=report.base.name, threads=threads,
        compile_cache=False, spec_out=True,
    )  # fmt: skip
    run = start(model, options, filename, SerialExecutor(), NoProgress(), (None, None), None)
    run.decisions = merged_decisions(report_decisions(report), load_decisions(cache))
    run.report.cache = cache or f"{report.model}'s report"
    choose_option_set(run)
    choose_thread_count(run, None)
    analysis = analyse(run)
    frozen = [t for t in analysis.tunables if t.frozen]
    for tunable in frozen:
        tunable.result.frozen = tunable.frozen
    notes = run.report.notes
    spec = model_spec(
        analysis.as_written, options.target, options.arch, run.report.base.flags,
        analysis.incumbents, analysis.tunables, frozen, notes,
    )  # fmt: skip
    return spec, notes


def cmd_spec(args: argparse.Namespace) -> int:
    """`iree-autotune spec MODEL --report R [--cache C] -o SPEC`: every file checked before
    any work; the spec written whole, or nothing and a non-zero status."""
    from autotune_model.measure import parse_shape

    refuse_overwrite(
        [("input", args.input), ("--report", args.report), ("--cache", args.cache)],
        [("-o", args.output)],
    )
    for shape in args.input_shape:
        parse_shape(shape)
    model = read_source(args.input)
    try:
        report = TuneReport.from_json(read_source(args.report))
    except ValueError as err:
        raise DiagnosticError(f"{args.report}: {err}") from None
    shapes = tuple(args.input_shape) or None
    spec, notes = spec_from_report(model, args.input, report, args.cache, args.function, shapes)
    for note in notes:
        print(f"note: {note}")
    if spec is None:
        raise DiagnosticError(f"no tuning spec written to {args.output}")
    write_atomically(args.output, spec)
    print(f"wrote {args.output}")
    return 0


def add_spec_command(sub) -> None:
    """Register `spec` on the `iree-autotune` subcommand parsers."""
    spec = sub.add_parser(
        "spec",
        help="write a tuned model's choices (its tune-model report, a tuning cache's "
        "decisions) as an IREE tuning spec",
    )
    spec.add_argument("input", metavar="MODEL.mlir", help="the model the report tuned")
    spec.add_argument("--report", metavar="TUNED.tune.json", required=True)
    spec.add_argument(
        "--cache",
        metavar="FILE",
        help="a tuning cache (or its export) whose decisions replace the report's choices "
        "for the dispatches they name: what an online or explicit module chose where it ran",
    )
    add_function_options(
        spec, "example shape of an argument, as tune-model was given it (dynamic models)"
    )
    spec.add_argument("-o", "--output", metavar="SPEC.mlir", required=True)
    spec.set_defaults(run=cmd_spec)
