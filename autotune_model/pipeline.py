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
"""

from __future__ import annotations

import functools
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from xdsl.dialects.builtin import ModuleOp

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import Policy
from autotune_dialect import parse_module
from autotune_dialect.iree_configs import ROOT_OP_WORDS, loop_count
from autotune_dialect.iree_ir import renamed_locations
from autotune_model.base_builds import (
    AUTO,
    BASES,
    IREE_THREADS,
    LOADS,
    LOADS_BUDGET_S,
    STOCK,
    bases_for,
    bases_of_decisions,
    choose_base,
    choose_threads,
    device_threads,
    threads_flags,
    timed_ratio,
)
from autotune_model.bench import (
    BenchmarkJob,
    Compiled,
    CompileJob,
    Measured,
    at_flow_phase,
    bench_module,
    benchmark_dispatch,
    compile_candidate,
    root_loop_count,
)
from autotune_model.candidates import (
    DEFAULT,
    candidates,
)
from autotune_model.compile_cache import CompileCache
from autotune_model.executors import Executor, LocalExecutor
from autotune_model.flow_builds import FROM_FLOW
from autotune_model.freeze import take_cached
from autotune_model.gains import Planned, dispatch_gains
from autotune_model.input_checks import check_example_inputs
from autotune_model.measure import (
    ModelFunction,
    check_model,
    function_inputs,
    model_function,
    time_model,
    time_model_loads,
)
from autotune_model.progress import NoProgress, Progress, TerminalProgress, watched
from autotune_model.report import (
    TUNING,
    BaseBuild,
    FrozenChoice,
    TuneReport,
)
from autotune_model.root_forms import configured_forms
from autotune_model.search import CandidateBuilds, Search, climb, combine
from autotune_model.sizes import host_values
from autotune_model.steadiness import watch_machine
from autotune_model.tunable import Tunable, TuneOptions
from autotune_model.tuned_module import build_tuned, export_name
from autotune_model.tuning_spec import (
    mark_incumbents,
    model_spec,
    starting_configs,
    with_incumbents,
)
from lowering.decisions import load_decisions
from lowering.dispatch_configs import DispatchConfig, default_configs
from lowering.driver import (
    CUDA_EXTERNAL_ONLY,
    DEFAULT_CUDA_ARCH,
    check_target,
    compile_lowered,
    failure_summary,
    model_error,
    run_iree_compile,
    target_flags,
    user_flags,
)

DEVICES = {"llvm-cpu": "local-task", "cuda": "cuda", "rocm": "hip", "vulkan": "vulkan"}
"""The device each target is timed on unless `TuneOptions.device` names another."""
DRIVERS = {
    "llvm-cpu": ("local-task", "local-sync"),
    "cuda": ("cuda",),
    "rocm": ("hip",),
    "vulkan": ("vulkan",),
}
"""The IREE drivers that run each target's modules."""
STOCK_TUNED_TOO = 0.7
"""With `--base auto`, a chosen option set whose build took at least this share of the
stock build's time (untuned) has the stock build's dispatches tuned too, and the faster
tuned module is kept: tuning gains 1.2-1.6x on a dispatch alone where the chosen set's
gains little (a 512x512x512 f32 matmul on local-sync: data tiling 0.77x the stock build
untuned and 0.77x tuned, the stock build tuned 0.64x; the tests' encoder: data tiling with
micro-kernels 0.94x untuned and 0.95x tuned, the stock build tuned 0.78x)."""


def tuning_device(options: TuneOptions) -> str:
    """The device `options` time on: `options.device` (a driver URI of the target's, as
    `local-sync` or `cuda://1`), else the target's default."""
    device = options.device or DEVICES[options.target]
    if device.split("://")[0] not in DRIVERS[options.target]:
        raise DiagnosticError(
            f"device {device!r} does not run {options.target} modules; expected one of "
            f"{', '.join(DRIVERS[options.target])}, or a URI of one (such as cuda://1)"
        )
    return device


def planned_threads(options: TuneOptions, device: str) -> tuple[int | None, bool]:
    """The thread count code generation is to be told (None: IREE's default) and whether
    it is timed first (`auto`: the device's count, taken where the model runs faster
    so). Only llvm-cpu has the option; a value other than auto, iree or a positive count
    is refused."""
    if options.threads == AUTO:
        count = device_threads(device) if options.target == "llvm-cpu" else None
        return count, True
    if options.threads == IREE_THREADS:
        return None, False
    if not options.threads.isdigit() or int(options.threads) < 1:
        raise DiagnosticError(
            f"threads {options.threads!r}: expected {AUTO}, {IREE_THREADS} or a positive count"
        )
    if options.target != "llvm-cpu":
        raise DiagnosticError(
            f"threads {options.threads}: only llvm-cpu code generation takes a thread count"
        )
    return int(options.threads), False


def _timed_builds(
    model: str, stock_flow: str, options: TuneOptions, filename: str, device: str
) -> Callable[[bytes, bytes], list[float]]:
    """`base_builds.timed_ratio` for the model's function on its example inputs."""
    probed = parse_module(stock_flow, f"{filename} (flow phase)")
    probe = model_function(probed, options.function, model, filename)
    inputs = function_inputs(probe, options.input_shapes, model)
    return timed_ratio(probe.name, inputs, device)


@dataclass
class TunedModel:
    """The tuned module, the IREE input IR it was built from, the report, and the tuning
    spec of its frozen configurations (`TuneOptions.spec_out`; None: not asked for, or it
    could not be written, which the report's notes say)."""

    vmfb: bytes
    lowered: str
    report: TuneReport
    spec: str | None = None


def input_type_flags(text: str) -> list[str]:
    """`iree-compile` flags for the model's input dialect."""
    return ["--iree-input-type=stablehlo"] if "stablehlo." in text else []


def flow_phase(
    text: str, target: str, arch: str | None, filename: str, extra_flags: Sequence[str] = ()
) -> str:
    """The model at the flow phase, as `iree-compile` (with `extra_flags`) prints it, with
    locations in `filename` (iree-compile reads the model from its input stream,
    `<stdin>`)."""
    flags = [*target_flags(target, arch), *input_type_flags(text), *extra_flags]
    flags += ["--compile-to=flow", "--mlir-print-debuginfo"]
    code, out, log = run_iree_compile(text, flags)
    error = model_error(log, text, filename)
    if error is not None:
        raise error
    if code != 0:
        raise DiagnosticError(f"{filename}: {failure_summary(log, code)}")
    return renamed_locations(out.decode(), filename, read_as="<stdin>")


def check_generated_code(target: str, arch: str | None) -> None:
    """Refuse an architecture iree-compile generates no code for: tune-model's variants
    are IREE's own code generation with other tile sizes."""
    if target == "cuda" and check_target(target, arch) in CUDA_EXTERNAL_ONLY:
        raise DiagnosticError(
            f"tune-model cannot tune for {arch}: iree-compile 3.13 generates no code for it "
            "(it builds hal.executable.source kernels only, and tune-model's variants are "
            f"IREE's own code generation); tune for another architecture, such as "
            f"{DEFAULT_CUDA_ARCH}"
        )


PACKING_OPS = ("linalg.pack", "linalg.unpack")
"""The root ops of a data-tiled build's packing dispatches."""


def worth_tuning(config: DispatchConfig, options: TuneOptions) -> bool:
    """Whether a dispatch is tuned: its root is a contraction, convolution or reduction (it
    has a reduction tile, or is a named op of that kind), or a data-tiled build's pack or
    unpack (unless `options.packing` is off). Other elementwise work is left as it is:
    tuned, such dispatches of the corpus's models (im2col gathers, transposes, elementwise
    ops) gained nothing measurable in their models, and each one tuned is one more group
    site between a model's other sites."""
    if any(word in config.root_op for word in ROOT_OP_WORDS):
        return True
    if config.root_op in PACKING_OPS:
        return options.packing
    return config.has_reduction_tile


def device_available(device: str) -> bool:
    """Whether this machine has the IREE device (a CUDA target can be tuned without one,
    compiled only; the run time then chooses among the candidates that built)."""
    import iree.runtime as rt

    try:
        return bool(rt.get_driver(device.split("://")[0]).query_available_devices())
    except (RuntimeError, ValueError):
        return False


def _tunables(
    module: ModuleOp,
    function: ModelFunction,
    configs: dict[str, DispatchConfig],
    values,
    options: TuneOptions,
    report: TuneReport,
) -> list[Tunable]:
    found: dict[str, Tunable] = {}
    per_call = Counter(export_name(d) for d in function.dispatches())
    for dispatch in function.dispatches():
        export = export_name(dispatch)
        if export in found or export in report.skipped:
            continue
        config = configs.get(export)
        if config is None:
            report.skipped[export] = "IREE gave it no tile configuration"
            continue
        if not worth_tuning(config, options):
            report.skipped[export] = (
                "packing (data tiling); left as IREE builds it (--skip-packing)"
                if config.root_op in PACKING_OPS
                else f"elementwise work or data movement (its root op, {config.root_op}, has "
                "no reduction loop); left as IREE builds it"
            )
            continue
        bench = bench_module(module, dispatch, values)
        if not isinstance(bench, str):
            bench = at_flow_phase(bench, target_flags(options.target, options.arch))
        if isinstance(bench, str):
            report.skipped[export] = bench
            continue
        loops, tiled = root_loop_count(bench), loop_count(config.lowering_config)
        if loops is not None and tiled is not None and loops != tiled:
            report.skipped[export] = (
                f"IREE configures another form of its root op than the flow phase has "
                f"({tiled} loops against {loops}), and tile sizes for one form do not fit "
                "the other; not tuned"
            )
            continue
        generated = candidates(config, options.candidates)
        if len(generated) < 2:
            report.skipped[export] = "no candidate around IREE's configuration"
            continue
        workload = [values[w] for w in dispatch.workload]
        group = f"{dispatch.entry_point.root_reference.data}::{export}__tuned"
        found[export] = Tunable(export, group, config, bench, workload, generated)
        found[export].result.per_call = per_call[export]
    return list(found.values())


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
    with user_flags(options.compile_args):
        if progress is None and not quiet and watched():
            with TerminalProgress() as shown:
                tuned, machine = watch_machine(
                    lambda: _tune(model, options, filename, executor, shown, jobs)
                )
        else:
            shown = progress or NoProgress()
            tuned, machine = watch_machine(
                lambda: _tune(model, options, filename, executor, shown, jobs)
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
    earlier: TuneReport | None = None,
) -> TunedModel:
    """`tune_model`'s work. `earlier`: the report of a run whose module, built with other
    options, lost to the stock build; this run, from the stock options, goes on from its
    times, jobs, notes and the option sets it tried."""
    compile_job, benchmark_job = jobs
    executor = executor or LocalExecutor()
    clock = time.perf_counter()
    policy = Policy.STATIC if options.freeze else options.policy
    device = tuning_device(options)
    threads, measure_threads = planned_threads(options, device)
    report = TuneReport(filename, options.target, options.arch, policy, executor.name)
    report.device = device
    if earlier is not None:
        report.seconds, report.jobs, report.notes = earlier.seconds, earlier.jobs, earlier.notes
        report.base = replace(
            report.base,
            ratios=earlier.base.ratios,
            tuned_over_stock=earlier.base.tuned_over_stock,
        )
    seconds = report.seconds
    builds = CandidateBuilds(
        compile_job,
        executor,
        progress,
        report.jobs,
        CompileCache(options.compile_cache_folder)
        if options.compile_cache and compile_job is compile_candidate
        else None,
    )
    # Read first: a missing or unreadable cache fails before any work.
    cache = options.cache if options.freeze else None
    decisions = load_decisions(cache)
    report.cache = cache

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[phase] = seconds.get(phase, 0.0) + now - clock
        clock = now

    check_generated_code(options.target, options.arch)
    benchmarked = device_available(device)
    progress.status("compiling the model to the flow phase")
    flows = {(): flow_phase(model, options.target, options.arch, filename)}
    if options.input_shapes is not None:  # before anything is built or timed on them
        progress.status("checking the input shapes")
        check_example_inputs(flows[()], options.function, options.input_shapes, model, filename)

    def flow_of(flags) -> str:
        if tuple(flags) not in flows:
            flows[tuple(flags)] = flow_phase(model, options.target, options.arch, filename, flags)
        return flows[tuple(flags)]

    base_vmfb = stock_vmfb = None  # the chosen option set's build; the stock one

    @functools.cache
    def timed_builds() -> Callable[[bytes, bytes], list[float]]:
        """Two builds of the model timed against each other (made once)."""
        return _timed_builds(model, flows[()], options, filename, device)

    # (A model with dynamic sizes chooses too: the data-tiling option sets' flow phase
    # holds no encoded tensors, and its lowered host code builds from there.)
    auto = options.base == AUTO and options.target == "llvm-cpu"
    # Freezing a cache: the option sets whose dispatches its decisions name (those it was
    # tuned with), whatever a new timing would say.
    among = tuple(bases_of_decisions(flow_of, decisions)) if auto and decisions else ()
    if len(among) == 1 or (among and STOCK not in among and not options.time_model):
        report.base = BaseBuild(among[0], list(BASES[among[0]]), {})
        if among[0] != STOCK:
            report.notes.append(
                f"build options {among[0]}: the tuning cache's decisions name that build's "
                "dispatches"
            )
    elif auto and benchmarked and options.time_model:
        sets = among or bases_for(flows[()])
        progress.status(f"choosing build options: building and timing {', '.join(sets)}")
        timed = timed_builds()  # (a model without a function to time is refused here)
        stock_vmfb = compile_lowered(
            model, options.target, options.arch, extra_args=list(input_type_flags(model))
        )
        report.base, base_vmfb = choose_base(
            model,
            options.target,
            options.arch,
            input_type_flags(model),
            options.faster_by,
            timed,
            stock_vmfb,
            among=sets,
        )
        lap("choose build options")
    elif options.base not in (AUTO, STOCK):
        report.base = BaseBuild(options.base, list(BASES[options.base]), {})
    if measure_threads and threads is not None and benchmarked and options.time_model:
        # Code generation told the device's thread count, where the model runs faster so.
        progress.status(f"timing the build told {threads} threads against the build not told")
        timed = timed_builds()
        flags = [*input_type_flags(model), *report.base.flags]
        if base_vmfb is None:
            base_vmfb = compile_lowered(model, options.target, options.arch, extra_args=flags)
        loads, told = choose_threads(
            model, options.target, options.arch, flags, base_vmfb, threads, timed
        )
        report.base.threads_tried, report.base.threads_loads = threads, loads
        if told is not None:
            report.base.threads, base_vmfb = threads, told
        lap("choose build options")
    elif not measure_threads:
        report.base.threads = threads
    # (the thread count is code generation's: the option set's flow phase is the same)
    as_written = flow_of(report.base.flags)
    if report.base.threads is not None:
        report.base.flags = [*report.base.flags, *threads_flags(report.base.threads)]
    base_flags = report.base.flags
    progress.status("analysing the dispatches")
    configs = default_configs(as_written, options.target, options.arch, base_flags)
    configs, incumbents = starting_configs(
        options.spec_in, as_written, options.target, options.arch, base_flags, configs
    )
    worth = [e for e, config in configs.items() if worth_tuning(config, options)]
    flow, unformed = configured_forms(as_written, configs, worth)
    flow = with_incumbents(flow, incumbents)  # a spec's configurations: the incumbents
    for export, why in unformed.items():
        report.skipped[export] = f"{why}; not tuned"
    # the kernels whose root op configured_forms may have given IREE's form
    formed = {e for e in worth if configs[e].root_form is not None and e not in unformed}
    module = parse_module(flow, f"{filename} (flow phase)")
    function = model_function(module, options.function, model, filename)
    function_name = function.name
    inputs = function_inputs(function, options.input_shapes, model)
    values = host_values(function.body, function.arguments, [o.shape for o in inputs])
    tunables = _tunables(module, function, configs, values, options, report)
    if decisions:
        take_cached(tunables, decisions, str(cache), report)
    tuned = [t for t in tunables if not t.frozen]
    lap("analyse")

    flags = (*target_flags(options.target, options.arch), *base_flags, *FROM_FLOW)
    search = Search(flags, device, options, builds, benchmark_job)
    searching = time.perf_counter()
    search.build([(t, c) for t in tuned for c in t.candidates])
    lap("compile")
    unbuilt = {
        t.export: error
        for t in tuned
        if t.export in formed and (error := search.compiled[(t.export, DEFAULT.name)].error)
    }
    if unbuilt:
        # IREE's form of the root op did not build even with IREE's own configuration (a
        # batch-1 max pooling, given its batch back, failed IREE's code generation): those
        # kernels stay as the flow phase has them, not tuned
        flow, _ = configured_forms(as_written, configs, [e for e in worth if e not in unbuilt])
        flow = with_incumbents(flow, incumbents)
        for export, error in unbuilt.items():
            report.skipped[export] = (
                "its kernel in the form IREE configures (its root op marked, or its unit "
                "dimensions given back) did not build with IREE's own configuration: "
                f"{_without_place(error)}; left as the flow phase has it, not tuned"
            )
        tunables = [t for t in tunables if t.export not in unbuilt]
        tuned = [t for t in tuned if t.export not in unbuilt]
    if benchmarked:
        search.time(tuned)
    else:
        report.notes.append(
            f"not benchmarked: no {device} device here; each group has the first "
            f"{options.top_k} candidates that built, and the run time chooses"
        )
    lap("benchmark")
    search.judge_all(tuned, benchmarked)
    if benchmarked and options.combine:
        combine(search, tuned)
        lap("combine")
    if benchmarked:
        report.notes += climb(search, tuned, time.perf_counter() - searching)
        lap("search")
    report.dispatches = [t.result for t in tunables]
    mark_incumbents(tunables, incumbents, options.spec_in, report.notes)
    spec_of = (
        functools.partial(
            model_spec, as_written, options.target, options.arch, base_flags, incumbents
        )
        if options.spec_out
        else None
    )

    grouped = [t for t in tunables if t.result.kept]
    progress.status("building the tuned module")
    vmfb, lowered = build_tuned(flow, filename, function_name, grouped, options, policy, base_flags)
    lap("build")
    if benchmarked and options.time_model and options.dispatch_gains and grouped:
        progress.status("timing each tuned dispatch's gain in the model")
        slower = _measure_gains(
            flow, filename, function, grouped, options, base_flags, inputs, report
        )
        lap("gains in the model")
        if slower:
            # A winner that the model runs slower than IREE's own configuration goes: in
            # an online module its site would settle off the variant it is expected to,
            # and the function would lose its fast path (one execution region per site).
            for tunable in slower:
                gain = tunable.result.model_gain
                assert gain is not None
                grouped.remove(tunable)
                tunable.ungroup(
                    f"the model was {-gain.gained_ns / 1e3:.1f} us slower per call with "
                    f"{tunable.winner} than with IREE's own (noise +-{gain.noise_ns / 1e3:.1f} us)"
                )
            vmfb, lowered = build_tuned(
                flow, filename, function_name, grouped, options, policy, base_flags
            )
            lap("build")

    stock = base_vmfb  # the build the tuned module must beat: IREE's, with the base flags
    if benchmarked and stock is None:
        progress.status("compiling the stock build")
        stock = compile_lowered(
            model, options.target, options.arch, extra_args=[*input_type_flags(model), *base_flags]
        )
    if options.time_model and stock is not None:
        progress.status("timing the tuned module against the stock build")
        report.timing = time_model(stock, vmfb, function_name, inputs, policy, device, resolve=1.0)
        lap("measure")
        # The guard: while the module's time may be above the stock build's (the upper
        # bound of its interval), groups go, smallest gain first (the cache's choices
        # stay: they were made where the module serves).
        droppable = [t for t in grouped if not t.frozen]
        while droppable and report.timing.upper > options.slower_at_most:
            dropped = min(droppable, key=lambda t: t.gain_ns)
            grouped.remove(dropped)
            droppable.remove(dropped)
            low, high = report.timing.interval or (report.timing.ratio,) * 2
            dropped.ungroup(
                f"the model was {report.timing.ratio:.3f}x the stock build's time with it "
                f"(95% interval {low:.3f}-{high:.3f}: it may be slower)"
            )
            vmfb, lowered = build_tuned(
                flow, filename, function_name, grouped, options, policy, base_flags
            )
            lap("build")
            report.timing = time_model(
                stock, vmfb, function_name, inputs, policy, device, resolve=1.0
            )
            lap("measure")
    if stock_vmfb is not None and report.base.name != STOCK:
        # The timing chose other options than the stock ones: the module must beat the
        # stock build itself, measured over fresh loads, else the stock build's
        # dispatches are tuned.
        progress.status(f"timing the tuned module against the stock build in {LOADS} loads")
        against, loads = time_model_loads(
            stock_vmfb, vmfb, function_name, inputs, policy, device, LOADS, LOADS_BUDGET_S
        )
        report.base.tuned_over_stock = [t.ratio for t in loads]
        lap("measure")
        if against.ratio > 1.0:  # the stock build's dispatches are tuned instead
            report.notes.append(
                f"the tuned module, built with {report.base.name}, took {against.ratio:.3f}x "
                f"the stock build's time (the median of {LOADS} fresh loads): the stock "
                "build's dispatches were tuned instead"
            )
            stock_options = replace(options, base=STOCK)
            return _tune(model, stock_options, filename, executor, progress, jobs, report)
        untuned = report.base.ratios.get(report.base.name)
        if untuned is not None and untuned >= STOCK_TUNED_TOO:
            # The stock build's dispatches may tune further than these: tuned too, and
            # the faster module over fresh loads is kept.
            stock_options = replace(options, base=STOCK)
            other = _tune(model, stock_options, filename, executor, progress, jobs, report)
            clock = time.perf_counter()  # that run counted its own phases
            other_against, _ = time_model_loads(
                stock_vmfb, other.vmfb, function_name, inputs, policy, device, LOADS, LOADS_BUDGET_S
            )
            lap("measure")
            kept = other if other_against.ratio < against.ratio else None
            kept_report = other.report if kept is not None else report
            kept_report.notes.append(
                f"the stock build's dispatches were tuned too (the build with "
                f"{report.base.name} took {untuned:.3f}x the stock build's time untuned, at "
                f"least {STOCK_TUNED_TOO}x): that module took {other_against.ratio:.3f}x the "
                f"stock build's time against {against.ratio:.3f}x for the one built with "
                f"{report.base.name} (the median of {LOADS} fresh loads each); kept: "
                + ("the stock build's, tuned" if kept is not None else f"{report.base.name}'s")
            )
            if kept is not None:
                return kept
    if not benchmarked:  # no device here to run it on
        return _finished(tunables, grouped, policy, vmfb, lowered, report, spec_of)
    progress.status("checking the tuned module's results against the stock build's")
    failure = check_model(
        stock, vmfb, function_name, inputs, policy, device, options.check_tolerance
    )
    if failure is not None and grouped:
        # Never written as it is: the module is built without groups (IREE's own).
        for tunable in grouped:
            tunable.ungroup(f"the tuned module failed its last check: {failure}")
        report.notes.append(
            f"the tuned module failed its last check ({failure}); it is written "
            "without groups, as the stock build"
        )
        vmfb, lowered = build_tuned(flow, filename, function_name, [], options, policy, base_flags)
        failure = check_model(
            stock, vmfb, function_name, inputs, policy, device, options.check_tolerance
        )
    if failure is not None:
        raise DiagnosticError(
            f"{filename}: the module built for @{function_name} fails its check before it is "
            f"written ({failure}); nothing was written"
        )
    lap("check")
    return _finished(tunables, grouped, policy, vmfb, lowered, report, spec_of)


def _finished(
    tunables: Sequence[Tunable],
    grouped: Sequence[Tunable],
    policy: str,
    vmfb: bytes,
    lowered: str,
    report: TuneReport,
    spec_of: Callable[..., str | None] | None = None,
) -> TunedModel:
    """The tuned model, its report completed: the frozen choices, the peak memory; and
    the tuning spec of its configurations, where `spec_of` makes it (`model_spec`)."""
    if policy == Policy.STATIC:
        for tunable in tunables:
            winner = tunable.winner if tunable in grouped else DEFAULT.name
            tunable.result.frozen = tunable.frozen or [FrozenChoice(winner, TUNING)]
    spec = spec_of(tunables, grouped, report.notes) if spec_of is not None else None
    report.peak_rss_mb = peak_memory()
    return TunedModel(vmfb, lowered, report, spec)


def _measure_gains(
    flow: str,
    filename: str,
    function: ModelFunction,
    grouped: Sequence[Tunable],
    options: TuneOptions,
    base_flags: Sequence[str],
    inputs: Sequence,
    report: TuneReport,
) -> list[Tunable]:
    """Each dispatch tuned in this run: its gain in the model (`gains`), measured on the
    model built with its groups `explicit` (the tuning cache's decisions left out). Returns those
    whose winner the model ran slower than IREE's own, by more than the noise."""
    measured = [t for t in grouped if not t.frozen and t.winner != DEFAULT.name]
    if not measured:
        return []
    plan = [
        Planned(
            t.group,
            t.winner_variant,
            t.export,
            t.result.default_ns or 0.0,
            t.result.best.median_ns if t.result.best and t.result.best.median_ns else 0.0,
            max(1, t.result.per_call),
            sum(o.nbytes for o in t.bench.operands),
        )
        for t in measured
    ]
    try:
        # No `expected` variants here: with them, setting any group back to IREE's own
        # takes the whole function off its fast path, and that path's cost (230-350 us
        # a call on the real models) was counted as every group's gain.
        explicit, _ = build_tuned(
            flow,
            filename,
            function.name,
            measured,
            options,
            Policy.EXPLICIT,
            base_flags,
            expected=False,
        )
        found = dispatch_gains(explicit, function.name, inputs, plan, report.device)
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
