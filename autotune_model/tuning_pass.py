"""One pass of tuning a model, as the phases the report names: choose build options,
analyse, compile, benchmark, combine, search, build, gains in the model, measure (the
guard), and check. Each phase is a function of the pass's state (`TuningRun`) and of
what the phases before it gave (`Analysis`, `Built`); `tuning_pass` runs them in order and
says whether the stock build calls for a second pass (`Verdict`), which `pipeline` runs.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from autotune_bridge import parse_module
from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import Policy
from autotune_model.base_builds import (
    AUTO,
    BASES,
    DATA_TILED_BASES,
    LOADS,
    LOADS_BUDGET_S,
    STOCK,
    bases_for,
    bases_of_decisions,
    choose_base,
    choose_threads,
    threads_flags,
    without_data_tiling,
)
from autotune_model.candidates import DEFAULT
from autotune_model.flow_builds import FROM_FLOW
from autotune_model.freeze import take_cached
from autotune_model.gains import Planned, dispatch_gains
from autotune_model.measure import (
    ModelFunction,
    check_model,
    compared,
    function_inputs,
    model_function,
    time_model,
    time_model_loads,
)
from autotune_model.report import TUNING, BaseBuild, FrozenChoice, TuneReport
from autotune_model.root_forms import configured_forms
from autotune_model.search import Search, climb, combine
from autotune_model.sizes import host_values, workloads_run
from autotune_model.spec_twins import agree_twins, twin_sets
from autotune_model.time_shares import fewer_candidates, smallest, why_left
from autotune_model.tunable import Tunable
from autotune_model.tuned_module import build_tuned
from autotune_model.tuning_setup import (
    TuningRun,
    find_tunables,
    input_type_flags,
    worth_tuning,
)
from autotune_model.tuning_spec import (
    mark_incumbents,
    model_spec,
    starting_configs,
    with_incumbents,
)
from lowering.dispatch_configs import DispatchConfig, default_configs
from lowering.driver import compile_lowered, target_flags

UNTILED_TUNED_TOO = 0.7
"""With `--base auto`, a chosen data-tiled option set (`DATA_TILED_BASES`) whose build took
at least this share of the time of its set without data tiling (untuned: the stock set,
or im2col) has that set's dispatches tuned too, and the faster tuned module is kept:
tuning gains 1.2-1.6x on a matmul alone where the `mmt4d` that data tiling makes of it
gains little (a 512x512x512 f32 matmul on local-sync: data tiling 0.77x the stock build
untuned and 0.77x tuned, the stock build tuned 0.64x; the tests' encoder: data tiling with
micro-kernels 0.94x untuned and 0.95x tuned, the stock build tuned 0.78x; MobileNetV2,
im2col with data tiling and micro-kernels taken over im2col, 0.892x and 0.847x the stock
build untuned as B7 timed them: tuned 0.790x where im2col alone tuned came out
0.725-0.756x). A set with im2col alone is not second-guessed so: its matmuls tune as far
as the stock build's convolutions (MobileNetV2, im2col 0.80-0.86x untuned, came out tuned
0.75-0.84x against 0.80-0.87x for the stock build tuned, in six of six runs, the second
pass taking 145 of its 345 s)."""


@dataclass
class TunedModel:
    """The tuned module, the IREE input IR it was built from, the report, and the tuning
    spec of its frozen configurations (`TuneOptions.spec_out`; None: not asked for, or it
    could not be written, which the report's notes say)."""

    vmfb: bytes
    lowered: str
    report: TuneReport
    spec: str | None = None


class Verdict(Enum):
    """What the stock build says of a pass whose module was built with other options than
    the stock ones (`against_stock_build`)."""

    KEEP = "keep"  # its module stands (or it was built with the stock options)
    STOCK_INSTEAD = "stock instead"  # it lost: the stock build's dispatches are tuned instead
    # a data-tiled set won by little: its set without data tiling is tuned too (`tuned_too`)
    UNTILED_TOO = "untiled too"


@dataclass
class Analysis:
    """The dispatches of the model built with the chosen options, and the ones tuned."""

    as_written: str  # the flow phase as the option set builds it
    configs: dict[str, DispatchConfig]  # IREE's (or a tuning spec's) configuration of each
    incumbents: dict  # the tuning spec's configurations (`starting_configs`)
    worth: list[str]  # the exports worth tuning
    flow: str  # the flow phase the tuned module is built from
    formed: set[str]  # the exports whose root op the flow phase has in IREE's form
    function: ModelFunction
    inputs: list
    tunables: list[Tunable]
    tuned: list[Tunable]  # the tunables this run tunes (not frozen from a cache)


@dataclass
class Built:
    """The tuned module as built so far, and the tunables it groups."""

    grouped: list[Tunable]
    vmfb: bytes
    lowered: str


def choose_option_set(run: TuningRun) -> tuple[bytes | None, bytes | None]:
    """The IREE option set the model is built with, in `run.report.base`: `--base` as
    given; with `auto` on llvm-cpu, the set a frozen tuning cache's decisions name, else
    the one timed fastest against the stock build. Returns the chosen set's build and
    the stock build where they were made to time them (else None, None). (A model with
    dynamic sizes chooses too: the data-tiling sets' flow phase holds no encoded tensors,
    and its lowered host code builds from there.)"""
    options, report = run.options, run.report
    auto = options.base == AUTO and options.target == "llvm-cpu"
    # Freezing a cache: the option sets whose dispatches its decisions name (those it was
    # tuned with), whatever a new timing would say.
    among = tuple(bases_of_decisions(run.flow_of, run.decisions)) if auto and run.decisions else ()
    if len(among) == 1 or (among and STOCK not in among and not options.time_model):
        report.base = BaseBuild(among[0], list(BASES[among[0]]), {})
        if among[0] != STOCK:
            report.notes.append(
                f"build options {among[0]}: the tuning cache's decisions name that build's "
                "dispatches"
            )
        return None, None
    if auto and run.benchmarked and options.time_model:
        sets = among or bases_for(run.flows[()])
        run.progress.status(f"choosing build options: building and timing {', '.join(sets)}")
        timed = run.timed_builds  # (a model without a function to time is refused here)
        flags = input_type_flags(run.model)
        stock_vmfb = compile_lowered(
            run.model, options.target, options.arch, extra_args=list(flags)
        )
        report.base, base_vmfb = choose_base(
            run.model, options.target, options.arch, flags, options.faster_by, timed,
            stock_vmfb, among=sets,
        )  # fmt: skip
        run.lap("choose build options")
        return base_vmfb, stock_vmfb
    if options.base not in (AUTO, STOCK):  # (a second pass keeps the first's timings)
        report.base = replace(report.base, name=options.base, flags=list(BASES[options.base]))
    return None, None


def choose_thread_count(run: TuningRun, base_vmfb: bytes | None) -> bytes | None:
    """The thread count code generation is told, in `run.report.base.threads`: with
    `--threads auto`, the device's count where the model runs faster so (timed against the
    build not told), else the count given (or IREE's default). Returns the option set's
    build, the one told the count where that was timed."""
    options, report = run.options, run.report
    if run.measure_threads and run.threads is not None and run.benchmarked and options.time_model:
        threads = run.threads
        run.progress.status(f"timing the build told {threads} threads against the build not told")
        timed = run.timed_builds
        flags = [*input_type_flags(run.model), *report.base.flags]
        if base_vmfb is None:
            base_vmfb = compile_lowered(run.model, options.target, options.arch, extra_args=flags)
        against, told = choose_threads(
            run.model, options.target, options.arch, flags, base_vmfb, threads, timed
        )
        report.base.threads_tried = threads
        if against is not None:
            report.base.threads_loads = against.loads
            report.base.threads_interval = list(against.interval)
        if told is not None:
            report.base.threads, base_vmfb = threads, told
        run.lap("choose build options")
    elif not run.measure_threads:
        report.base.threads = run.threads
    return base_vmfb


def analyse(run: TuningRun) -> Analysis:
    """IREE's configuration of every dispatch of the model built with the chosen options
    (a tuning spec's where `--spec-in` gives one), the flow phase the tuned module is built
    from, and the dispatches worth tuning with their candidates (those a frozen cache
    decides are taken from it)."""
    options, report = run.options, run.report
    # (the thread count is code generation's: the option set's flow phase is the same)
    as_written = run.flow_of(report.base.flags)
    if report.base.threads is not None:
        report.base.flags = [*report.base.flags, *threads_flags(report.base.threads)]
    flags = report.base.flags
    run.progress.status("analysing the dispatches")
    configs = default_configs(as_written, options.target, options.arch, flags)
    configs, incumbents = starting_configs(
        options.spec_in, as_written, options.target, options.arch, flags, configs
    )
    worth = [e for e, config in configs.items() if worth_tuning(config, options)]
    flow, unformed = configured_forms(as_written, configs, worth)
    flow = with_incumbents(flow, incumbents)  # a spec's configurations: the incumbents
    for export, why in unformed.items():
        report.skipped[export] = f"{why}; not tuned"
    # the kernels whose root op configured_forms may have given IREE's form
    formed = {e for e in worth if configs[e].root_form is not None and e not in unformed}
    module = parse_module(flow, f"{run.filename} (flow phase)")
    function = model_function(module, options.function, run.model, run.filename)
    inputs = function_inputs(function, options.input_shapes, run.model)
    shapes = [o.shape for o in inputs]
    values = host_values(function.body, function.arguments, shapes)
    runs = workloads_run(function.body, function.arguments, shapes, function.dispatches(), values)
    tunables = find_tunables(module, function, configs, values, runs, options, report)
    if run.decisions:
        take_cached(tunables, run.decisions, str(report.cache), report)
    tuned = [t for t in tunables if not t.frozen]
    run.lap("analyse")
    return Analysis(
        as_written, configs, incumbents, worth, flow, formed, function, inputs, tunables, tuned
    )


def search_candidates(run: TuningRun, analysis: Analysis) -> None:
    """Every candidate compiled (but the smallest dispatches', `_leave_small_dispatches`),
    benchmarked where the device is here, judged, combined and searched further; each
    dispatch's result in the report."""
    options, report = run.options, run.report
    flags = (*target_flags(options.target, options.arch), *report.base.flags, *FROM_FLOW)
    search = Search(flags, run.device, options, run.builds, run.benchmark_job)
    searching = time.perf_counter()
    if run.benchmarked and options.time_model and options.small_share > 0:
        _leave_small_dispatches(run, analysis, search)
    search.build([(t, c) for t in analysis.tuned for c in t.candidates])
    run.lap("compile")
    _leave_unbuilt_forms(run, analysis, search)
    tuned = analysis.tuned
    if run.benchmarked:
        search.time(tuned)
    else:
        report.notes.append(
            f"not benchmarked: no {run.device} device here; each group has the first "
            f"{options.top_k} candidates that built, and the run time chooses"
        )
    run.lap("benchmark")
    search.judge_all(tuned, run.benchmarked)
    if run.benchmarked and options.combine:
        combine(search, tuned)
        run.lap("combine")
    if run.benchmarked:
        report.notes += climb(search, tuned, time.perf_counter() - searching)
        run.lap("search")
    report.dispatches = [t.result for t in analysis.tunables]
    mark_incumbents(analysis.tunables, analysis.incumbents, options.spec_in, report.notes)


def _leave_small_dispatches(run: TuningRun, analysis: Analysis, search: Search) -> None:
    """Where the model is timed: IREE's own configuration of every dispatch built and
    timed first; the smallest dispatches, whose times per call add up to at most
    `options.small_share` of all of theirs, are left as IREE builds them (their candidates
    are never built): tuning them cannot pay; the next smallest try fewer candidates
    (`time_shares`)."""
    options = run.options
    search.build([(t, t.candidates[0]) for t in analysis.tuned])
    run.lap("compile")
    own = search.time_own(analysis.tuned)
    run.lap("benchmark")
    per_call = {
        t.export: own[t.export] * max(1, t.result.per_call)
        for t in analysis.tuned
        if t.export in own
    }
    small = smallest(per_call, options.small_share)
    note = fewer_candidates(analysis.tuned, per_call, small, options.candidates)
    if note is not None:
        run.report.notes.append(note)
    if not small:
        return
    run.report.skipped.update(why_left(per_call, small, options.small_share))
    analysis.tunables = [t for t in analysis.tunables if t.export not in small]
    analysis.tuned = [t for t in analysis.tuned if t.export not in small]


def _leave_unbuilt_forms(run: TuningRun, analysis: Analysis, search: Search) -> None:
    """The kernels whose root op was given IREE's form and that did not build even with
    IREE's own configuration (a batch-1 max pooling, given its batch back, failed IREE's
    code generation) stay as the flow phase has them, not tuned."""
    unbuilt = {
        t.export: error
        for t in analysis.tuned
        if t.export in analysis.formed
        and (error := search.compiled[(t.export, DEFAULT.name)].error)
    }
    if not unbuilt:
        return
    kept = [e for e in analysis.worth if e not in unbuilt]
    flow, _ = configured_forms(analysis.as_written, analysis.configs, kept)
    analysis.flow = with_incumbents(flow, analysis.incumbents)
    for export, error in unbuilt.items():
        run.report.skipped[export] = (
            "its kernel in the form IREE configures (its root op marked, or its unit "
            "dimensions given back) did not build with IREE's own configuration: "
            f"{_without_place(error)}; left as the flow phase has it, not tuned"
        )
    analysis.tunables = [t for t in analysis.tunables if t.export not in unbuilt]
    analysis.tuned = [t for t in analysis.tuned if t.export not in unbuilt]


def one_configuration_for_twins(run: TuningRun, analysis: Analysis) -> None:
    """Where a frozen module's tuning spec is asked for, the dispatches no spec matcher
    tells apart run one candidate (`spec_twins`), so that the spec carries them."""
    options = run.options
    if not options.spec_out or run.policy != Policy.STATIC:
        return
    exports = [t.export for t in analysis.tuned]
    flags = run.report.base.flags
    sets = twin_sets(analysis.as_written, options.target, options.arch, flags, exports)
    agree_twins(analysis.tuned, sets, run.report.notes)


def spec_writer(run: TuningRun, analysis: Analysis) -> Callable[..., str | None] | None:
    """What writes the tuning spec of the frozen configurations (`--spec-out`), or None."""
    if not run.options.spec_out:
        return None
    options = run.options
    return functools.partial(
        model_spec, analysis.as_written, options.target, options.arch, run.report.base.flags,
        analysis.incumbents,
    )  # fmt: skip


def build(run: TuningRun, analysis: Analysis) -> Built:
    """The tuned module of the dispatches that kept a group; where the model is timed,
    each tuned dispatch's gain in the model is measured, and a winner the model runs slower
    than IREE's own configuration goes (in an online module its site would settle off the
    variant it is expected to, and the function would lose its fast path)."""
    options = run.options
    built = Built([t for t in analysis.tunables if t.result.kept], b"", "")
    run.progress.status("building the tuned module")
    rebuild(run, analysis, built)
    if not (run.benchmarked and options.time_model and options.dispatch_gains and built.grouped):
        return built
    run.progress.status("timing each tuned dispatch's gain in the model")
    slower = _measure_gains(run, analysis, built.grouped)
    run.lap("gains in the model")
    if not slower:
        return built
    for tunable in slower:
        gain = tunable.result.model_gain
        assert gain is not None
        built.grouped.remove(tunable)
        tunable.ungroup(
            f"the model was {-gain.gained_ns / 1e3:.1f} us slower per call with "
            f"{tunable.winner} than with IREE's own (noise +-{gain.noise_ns / 1e3:.1f} us)"
        )
    rebuild(run, analysis, built)
    return built


def rebuild(run: TuningRun, analysis: Analysis, built: Built, without_groups=False) -> None:
    """`built`'s module built again from its grouped tunables (or none: IREE's own)."""
    grouped = [] if without_groups else built.grouped
    built.vmfb, built.lowered = build_tuned(
        analysis.flow, run.filename, analysis.function.name, grouped, run.options,
        run.policy, run.report.base.flags,
    )  # fmt: skip
    run.lap("build")


def stock_build(run: TuningRun, base_vmfb: bytes | None) -> bytes | None:
    """The build the tuned module must beat, where the model is timed: IREE's, with the
    option set's flags (made already where the option set was timed)."""
    if base_vmfb is not None or not run.benchmarked:
        return base_vmfb
    run.progress.status("compiling the stock build")
    flags = [*input_type_flags(run.model), *run.report.base.flags]
    return compile_lowered(run.model, run.options.target, run.options.arch, extra_args=flags)


def guard(run: TuningRun, analysis: Analysis, built: Built, stock: bytes | None) -> None:
    """The tuned module timed against `stock` side by side; while its time may be above
    the stock build's (the upper bound of the ratio's interval above
    `slower_at_most`), groups go, the smallest gain first (the tuning cache's choices stay:
    they were made where the module serves)."""
    options, report = run.options, run.report
    if not options.time_model or stock is None:
        return
    run.progress.status("timing the tuned module against the stock build")
    name = analysis.function.name

    def timed(vmfb: bytes):
        return time_model(stock, vmfb, name, analysis.inputs, run.policy, run.device, resolve=1.0)

    report.timing = timed(built.vmfb)
    run.lap("measure")
    droppable = [t for t in built.grouped if not t.frozen]
    while droppable and report.timing.upper > options.slower_at_most:
        dropped = min(droppable, key=lambda t: t.gain_ns)
        built.grouped.remove(dropped)
        droppable.remove(dropped)
        low, high = report.timing.interval or (report.timing.ratio,) * 2
        dropped.ungroup(
            f"the model was {report.timing.ratio:.3f}x the stock build's time with it "
            f"(95% interval {low:.3f}-{high:.3f}: it may be slower)"
        )
        rebuild(run, analysis, built)
        report.timing = timed(built.vmfb)
        run.lap("measure")


def against_stock_build(
    run: TuningRun, analysis: Analysis, built: Built, stock_vmfb: bytes | None
) -> tuple[Verdict, float | None]:
    """Where the timing chose other options than the stock ones, the tuned module timed
    against the stock build itself over fresh loads (the median ratio, also returned):
    where it may be slower (the median load or the interval's upper end above
    `options.slower_at_most`), the stock build's dispatches are tuned instead; faster, but
    data-tiled and little faster than its set without data tiling untuned (`tuned_too`),
    that set's dispatches are tuned too."""
    report = run.report
    if stock_vmfb is None or report.base.name == STOCK:
        return Verdict.KEEP, None
    run.progress.status(f"timing the tuned module against the stock build in {LOADS} loads")
    against, loads = time_model_loads(
        stock_vmfb, built.vmfb, analysis.function.name, analysis.inputs, run.policy,
        run.device, LOADS, LOADS_BUDGET_S,
    )  # fmt: skip
    over = compared(loads)
    report.base.tuned_over_stock = over.loads
    report.base.tuned_over_stock_interval = list(over.interval)
    run.lap("measure")
    if over.may_exceed(run.options.slower_at_most):
        report.notes.append(
            f"the tuned module, built with {report.base.name}, took {over.words()} the "
            "stock build's time: it may be slower, so the stock build's dispatches were "
            "tuned instead"
        )
        return Verdict.STOCK_INSTEAD, against.ratio
    if tuned_too(report.base) is not None:
        return Verdict.UNTILED_TOO, against.ratio
    return Verdict.KEEP, against.ratio


def over_untiled(base: BaseBuild) -> tuple[str, float] | None:
    """For a data-tiled set: the same set without data tiling, and the data-tiled build's
    time over that set's build's, untuned (None: not data-tiled, or either not timed)."""
    if base.name not in DATA_TILED_BASES:
        return None
    untiled = without_data_tiling(base.name)
    tiled_ratio, untiled_ratio = base.ratios.get(base.name), base.ratios.get(untiled)
    if tiled_ratio is None or not untiled_ratio:
        return None
    return untiled, tiled_ratio / untiled_ratio


def tuned_too(base: BaseBuild) -> str | None:
    """The option set whose build's dispatches are tuned too, beside the chosen set's: for
    a data-tiled set, the same set without data tiling where the chosen set's build untuned
    took `UNTILED_TUNED_TOO` of its time or more (None: none)."""
    found = over_untiled(base)
    return found[0] if found is not None and found[1] >= UNTILED_TUNED_TOO else None


def check(
    run: TuningRun, analysis: Analysis, built: Built, stock: bytes | None, spec_of
) -> TunedModel:
    """The tuned model, once its module gives the stock build's results (where the
    device is here): a module that fails is built without groups (IREE's own) and
    checked again; one that still fails is never written."""
    if not run.benchmarked:  # no device here to run it on
        return finished(run, analysis, built, spec_of)
    run.progress.status("checking the tuned module's results against the stock build's")
    name, inputs, tolerance = analysis.function.name, analysis.inputs, run.options.check_tolerance

    def checked(vmfb: bytes) -> str | None:
        return check_model(stock, vmfb, name, inputs, run.policy, run.device, tolerance)

    failure = checked(built.vmfb)
    if failure is not None and built.grouped:
        for tunable in built.grouped:
            tunable.ungroup(f"the tuned module failed its last check: {failure}")
        run.report.notes.append(
            f"the tuned module failed its last check ({failure}); it is written "
            "without groups, as the stock build"
        )
        rebuild(run, analysis, built, without_groups=True)
        failure = checked(built.vmfb)
    if failure is not None:
        raise DiagnosticError(
            f"{run.filename}: the module built for @{analysis.function.name} fails its check "
            f"before it is written ({failure}); nothing was written"
        )
    run.lap("check")
    return finished(run, analysis, built, spec_of)


def finished(run: TuningRun, analysis: Analysis, built: Built, spec_of) -> TunedModel:
    """The tuned model, its report completed: the frozen choices, the peak memory; and
    the tuning spec of its configurations, where `spec_of` makes it (`model_spec`)."""
    report = run.report
    if run.policy == Policy.STATIC:
        for tunable in analysis.tunables:
            winner = tunable.winner if tunable in built.grouped else DEFAULT.name
            tunable.result.frozen = tunable.frozen or [FrozenChoice(winner, TUNING)]
    spec = spec_of(analysis.tunables, built.grouped, report.notes) if spec_of else None
    report.peak_rss_mb = peak_memory()
    return TunedModel(built.vmfb, built.lowered, report, spec)


@dataclass
class TuningPass:
    """A pass run through its guard: what its check needs, and the stock build's verdict
    (with the median ratio to the stock build over fresh loads, where it was timed)."""

    run: TuningRun
    analysis: Analysis
    built: Built
    stock: bytes | None  # the build the guard timed the module against
    stock_vmfb: bytes | None  # the stock build itself, where the option set was timed
    spec_of: Callable[..., str | None] | None
    verdict: Verdict
    against: float | None

    def finish(self) -> TunedModel:
        """The pass's tuned model, checked."""
        return check(self.run, self.analysis, self.built, self.stock, self.spec_of)

    @property
    def second_base(self) -> str | None:
        """The option set a second pass is tuned from: the stock set where the module lost
        to the stock build, the chosen set without data tiling where it is tuned too
        (`tuned_too`); None: no second pass."""
        if self.verdict is Verdict.STOCK_INSTEAD:
            return STOCK
        if self.verdict is Verdict.UNTILED_TOO:
            return tuned_too(self.run.report.base)
        return None


def tuning_pass(run: TuningRun) -> TuningPass:
    """The phases of one pass (begun by `tuning_setup.start`), in order, up to the stock
    build's verdict."""
    base_vmfb, stock_vmfb = choose_option_set(run)
    base_vmfb = choose_thread_count(run, base_vmfb)
    analysis = analyse(run)
    search_candidates(run, analysis)
    one_configuration_for_twins(run, analysis)
    spec_of = spec_writer(run, analysis)
    built = build(run, analysis)
    stock = stock_build(run, base_vmfb)
    guard(run, analysis, built, stock)
    verdict, against = against_stock_build(run, analysis, built, stock_vmfb)
    return TuningPass(run, analysis, built, stock, stock_vmfb, spec_of, verdict, against)


def faster_of_both(first: TuningPass, other: TunedModel) -> TunedModel:
    """Of the first pass's module and `other` (the stock build's dispatches tuned), the one
    faster against the stock build over fresh loads, with a note that says why."""
    run, analysis = first.run, first.analysis
    assert first.stock_vmfb is not None and first.against is not None
    run.clock = time.perf_counter()  # the second pass counted its own phases
    other_against, _ = time_model_loads(
        first.stock_vmfb, other.vmfb, analysis.function.name, analysis.inputs, run.policy,
        run.device, LOADS, LOADS_BUDGET_S,
    )  # fmt: skip
    run.lap("measure")
    base = run.report.base
    found = over_untiled(base)
    assert found is not None
    untiled, untuned = found
    other_build = "the stock build" if untiled == STOCK else f"the build with {untiled}"
    keep_other = other_against.ratio < first.against
    kept_report = other.report if keep_other else run.report
    kept_report.notes.append(
        f"{other_build}'s dispatches were tuned too (the build with {base.name} took "
        f"{untuned:.3f}x its time untuned, at least {UNTILED_TUNED_TOO}x): that module took "
        f"{other_against.ratio:.3f}x the stock build's time against {first.against:.3f}x "
        f"for the one built with {base.name} (the median of {LOADS} fresh loads each); "
        "kept: " + (f"{other_build}'s, tuned" if keep_other else f"{base.name}'s")
    )
    return other if keep_other else first.finish()


def _measure_gains(run: TuningRun, analysis: Analysis, grouped: Sequence[Tunable]) -> list[Tunable]:
    """Each dispatch tuned in this run: its gain in the model (`gains`), measured on the
    model built with its groups `explicit` (the tuning cache's decisions left out). Returns
    those whose winner the model ran slower than IREE's own, by more than the noise."""
    measured = [t for t in grouped if not t.frozen and t.winner != DEFAULT.name]
    if not measured:
        return []
    plan = [
        Planned(
            t.group,
            t.winner_variant,
            t.export,
            t.result.default_ns or 0.0,
            t.result.best_ns or 0.0,
            max(1, t.result.per_call),
            sum(o.nbytes for o in t.bench.operands),
        )
        for t in measured
    ]
    function, report = analysis.function, run.report
    try:
        # No `expected` variants here: with them, setting any group back to IREE's own
        # takes the whole function off its fast path, and that path's cost (230-350 us
        # a call on the real models) was counted as every group's gain.
        explicit, _ = build_tuned(
            analysis.flow, run.filename, function.name, measured, run.options,
            Policy.EXPLICIT, report.base.flags, expected=False,
        )  # fmt: skip
        found = dispatch_gains(explicit, function.name, analysis.inputs, plan, report.device)
    except (DiagnosticError, RuntimeError) as err:
        report.notes.append(f"the tuned dispatches' gains in the model were not measured: {err}")
        return []
    for t in measured:
        t.result.model_gain = found.get(t.group)
    return [t for t in measured if (g := t.result.model_gain) and g.gained_ns < -g.noise_ns]


def _without_place(error: str) -> str:
    """A candidate's build error (one line: `first_error`, or `failure_summary`) without
    its place in the text iree-compile read (generated: it means nothing to the user)."""
    return re.sub(r"^<stdin>:\d+:\d+: ", "", error).rstrip(".")


def peak_memory() -> dict[str, int]:
    """The largest resident memory so far (MB) of this process and of its children."""
    import resource

    return {
        "tuner": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "compiler": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,
    }
