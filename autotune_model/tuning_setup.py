"""What a tuning run starts from: the device it times on and the thread count code
generation is told, the model at the flow phase, and the dispatches worth tuning
(`find_tunables`: each with its candidates and its benchmark module, or the reason it is
left as IREE builds it); and a pass's state (`TuningRun`), which `start` begins."""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from autotune_bridge import parse_module
from autotune_bridge.iree_configs import ROOT_OP_WORDS, loop_count
from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import Policy
from autotune_dialect.iree_ir import renamed_locations
from autotune_model.base_builds import AUTO, IREE_THREADS, device_threads, timed_ratio
from autotune_model.bench import at_flow_phase, bench_module, compile_candidate, root_loop_count
from autotune_model.candidates import candidates
from autotune_model.compile_cache import CompileCache
from autotune_model.executors import Executor
from autotune_model.input_checks import check_example_inputs
from autotune_model.measure import ModelFunction, function_inputs, model_function
from autotune_model.progress import Progress
from autotune_model.report import TuneReport
from autotune_model.search import CandidateBuilds
from autotune_model.sizes import times_run
from autotune_model.steadiness import Comparison
from autotune_model.tunable import Tunable, TuneOptions
from autotune_model.tuned_module import export_name
from lowering.decisions import load_decisions
from lowering.dispatch_configs import DispatchConfig
from lowering.driver import (
    CUDA_EXTERNAL_ONLY,
    DEFAULT_CUDA_ARCH,
    check_target,
    failure_summary,
    model_error,
    run_iree_compile,
    target_flags,
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


def model_builds_timer(
    model: str, stock_flow: str, options: TuneOptions, filename: str, device: str
) -> Callable[..., Comparison]:
    """`base_builds.timed_ratio` for the model's function on its example inputs."""
    probed = parse_module(stock_flow, f"{filename} (flow phase)")
    probe = model_function(probed, options.function, model, filename)
    inputs = function_inputs(probe, options.input_shapes, model)
    return timed_ratio(probe.name, inputs, device)


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


def find_tunables(
    module: ModuleOp,
    function: ModelFunction,
    configs: dict[str, DispatchConfig],
    values: dict,
    runs: dict[Operation, list[list[int]]],
    options: TuneOptions,
    report: TuneReport,
) -> list[Tunable]:
    """The dispatches of `function` worth tuning, each with its candidates and its
    benchmark module; every other dispatch goes to `report.skipped` with the reason.
    `values`: the host code's (`sizes.host_values`); `runs`: the workloads each dispatch
    runs at (`sizes.workloads_run`)."""
    found: dict[str, Tunable] = {}
    per_call: Counter[str] = Counter()
    workloads: dict[str, list[list[int]]] = {}
    for dispatch in function.dispatches():
        per_call[export_name(dispatch)] += times_run(dispatch, values)
        run_at = workloads.setdefault(export_name(dispatch), [])
        run_at += [w for w in runs.get(dispatch, []) if w not in run_at]
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
        found[export] = Tunable(
            export, group, config, bench, workload, generated, workloads[export]
        )
        found[export].result.per_call = per_call[export]
    return list(found.values())


@dataclass
class TuningRun:
    """The state every phase of a pass reads: the model, the options, where it is timed,
    the flow phases built so far (by their extra flags), and the report it fills."""

    model: str
    options: TuneOptions
    filename: str
    progress: Progress
    benchmark_job: Callable
    report: TuneReport
    policy: str
    device: str
    threads: int | None  # the thread count code generation may be told (None: IREE's)
    measure_threads: bool  # whether that count is timed first
    builds: CandidateBuilds
    decisions: list
    benchmarked: bool = False
    flows: dict[tuple[str, ...], str] = field(default_factory=dict)
    clock: float = field(default_factory=time.perf_counter)

    def lap(self, phase: str) -> None:
        """Add the time since the last lap to `phase` in the report."""
        now = time.perf_counter()
        self.report.seconds[phase] = self.report.seconds.get(phase, 0.0) + now - self.clock
        self.clock = now

    def flow_of(self, flags: Sequence[str]) -> str:
        """The model at the flow phase built with `flags` (made once)."""
        if tuple(flags) not in self.flows:
            options = self.options
            self.flows[tuple(flags)] = flow_phase(
                self.model, options.target, options.arch, self.filename, flags
            )
        return self.flows[tuple(flags)]

    @functools.cached_property
    def timed_builds(self) -> Callable[..., Comparison]:
        """Two builds of the model timed against each other (made once)."""
        return model_builds_timer(
            self.model, self.flows[()], self.options, self.filename, self.device
        )


def start(
    model: str,
    options: TuneOptions,
    filename: str,
    executor: Executor,
    progress: Progress,
    jobs: tuple[Callable, Callable],
    earlier: TuneReport | None,
) -> TuningRun:
    """A pass's state, its report begun (from `earlier`'s times, jobs and notes where a
    first pass came before), the tuning cache read and the model at the flow phase: a
    missing cache, a target without code generation or wrong input shapes fail here,
    before any work."""
    compile_job, benchmark_job = jobs
    clock = time.perf_counter()
    device = tuning_device(options)
    threads, measure_threads = planned_threads(options, device)
    policy = Policy.STATIC if options.freeze else options.policy
    report = TuneReport(filename, options.target, options.arch, policy, executor.name)
    report.device = device
    if earlier is not None:
        report.seconds, report.jobs, report.notes = earlier.seconds, earlier.jobs, earlier.notes
        report.base = replace(
            report.base, ratios=earlier.base.ratios, tuned_over_stock=earlier.base.tuned_over_stock
        )
    builds = CandidateBuilds(
        compile_job,
        executor,
        progress,
        report.jobs,
        CompileCache(options.compile_cache_folder)
        if options.compile_cache and compile_job is compile_candidate
        else None,
    )
    report.cache = options.cache if options.freeze else None
    run = TuningRun(
        model, options, filename, progress, benchmark_job, report, policy, device, threads,
        measure_threads, builds, load_decisions(report.cache), clock=clock,
    )  # fmt: skip
    check_generated_code(options.target, options.arch)
    run.benchmarked = device_available(device)
    progress.status("compiling the model to the flow phase")
    run.flow_of(())
    # before anything is built or timed on them: every size the run tunes at
    for shapes in [s for s in (options.input_shapes, *options.also_at) if s is not None]:
        progress.status("checking the input shapes")
        check_example_inputs(run.flows[()], options.function, shapes, model, filename)
    return run
