"""Tune a whole model: generated variants for every dispatch worth it, chosen at run time.

1. The model (linalg/tensor or StableHLO input IR) is compiled to the flow phase, and IREE
   is asked for its own configuration of every dispatch (`default_configs`).
2. Dispatches with a contraction, convolution or reduction at their root are tuned; each
   gets candidates around IREE's configuration (`candidates`), IREE's own first.
3. Every candidate is compiled alone (`bench.compile_candidate`), unless the compile cache
   holds its build (`compile_cache`, looked up here before any job is sent); a dispatch's
   candidates are benchmarked side by side on synthetic inputs of its real sizes
   (`bench.benchmark_dispatch`). Both jobs run through an executor (local workers, or
   Ray). Failures and wrong results drop a candidate.
4. The top-k candidates faster than IREE's become, with IREE's, an `autotune.group` that
   the dispatch runs; the module is lowered with the chosen policy and compiled.
5. The tuned module and the stock build of the model are timed end to end, side by side.

The phases of one pass are `tuning_pass`'s; this module runs a second pass, from the stock
options, where a module built with other options lost to the stock build or may.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import Policy
from autotune_model.base_builds import IREE_THREADS
from autotune_model.bench import (
    BenchmarkJob,
    Compiled,
    CompileJob,
    Measured,
    benchmark_dispatch,
    compile_candidate,
)
from autotune_model.executors import Executor, LocalExecutor
from autotune_model.freeze import report_decisions
from autotune_model.progress import NoProgress, Progress, TerminalProgress, watched
from autotune_model.report import TUNING
from autotune_model.steadiness import watch_machine
from autotune_model.tunable import TuneOptions
from autotune_model.tuning_pass import TunedModel, Verdict, faster_of_both, tuning_pass
from autotune_model.tuning_setup import start
from lowering.driver import user_flags


def tune_model(
    model: str,
    options: TuneOptions = TuneOptions(),  # noqa: B008 - a frozen value
    *,
    filename: str = "<model>",
    executor: Executor | None = None,
    progress: Progress | None = None,
    quiet: bool = False,
    compile_job: Callable[[CompileJob], Compiled] = compile_candidate,
    benchmark_job: Callable[[BenchmarkJob], list[Measured]] = benchmark_dispatch,
) -> TunedModel:
    """Tune every dispatch of `model` worth it and build the tuned module.

    When the model is timed (the target's device is here), a tuned module whose time may
    be above the stock build's (the upper bound of the 95% interval of their ratio, timed
    side by side, above `options.slower_at_most`) loses its groups one at a time, the one
    with the smallest gain alone first, until it is not (at worst it is the stock module).
    With `options.strict_timing`, a module timed on an unsteady machine (other processes
    held up its calls, or the rounds' ratios spread: `ModelTiming.steady`) is
    refused. Where the timing chose IREE options other than the stock ones
    (`--base auto`), the module must then be faster than the stock build itself over a
    few fresh loads (`base_builds.LOADS`), else the stock build's dispatches are tuned
    instead (the report then holds both runs' times and jobs, and says why).

    Progress goes to `progress`; by default, where a person watches (a terminal, a
    notebook), to bars on standard error (`TerminalProgress`), unless `quiet`.

    `compile_job` and `benchmark_job` are the two jobs (injectable, Triton-style: a test
    or another device brings its own); they run on `executor` (default: local workers, one
    per core). The compile cache (`options.compile_cache`) serves the default compile job
    only: an injected one builds every candidate itself."""
    jobs = (compile_job, benchmark_job)
    tune = tune_at_sizes if options.also_at else _tune
    with user_flags(options.compile_args):
        if progress is None and not quiet and watched():
            with TerminalProgress() as shown:
                tuned, machine = watch_machine(
                    lambda: tune(model, options, filename, executor, shown, jobs)
                )
        else:
            shown = progress or NoProgress()
            tuned, machine = watch_machine(
                lambda: tune(model, options, filename, executor, shown, jobs)
            )
    tuned.report.machine = machine
    timing = tuned.report.timing
    if options.strict_timing and timing is not None and not timing.steady:
        raise DiagnosticError(
            f"{filename}: --strict-timing: the machine was too unsteady to time the tuned "
            f"module ({timing.steadiness()}); nothing written"
        )
    return tuned


def _tune(
    model: str,
    options: TuneOptions,
    filename: str,
    executor: Executor | None,
    progress: Progress,
    jobs: tuple[Callable, Callable],
) -> TunedModel:
    """`tune_model`'s work: a first pass; where its module, built with other options than
    the stock ones, lost to the stock build (`Verdict.STOCK_INSTEAD`), a second pass over
    the same phases from the stock options; where it was data-tiled and beat its set
    without data tiling by little (`Verdict.UNTILED_TOO`), a second pass from that set."""
    executor = executor or LocalExecutor()
    first = tuning_pass(start(model, options, filename, executor, progress, jobs, None))
    if first.second_base is None:
        return first.finish()
    earlier = first.run.report  # the second pass goes on from its times, jobs and notes
    second_options = replace(options, base=first.second_base)
    second = tuning_pass(start(model, second_options, filename, executor, progress, jobs, earlier))
    if first.verdict is Verdict.STOCK_INSTEAD:
        return second.finish()
    return faster_of_both(first, second.finish())


def tune_at_sizes(
    model: str,
    options: TuneOptions,
    filename: str,
    executor: Executor | None,
    progress: Progress,
    jobs: tuple[Callable, Callable],
) -> TunedModel:
    """A dynamic model tuned at each set of example shapes (`options.input_shapes`, then
    `options.also_at`), frozen, and built once with every size's winners: each dispatch
    runs, at each workload tuned, the variant that won there, and the nearest size's
    winner elsewhere (the static selector over sizes: no exploration at run time). The
    first size chooses the build options (option set, thread count); the other sizes are
    tuned with them, so that every run has the same dispatches."""
    if options.input_shapes is None or options.cache is not None:
        raise DiagnosticError(
            f"{filename}: tuning at several sizes needs the first size's input shapes "
            "(input_shapes) and takes no tuning cache"
        )
    sets = [options.input_shapes, *options.also_at]
    # (each run's start checks every size's shapes: a wrong one fails before any work)
    one = replace(options, freeze=True, policy=Policy.STATIC, cache=None)
    runs: list[TunedModel] = []
    for shapes in sets:
        progress.status(f"tuning at {', '.join(shapes or ())}")
        runs.append(
            _tune(model, replace(one, input_shapes=shapes), filename, executor, progress, jobs)
        )
        base = runs[0].report.base
        one = replace(
            one, base=base.name, threads=IREE_THREADS if base.threads is None else str(base.threads)
        )
    decisions = [d for run in runs for d in report_decisions(run.report, at_sizes=True)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sizes.json"
        path.write_text(json.dumps({"decisions": decisions}), encoding="utf-8")
        final = replace(one, input_shapes=sets[0], cache=str(path), spec_out=options.spec_out)
        tuned = _tune(model, final, filename, executor, progress, jobs)
    report = tuned.report
    report.cache = None
    for dispatch in report.dispatches:
        dispatch.frozen = [replace(f, source=TUNING) for f in dispatch.frozen]
    for run in runs:
        report.jobs.compiled += run.report.jobs.compiled
        report.jobs.cached += run.report.jobs.cached
        for phase, seconds in run.report.seconds.items():
            report.seconds[phase] = report.seconds.get(phase, 0.0) + seconds
    shown = "; ".join(", ".join(s or ()) for s in sets)
    report.notes.append(
        f"tuned at {len(sets)} sizes ({shown}): each dispatch runs, at each workload tuned, "
        "the variant that won there, and the nearest size's winner at other workloads"
    )
    return tuned
