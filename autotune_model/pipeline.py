"""Tune a whole model: generated variants for every dispatch worth it, chosen at run time.

1. The model (linalg/tensor or StableHLO input IR) is compiled to the flow phase, and IREE
   is asked for its own configuration of every dispatch (`default_configs`).
2. Dispatches with a contraction, convolution or reduction at their root are tuned; each
   gets candidates around IREE's configuration (`candidates`), IREE's own first.
3. Every candidate is compiled alone (`bench.compile_candidate`); a dispatch's candidates
   are benchmarked side by side on synthetic inputs of its real sizes
   (`bench.benchmark_dispatch`). Both jobs run through an executor (local workers, or
   Ray). Failures and wrong results drop a candidate.
4. The top-k candidates faster than IREE's become, with IREE's, an `autotune.group` that
   the dispatch runs; the module is lowered with the chosen policy and compiled.
5. The tuned module and the stock build of the model are timed end to end, side by side.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from xdsl.dialects.builtin import ArrayAttr, ModuleOp

from autotune_dialect import parse_module, print_module
from autotune_dialect.diagnostics import DiagnosticError
from autotune_dialect.flow import DispatchOp
from autotune_dialect.importer import renamed_locations
from autotune_dialect.interop import symbol_name
from autotune_dialect.symbols import lookup_symbol
from autotune_dialect.variants import ROOT_OP_WORDS, tile_variants
from autotune_model.bench import (
    BenchmarkJob,
    BenchModule,
    Compiled,
    CompileJob,
    Measured,
    agree,
    bench_module,
    benchmark_dispatch,
    compile_candidate,
    root_loop_count,
)
from autotune_model.candidates import Candidate, candidates, combined, loop_count, tile_lists
from autotune_model.executors import Executor, LocalExecutor
from autotune_model.measure import (
    InputShape,
    ModelFunction,
    check_model,
    function_inputs,
    model_function,
    time_model,
)
from autotune_model.report import (
    FAILED_TO_COMPILE,
    FAILED_TO_RUN,
    KEPT,
    REFERENCE,
    SLOWER,
    WRONG,
    CandidateResult,
    DispatchResult,
    TuneReport,
)
from autotune_model.sizes import host_values
from lowering.autotune_to_iree import lower_module
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
)

DEVICES = {"llvm-cpu": "local-task", "cuda": "cuda"}


@dataclass(frozen=True)
class TuneOptions:
    """How to tune: the target, the model function and its example input shapes (needed
    when it takes dynamic sizes), the policy of the groups, how many candidates to try and
    keep, and the numerical tolerance against IREE's own configuration."""

    target: str = "llvm-cpu"
    arch: str | None = None
    function: str | None = None
    input_shapes: tuple[InputShape, ...] | None = None
    policy: str = "online"
    freeze: bool = False
    cache: str | None = None
    top_k: int = 2
    candidates: int = 8
    tolerance: float = 1e-3
    check_tolerance: float = 1e-2  # the whole model's results against the stock build's
    repeats: int = 15
    time_model: bool = True
    faster_by: float = 1.03  # a candidate is kept when IREE's own takes this much longer
    combine: bool = True  # a second round: the best two changes to different lists together
    slower_at_most: float = 1.02  # a tuned model slower than this x stock loses groups


class Progress(Protocol):
    """What the pipeline tells about its progress (a progress bar, or nothing)."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, label: str) -> None: ...


class NoProgress:
    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, label: str) -> None:
        pass


@dataclass
class TunedModel:
    """The tuned module, the IREE input IR it was built from, and the report."""

    vmfb: bytes
    lowered: str
    report: TuneReport


@dataclass
class _Tunable:
    """A dispatch worth tuning: the sites that run it, IREE's config, its bench module."""

    export: str
    config: DispatchConfig
    bench: BenchModule
    workload: list[int]
    candidates: list[Candidate]
    result: DispatchResult = field(init=False)
    finalists: list[Candidate] = field(init=False)

    def __post_init__(self) -> None:
        self.finalists = list(self.candidates)  # the candidates of the current round
        operands = [o.text for o in self.bench.operands]
        self.result = DispatchResult(self.export, self.config.root_op, self.workload, operands)

    @property
    def kept_candidates(self) -> list[Candidate]:
        kept = set(self.result.kept)
        return [c for c in self.candidates if c.name in kept]

    @staticmethod
    def names(candidates: Sequence[Candidate]) -> set[str]:
        return {c.name for c in candidates}

    @property
    def gain_ns(self) -> float:
        """How much faster than IREE's own configuration the best kept candidate ran alone."""
        best = self.result.best
        if best is None or self.result.default_ns is None or best.median_ns is None:
            return 0.0
        return self.result.default_ns - best.median_ns

    def ungroup(self, why: str) -> None:
        """Leave the dispatch as IREE builds it: its kept candidates become slower ones."""
        for result in self.result.candidates:
            if result.fate == KEPT:
                result.fate, result.detail = SLOWER, why


def input_type_flags(text: str) -> list[str]:
    """`iree-compile` flags for the model's input dialect."""
    return ["--iree-input-type=stablehlo"] if "stablehlo." in text else []


def flow_phase(text: str, target: str, arch: str | None, filename: str) -> str:
    """The model at the flow phase, as the stock `iree-compile` prints it, with locations
    in `filename` (iree-compile reads the model from its input stream, `<stdin>`)."""
    flags = [*target_flags(target, arch), *input_type_flags(text)]
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


def worth_tuning(config: DispatchConfig) -> bool:
    """Whether a dispatch's root is a contraction, convolution or reduction (it has a
    reduction tile, or is a named op of that kind); elementwise work is left as it is."""
    if any(word in config.root_op for word in ROOT_OP_WORDS):
        return True
    lists = tile_lists(config.lowering_config)
    return any(t > 0 for name in ("vector_reduction", "reduction") for t in lists.get(name, []))


def device_available(device: str) -> bool:
    """Whether this machine has the IREE device (a CUDA target can be tuned without one,
    compiled only; the run time then chooses among the candidates that built)."""
    import iree.runtime as rt

    try:
        return bool(rt.get_driver(device.split("://")[0]).query_available_devices())
    except (RuntimeError, ValueError):
        return False


def _export_name(dispatch: DispatchOp) -> str:
    return dispatch.entry_point.nested_references.data[-1].data


def _tunables(
    module: ModuleOp,
    function: ModelFunction,
    configs: dict[str, DispatchConfig],
    values,
    options: TuneOptions,
    report: TuneReport,
) -> list[_Tunable]:
    found: dict[str, _Tunable] = {}
    for dispatch in function.dispatches():
        export = _export_name(dispatch)
        if export in found or export in report.skipped:
            continue
        config = configs.get(export)
        if config is None:
            report.skipped[export] = "IREE gave it no tile configuration"
            continue
        if not worth_tuning(config):
            report.skipped[export] = (
                f"elementwise work or data movement (its root op, {config.root_op}, has no "
                "reduction loop); left as IREE builds it"
            )
            continue
        bench = bench_module(module, dispatch, values)
        if isinstance(bench, str):
            report.skipped[export] = bench
            continue
        loops, tiled = root_loop_count(bench), loop_count(config.lowering_config)
        if loops is not None and tiled is not None and loops != tiled:
            report.skipped[export] = (
                f"IREE configures another form of its root op than the flow phase has "
                f"({tiled} loops against {loops}: a unit dimension, such as a batch of 1, "
                "folded away), and tile sizes for one form do not fit the other; not tuned"
            )
            continue
        generated = candidates(config, options.candidates)
        if len(generated) < 2:
            report.skipped[export] = "no candidate around IREE's configuration"
            continue
        workload = [values[w] for w in dispatch.workload]
        found[export] = _Tunable(export, config, bench, workload, generated)
    return list(found.values())


def tune_model(
    model: str,
    options: TuneOptions = TuneOptions(),  # noqa: B008 - a frozen value
    *,
    filename: str = "<model>",
    executor: Executor | None = None,
    progress: Progress | None = None,
    compile_job: Callable[[CompileJob], Compiled] = compile_candidate,
    benchmark_job: Callable[[BenchmarkJob], list[Measured]] = benchmark_dispatch,
) -> TunedModel:
    """Tune every dispatch of `model` worth it and build the tuned module.

    When the model is timed (the target's device is here), a tuned module slower than the
    stock build by more than `options.slower_at_most` loses its groups one at a time,
    the one with the smallest gain alone first, until it is not (at worst it is the stock
    module).

    `compile_job` and `benchmark_job` are the two jobs (injectable, Triton-style: a test
    or another device brings its own); they run on `executor` (default: local workers, one
    per core)."""
    progress = progress or NoProgress()
    executor = executor or LocalExecutor()
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    policy = "static" if options.freeze else options.policy
    report = TuneReport(filename, options.target, options.arch, policy, executor.name)
    report.seconds = seconds

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[phase] = seconds.get(phase, 0.0) + now - clock
        clock = now

    check_generated_code(options.target, options.arch)
    flow = flow_phase(model, options.target, options.arch, filename)
    configs = default_configs(flow, options.target, options.arch)
    module = parse_module(flow, f"{filename} (flow phase)")
    function = model_function(module, options.function, model, filename)
    function_name = function.name
    inputs = function_inputs(function, options.input_shapes, model)
    values = host_values(function.body, function.arguments, [o.shape for o in inputs])
    tunables = _tunables(module, function, configs, values, options, report)
    lap("analyse")

    flags = tuple(target_flags(options.target, options.arch))
    device = DEVICES[options.target]
    benchmarked = device_available(device)
    round_one = [(t, c) for t in tunables for c in t.candidates]
    jobs = (compile_job, benchmark_job)
    compiled = _compile(round_one, flags, executor, compile_job, progress)
    lap("compile")
    measured: dict[tuple[str, str], Measured] = {}
    if benchmarked:
        measured = _benchmark(
            tunables, compiled, device, options, executor, benchmark_job, progress
        )
    else:
        report.notes.append(
            f"not benchmarked: no {device} device here; each group has the first "
            f"{options.top_k} candidates that built, and the run time chooses"
        )
    lap("benchmark")
    for tunable in tunables:
        _judge(tunable, tunable.candidates, compiled, measured, options, benchmarked)

    if benchmarked and options.combine:
        _combine(tunables, compiled, measured, flags, device, options, executor, jobs, progress)
        lap("combine")
    report.dispatches = [t.result for t in tunables]

    decisions = load_decisions(options.cache) if options.freeze and options.cache else []
    grouped = [t for t in tunables if t.result.kept]
    vmfb, lowered = _build(flow, filename, function_name, grouped, options, policy, decisions)
    lap("build")

    stock = None
    if benchmarked:
        stock = compile_lowered(
            model, options.target, options.arch, extra_args=input_type_flags(model)
        )
    if options.time_model and stock is not None:
        report.timing = time_model(stock, vmfb, function_name, inputs, policy, device)
        lap("measure")
        # The guard: groups that cost the model more than they gain go, smallest gain first.
        while grouped and report.timing.ratio > options.slower_at_most:
            dropped = min(grouped, key=lambda t: t.gain_ns)
            grouped.remove(dropped)
            dropped.ungroup(
                f"the model was {report.timing.ratio:.3f}x the stock build's time with it"
            )
            vmfb, lowered = _build(
                flow, filename, function_name, grouped, options, policy, decisions
            )
            lap("build")
            report.timing = time_model(stock, vmfb, function_name, inputs, policy, device)
            lap("measure")
    if stock is not None and grouped:
        failure = check_model(
            stock, vmfb, function_name, inputs, policy, device, options.check_tolerance
        )
        if failure is not None:
            # Never written as it is: the module is built without groups (IREE's own).
            for tunable in grouped:
                tunable.ungroup(f"the tuned module failed its last check: {failure}")
            report.notes.append(
                f"the tuned module failed its last check ({failure}); it is written "
                "without groups, as the stock build"
            )
            vmfb, lowered = _build(flow, filename, function_name, [], options, policy, decisions)
        lap("check")
    report.peak_rss_mb = peak_memory()
    return TunedModel(vmfb, lowered, report)


def peak_memory() -> dict[str, int]:
    """The largest resident memory so far (MB) of this process and of its children."""
    import resource

    return {
        "tuner": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "compiler": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,
    }


def _compile(
    pairs: Sequence[tuple[_Tunable, Candidate]],
    flags: tuple[str, ...],
    executor: Executor,
    compile_job: Callable[[CompileJob], Compiled],
    progress: Progress,
) -> dict[tuple[str, str], Compiled]:
    """Every (dispatch, candidate) built alone: (export, candidate name) -> the outcome."""
    jobs = [CompileJob(t.export, c, t.bench, flags) for t, c in pairs]
    progress.phase("compile candidates", len(jobs))
    done = executor.run(
        compile_job, jobs, lambda r: progress.advance(f"{r.dispatch} {r.candidate.name}")
    )
    return {(r.dispatch, r.candidate.name): r for r in done}


def _benchmark(
    tunables: Sequence[_Tunable],
    compiled: dict[tuple[str, str], Compiled],
    device: str,
    options: TuneOptions,
    executor: Executor,
    benchmark_job: Callable[[BenchmarkJob], list[Measured]],
    progress: Progress,
) -> dict[tuple[str, str], Measured]:
    """Each dispatch's built finalists timed side by side, one job per dispatch."""
    jobs = []
    for tunable in tunables:
        built = tuple(
            (c, vmfb)
            for c in tunable.finalists
            if (vmfb := compiled[(tunable.export, c.name)].vmfb) is not None
        )
        if built:
            jobs.append(
                BenchmarkJob(
                    tunable.export,
                    built,
                    tunable.bench.operands,
                    device,
                    repeats=options.repeats,
                    dispatches=tunable.bench.repeat,
                )
            )
    progress.phase("benchmark dispatches", len(jobs))
    done = executor.run(
        benchmark_job,
        jobs,
        lambda r: progress.advance(r[0].dispatch if r else ""),
        alone=True,
        gpu=options.target == "cuda",
    )
    return {(m.dispatch, m.candidate.name): m for results in done for m in results}


def _combine(
    tunables: Sequence[_Tunable],
    compiled: dict[tuple[str, str], Compiled],
    measured: dict[tuple[str, str], Measured],
    flags: tuple[str, ...],
    device: str,
    options: TuneOptions,
    executor: Executor,
    jobs: tuple[Callable, Callable],
    progress: Progress,
) -> None:
    """Round two: the best two changes to different tile lists, together, judged side by
    side with IREE's own and the kept candidates of round one."""
    compile_job, benchmark_job = jobs
    extra = {t.export: c for t in tunables if (c := _combination(t)) is not None}
    combining = [t for t in tunables if t.export in extra]
    pairs = [(t, extra[t.export]) for t in combining]
    compiled.update(_compile(pairs, flags, executor, compile_job, progress))
    for tunable in combining:
        tunable.finalists = [tunable.candidates[0], *tunable.kept_candidates, extra[tunable.export]]
    measured.update(
        _benchmark(combining, compiled, device, options, executor, benchmark_job, progress)
    )
    for tunable in combining:
        finalists = tunable.names(tunable.finalists)
        earlier = [r for r in tunable.result.candidates if r.name not in finalists]
        tunable.result.candidates = []
        _judge(tunable, tunable.finalists, compiled, measured, options, benchmarked=True)
        tunable.result.candidates += earlier  # none of them was kept in round one
        tunable.candidates.append(extra[tunable.export])


def _combination(tunable: _Tunable) -> Candidate | None:
    """The best candidate of round one joined with the best one that changes other tile
    lists, when both beat IREE's own."""
    default = tunable.result.default_ns
    by_name = {c.name: c for c in tunable.candidates}
    faster = sorted(
        (r for r in tunable.result.candidates if r.fate in (KEPT, SLOWER) and r.median_ns),
        key=lambda r: r.median_ns or 0.0,
    )
    faster = [r for r in faster if default and r.median_ns and r.median_ns < default]
    for second in faster[1:]:
        joined = combined(tunable.config, by_name[faster[0].name], by_name[second.name])
        if joined is not None and joined.name not in by_name:
            return joined
    return None


def _build(
    flow: str,
    filename: str,
    function_name: str,
    grouped: Sequence[_Tunable],
    options: TuneOptions,
    policy: str,
    decisions: list[dict],
) -> tuple[bytes, str]:
    """The tuned module: the flow phase with a group for each of `grouped`, lowered with
    the policy, compiled."""
    module = parse_module(flow, f"{filename} (flow phase)")
    sites: dict[str, list[DispatchOp]] = {}
    for dispatch in model_function(module, function_name).dispatches():
        sites.setdefault(_export_name(dispatch), []).append(dispatch)
    for tunable in grouped:
        _make_group(module, sites[tunable.export], tunable, policy, decisions)
    lower_module(module, policy, options.cache if options.freeze else None)
    lowered = print_module(module, locations=True)
    return compile_lowered(lowered, options.target, options.arch), lowered


def _judge(
    tunable: _Tunable,
    finalists: Sequence[Candidate],
    compiled: dict[tuple[str, str], Compiled],
    measured: dict[tuple[str, str], Measured],
    options: TuneOptions,
    benchmarked: bool,
) -> None:
    """Each candidate's fate: dropped (failed, wrong), kept (top-k faster than IREE's),
    or slower. Without benchmarks, the first k that built are kept."""
    results = tunable.result.candidates
    reference: Measured | None = None
    timed: list[tuple[float, CandidateResult]] = []
    for candidate in finalists:
        key = (tunable.export, candidate.name)
        build = compiled[key]
        if build.vmfb is None:
            results.append(CandidateResult(candidate.name, FAILED_TO_COMPILE, detail=build.error))
            continue
        run = measured.get(key)
        if not benchmarked:
            results.append(CandidateResult(candidate.name, SLOWER))
            continue
        if run is None or run.error is not None or not run.times_ns:
            results.append(
                CandidateResult(candidate.name, FAILED_TO_RUN, detail=run.error if run else None)
            )
            continue
        if candidate.is_default:
            reference = run
            results.append(CandidateResult(candidate.name, REFERENCE, run.median_ns))
            continue
        if reference is None or not agree(run.outputs, reference.outputs, options.tolerance):
            why = (
                "IREE's own configuration gave none to compare with" if reference is None else None
            )
            results.append(CandidateResult(candidate.name, WRONG, run.median_ns, why))
            continue
        results.append(CandidateResult(candidate.name, SLOWER, run.median_ns))
        timed.append((run.median_ns, results[-1]))
    if not benchmarked:
        for result in [r for r in results[1:] if r.fate == SLOWER][: options.top_k]:
            result.fate = KEPT
        return
    if reference is None:
        return
    faster = sorted(
        (t for t in timed if t[0] * options.faster_by < reference.median_ns),
        key=lambda t: t[0],
    )
    for _, result in faster[: options.top_k]:
        result.fate = KEPT


def _make_group(
    module: ModuleOp, sites: list[DispatchOp], tunable: _Tunable, policy: str, decisions
) -> None:
    """Make the dispatch's sites run a group of IREE's export and the kept candidates."""
    kept = {c.name: c.compilation_info for c in tunable.candidates if c.name in tunable.result.kept}
    params: dict[str, object] = {"policy": policy}
    first = sites[0]
    if policy == "static":
        best = tunable.result.best
        export = tunable.export
        executable = lookup_symbol(first, type(first.entry_point)(first.entry_point.root_reference))
        group_name = f"{symbol_name(executable)}::{export}__tuned"
        if not any(d["group"] == group_name for d in decisions):
            winner = best.name if best is not None and best.name in kept else None
            params["choice"] = export if winner is None else f"{export}__{winner}"
    elif policy in ("explicit", "init"):
        params["workloads"] = [tunable.workload]
    tile_variants(module, first, kept, **params)
    for site in sites[1:]:
        site.properties["entry_points"] = ArrayAttr(list(first.entry_points.data))
