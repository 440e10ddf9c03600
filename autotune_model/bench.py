"""Each dispatch alone: a module that runs it on inputs of its real shapes, and the two
jobs of tuning, compiling one candidate and benchmarking one candidate.

The bench module of a dispatch holds the model's device, the dispatch's executable and one
public function `@bench` taking the dispatch's tensor operands; its workload, index
operands and result sizes are the values the model's host code computes for the example
inputs (`sizes`). A candidate is that module with the candidate's `compilation_info` on the
kernel's root op. Jobs are plain data in, plain data out, so that any executor (a process
pool, a Ray cluster) can run them.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import ml_dtypes
import numpy as np
from iree.compiler import ir
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from autotune_bridge.bridge import resources_used
from autotune_bridge.generic_text import generic_text
from autotune_bridge.iree_configs import root_op
from autotune_dialect import interop, util
from autotune_dialect.flow import DispatchOp
from autotune_dialect.interop import op_name
from autotune_dialect.symbols import lookup_symbol
from autotune_model.candidates import Candidate
from autotune_model.flow_builds import TO_FLOW, kernels_as_given
from autotune_model.steadiness import (
    EARLY_CONFIDENCE,
    LOOK_EVERY,
    call_left_alone,
    median_interval,
)
from autotune_runtime.run_queue import thread_clocks
from lowering.driver import failure_summary, first_error, run_iree_compile

BENCH_FUNCTION = "bench"


@dataclass(frozen=True)
class Operand:
    """A tensor operand of a dispatch at its real size."""

    shape: tuple[int, ...]
    dtype: str  # numpy's name

    @property
    def text(self) -> str:
        """`16x256xf32`."""
        element = {v: k for k, v in _DTYPES.items() if v}.get(self.dtype) or self.dtype.replace(
            "int", "i"
        )
        return "x".join([*(str(s) for s in self.shape), element])

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * numpy_type(self.dtype).itemsize

    def array(self, seed: int) -> np.ndarray:
        """Deterministic input data: uniform in [-1, 1) (complex numbers: both parts;
        integers: 0..7)."""
        rng = np.random.default_rng(seed)
        dtype = numpy_type(self.dtype)
        if is_floating(dtype):
            return rng.uniform(-1.0, 1.0, self.shape).astype(dtype)
        if dtype.kind == "c":
            parts = rng.uniform(-1.0, 1.0, (2, *self.shape))
            return (parts[0] + 1j * parts[1]).astype(dtype)
        if dtype.kind == "b":
            return rng.integers(0, 2, self.shape).astype(dtype)
        return rng.integers(0, 8, self.shape).astype(dtype)


@dataclass(frozen=True)
class BenchModule:
    """A dispatch alone: the module text (`@bench` dispatches it once), its kernel
    function, its operands, and how many times a call runs the dispatch (`repeat`: IREE
    repeats it in the call's command buffer when built with `flags`)."""

    text: str
    kernel: str
    operands: tuple[Operand, ...]
    repeat: int

    @property
    def flags(self) -> tuple[str, ...]:
        """The iree-compile flags the module is built with."""
        return (f"--iree-hal-benchmark-dispatch-repeat-count={self.repeat}",)


_DTYPES = {
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "bf16": "bfloat16",
    "i1": "bool",
    "complex<f32>": "complex64",
    "complex<f64>": "complex128",
}


def numpy_type(name: str) -> np.dtype:
    """numpy's dtype of a name; `bfloat16` is ml_dtypes' (as IREE's runtime reads it)."""
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def is_floating(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def numpy_dtype(element) -> str | None:
    """The numpy name of an MLIR element type, None where there is none (i4...)."""
    text = interop.mlir_text(element)
    if text in _DTYPES:
        return _DTYPES[text]
    if isinstance(element, IntegerType):
        width = element.width.data
        return f"int{width}" if width in (8, 16, 32, 64) else None
    return None


# Dispatches per call of `@bench`, repeated in the call's one command buffer, so that its
# fixed cost (a submission and the host's wait: ~60 us on local-task, more than most of a
# model's dispatches take) is shared by all. (Copies of the dispatch in the text, kept
# apart by barriers, each waited on the host: 65-70 us a dispatch on local-task whatever
# its work, against 8-15 us for the same kernels repeated so.)
REPEAT = 16


def bench_module(
    model: ModuleOp, dispatch: DispatchOp, values: dict[SSAValue, int], repeat: int = REPEAT
) -> BenchModule | str:
    """The bench module of a dispatch, or why it cannot be made. `@bench` runs the
    dispatch `repeat` times on the same inputs, in one command buffer (`BenchModule.flags`).
    A dispatch that writes into an operand (tied) then works on its own results from the
    second time on, as a model's in-place dispatch does on another's."""
    found = _executable_and_kernel(dispatch)
    if isinstance(found, str):
        return found
    executable, kernel = found
    problem = _unknown_sizes(dispatch, values)
    if problem is not None:
        return problem
    operands = _tensor_operands(dispatch, values)
    if isinstance(operands, str):
        return operands
    devices = [
        op.clone()
        for op in model.body.ops
        if op_name(op) == "util.global"
        and "!hal.device" in interop.mlir_text(interop.attribute(op, "type"))
    ]
    module = ModuleOp([*devices, executable.clone(), _bench_function(dispatch, values)])
    module.attributes.update(model.attributes)
    text = generic_text(module)
    blobs = resources_used(getattr(model, "resources", ""), text)  # weights in its kernel
    return BenchModule(text + ("\n" + blobs if blobs else ""), kernel, tuple(operands), repeat)


def _executable_and_kernel(dispatch: DispatchOp) -> tuple[Operation, str] | str:
    """The executable a dispatch runs and the name of its kernel function, or why there
    is none."""
    entry = dispatch.entry_point
    executable = lookup_symbol(dispatch, type(entry)(entry.root_reference))
    export = lookup_symbol(dispatch, entry)
    if executable is None or export is None or not interop.is_export(export):
        return "its entry point is not an export of this module"
    kernel = interop.kernel_function_name(export)
    if kernel is None:
        return "its export names no kernel function"
    return executable, kernel


def _unknown_sizes(dispatch: DispatchOp, values: dict[SSAValue, int]) -> str | None:
    """Why a dispatch's operands cannot be made alone: data-tiled operands, or a workload,
    result size or scalar operand missing from `values`; None where they can."""
    types = [interop.mlir_text(v.type) for v in (*dispatch.arguments, *dispatch.outputs)]
    if any("#iree_encoding." in text for text in types):
        return (
            "its operands are data-tiled (tensors with an encoding), which a dispatch alone "
            "is not built with; left as the data-tiling build makes it"
        )
    needed = [*dispatch.workload, *dispatch.result_dims]
    needed += [a for a in dispatch.arguments if not isinstance(a.type, TensorType)]
    if any(v not in values for v in needed):
        return "its sizes depend on values the host code computes in ways not followed here"
    return None


def _tensor_operands(dispatch: DispatchOp, values: dict[SSAValue, int]) -> list[Operand] | str:
    """The dispatch's tensor operands at their sizes for the example inputs, or why one
    cannot be made."""
    operands: list[Operand] = []
    for arg, dims in zip(dispatch.arguments, dispatch.argument_dims_of(), strict=True):
        if not isinstance(arg.type, TensorType):
            continue
        if any(d not in values for d in dims):
            return "a tensor operand's dynamic size is not known for the example inputs"
        dtype = numpy_dtype(arg.type.get_element_type())
        if dtype is None:
            return f"its operand type {interop.mlir_text(arg.type)} has no numpy counterpart"
        sizes = iter(values[d] for d in dims)
        shape = tuple(next(sizes) if s < 0 else s for s in arg.type.get_shape())
        operands.append(Operand(shape, dtype))
    return operands


def _bench_function(dispatch: DispatchOp, values: dict[SSAValue, int]) -> util.FuncOp:
    """`@bench`: the dispatch called on the function's tensor arguments, its sizes and
    scalar operands the constants of `values`, returning its results."""
    tensors = [a for a in dispatch.arguments if isinstance(a.type, TensorType)]
    block = Block(arg_types=[a.type for a in tensors])

    def add(op: Operation) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    def constant(value: SSAValue) -> SSAValue:
        return add(arith.ConstantOp(IntegerAttr(values[value], value.type)))

    scalars = {a: constant(a) for a in dispatch.arguments if a not in tensors}
    workload = [constant(w) for w in dispatch.workload]
    result_dims = [constant(d) for d in dispatch.result_dims]
    argument_dims = [constant(d) for dims in dispatch.argument_dims_of() for d in dims]
    mapping: dict[SSAValue, SSAValue] = {**scalars, **dict(zip(tensors, block.args, strict=True))}
    call = DispatchOp(
        dispatch.entry_point,
        workload,
        [mapping[a] for a in dispatch.arguments],
        argument_dims,
        [r.type for r in dispatch.outputs],
        result_dims,
        dispatch.tied_operand_indices(),
    )
    block.add_op(call)
    results = list(call.results)
    block.add_op(util.ReturnOp(results))
    return util.FuncOp(
        BENCH_FUNCTION,
        ([a.type for a in tensors], [r.type for r in results]),
        Region(block),
        "public",
    )


def kernel_function(module: ir.Module, kernel: str) -> ir.Operation | None:
    """The `func.func @kernel` of an executable in `module` (IREE's IR), or None."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == kernel:
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found[0] if found else None


def _kernel_root(module: ir.Module, kernel: str) -> ir.Operation:
    function = kernel_function(module, kernel)
    if function is None:
        raise ValueError(f"the bench module has no kernel function @{kernel}")
    root = root_op(function)
    if root is None:
        raise ValueError(f"@{kernel} has no linalg op to give a compilation_info")
    return root


def at_flow_phase(bench: BenchModule, flags: Sequence[str]) -> BenchModule | str:
    """The bench module at IREE's flow phase with its kernel as given (`flow_builds`), or
    why it does not build; candidates are built from there."""
    code, flow, log = run_iree_compile(bench.text, [*flags, *TO_FLOW])
    if code != 0 or first_error(log) is not None:
        return f"its bench module does not build: {first_error(log) or failure_summary(log, code)}"
    text, renamed = kernels_as_given(flow.decode(), bench.text)
    if bench.kernel not in renamed:
        return "IREE changed its kernel's signature at the flow phase"
    return replace(bench, text=text, kernel=renamed[bench.kernel])


def root_loop_count(bench: BenchModule) -> int | None:
    """How many loops the root op of the dispatch's kernel has: its iterator types, or
    the dimensions of its indexing maps (IREE's `attention` has no iterator types); None
    for an op with neither."""
    from autotune_dialect.iree_ir import iree_context

    with iree_context():
        root = _kernel_root(ir.Module.parse(bench.text), bench.kernel)
        if "iterator_types" in root.attributes:
            return len(ir.ArrayAttr(root.attributes["iterator_types"]))
        if "indexing_maps" in root.attributes:
            maps = ir.ArrayAttr(root.attributes["indexing_maps"])
            return ir.AffineMapAttr(maps[0]).value.n_dims if len(maps) else None
        return None


def candidate_text(bench: BenchModule, candidate: Candidate) -> str:
    """The bench module with the candidate's `compilation_info` on the kernel's root op
    (none for IREE's own), as IREE prints it: without locations, so that every candidate,
    IREE's own too, is the same text whatever file the model was read from."""
    from autotune_dialect.iree_ir import iree_context

    with iree_context():
        module = ir.Module.parse(bench.text)
        if not candidate.is_default:
            root = _kernel_root(module, bench.kernel)
            root.attributes["compilation_info"] = ir.Attribute.parse(candidate.compilation_info)
        return str(module)


# --- jobs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompileJob:
    """Build one candidate of a dispatch: its bench module, with these flags (`text`: the
    candidate's module when already made, `candidate_text`)."""

    dispatch: str
    candidate: Candidate
    bench: BenchModule
    flags: tuple[str, ...]
    text: str | None = None


@dataclass
class Compiled:
    """A built candidate (`vmfb`), or why it did not build (`error`); `cached`: taken from
    the compile cache (`compile_cache`), not built by this run."""

    dispatch: str
    candidate: Candidate
    vmfb: bytes | None
    error: str | None
    seconds: float
    cached: bool = False


def compile_candidate(job: CompileJob) -> Compiled:
    """Build one candidate's bench module; a failure is an outcome, not an exception."""
    start = time.perf_counter()
    try:
        text = job.text if job.text is not None else candidate_text(job.bench, job.candidate)
        code, vmfb, log = run_iree_compile(text, list(job.flags))
        error = (
            None
            if code == 0 and first_error(log) is None
            else (first_error(log) or failure_summary(log, code))
        )
    except ValueError as err:
        vmfb, error = b"", str(err)
    seconds = time.perf_counter() - start
    return Compiled(job.dispatch, job.candidate, vmfb if error is None else None, error, seconds)


@dataclass(frozen=True)
class BenchmarkJob:
    """The built candidates of one dispatch, to be timed side by side on one device."""

    dispatch: str
    candidates: tuple[tuple[Candidate, bytes], ...]  # (candidate, its bench module's vmfb)
    operands: tuple[Operand, ...]
    device: str = "local-sync"
    warmup: int = 3
    repeats: int = 15  # rounds at least, and until `seconds` per candidate have passed
    seconds: float = 0.25
    dispatches: int = 1  # dispatches per call of `@bench`; a time is per dispatch
    resolve: float | None = None
    """The ratio to IREE's own configuration (the candidate `is_default`) that the
    decision reads (`1 / faster_by`): after `repeats` rounds the timing ends early once
    every candidate's 99% interval of its ratios to IREE's own, round by round, lies
    wholly below or above it (its fate is settled); None: `seconds` always."""


@dataclass
class Measured:
    """A benchmarked candidate: its times per dispatch, its outputs, or its error."""

    dispatch: str
    candidate: Candidate
    times_ns: list[int] = field(default_factory=list)
    outputs: list[np.ndarray] = field(default_factory=list)
    error: str | None = None
    held_up: int = 0
    """Calls made again: another process held a core they waited for
    (`steadiness.call_left_alone`)."""

    @property
    def median_ns(self) -> float:
        return statistics.median(self.times_ns) if self.times_ns else float("inf")


def _error_text(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def benchmark_dispatch(job: BenchmarkJob) -> list[Measured]:
    """Time a dispatch's candidates in rounds, one call of each per round (the order
    turning each round), so that the machine's drift weighs on all alike; and keep each
    one's outputs on the deterministic inputs. A candidate that fails to load or run is an
    outcome with an error and no time; the others go on."""
    import iree.runtime as rt

    from autotune_runtime.devices import open_device

    # The device a loaded module runs on (IREE's caching allocator in front): a call's
    # results reuse the previous call's buffers, so that no candidate's time holds a
    # fresh allocation and its page faults, which would weigh on all alike and shrink
    # their ratios.
    config = rt.Config(device=open_device(job.device))
    host_inputs = [operand.array(seed) for seed, operand in enumerate(job.operands)]

    def device_inputs() -> list:
        """The inputs on the device, afresh: a dispatch that writes into an operand (a
        `readwrite` accumulator) changes those it is called with."""
        return [rt.asdevicearray(config.device, array) for array in host_inputs]

    # On the device once for timing: a call then times the dispatches, not the copies of
    # its inputs (what a tied operand holds by then changes no time).
    inputs = device_inputs()
    results = [Measured(job.dispatch, candidate) for candidate, _ in job.candidates]
    functions: dict[int, object] = {}
    contexts = []
    for index, (_, vmfb) in enumerate(job.candidates):
        try:
            module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
            context = rt.SystemContext(vm_modules=[module], config=config)
            function = context.modules[module.name][BENCH_FUNCTION]
            results[index].outputs = host_outputs(function(*device_inputs()), config.device)
            for _ in range(job.warmup):
                function(*inputs)
            functions[index] = function
            contexts.append(context)
        except (RuntimeError, ValueError) as err:
            results[index].error = _error_text(err)
    started = time.perf_counter()
    budget = job.seconds * max(1, len(functions))
    rounds = 0
    threads = thread_clocks()
    while functions and (rounds < job.repeats or time.perf_counter() - started < budget):
        order = list(functions)
        shift = rounds % len(order)
        for index in order[shift:] + order[:shift]:
            try:
                elapsed, held_up = call_left_alone(
                    functools.partial(functions[index], *inputs), threads.read
                )
            except (RuntimeError, ValueError) as err:
                results[index].error, results[index].times_ns = _error_text(err), []
                del functions[index]
                continue
            results[index].times_ns.append(elapsed // job.dispatches)
            results[index].held_up += held_up
        rounds += 1
        if rounds >= job.repeats * 100 or _settled(job, results, rounds):
            break
    functions.clear()
    del contexts
    return results


def paired_ratios(run: Measured, reference: Measured) -> list[float]:
    """A candidate's times over IREE's own, round by round (a round times each once)."""
    return [c / r for c, r in zip(run.times_ns, reference.times_ns, strict=False) if r > 0]


def _settled(job: BenchmarkJob, results: Sequence[Measured], rounds: int) -> bool:
    """Whether, after `rounds` rounds (at least `job.repeats`), every candidate timed so
    far has its interval of ratios to IREE's own, round by round (`EARLY_CONFIDENCE`),
    wholly on one side of `job.resolve`: more rounds would not change what is kept."""
    if job.resolve is None or rounds < job.repeats or rounds % LOOK_EVERY:
        return False
    reference = next(
        (r for r, (c, _) in zip(results, job.candidates, strict=True) if c.is_default), None
    )
    if reference is None or not reference.times_ns:
        return False
    for result in results:
        if result is reference or not result.times_ns:
            continue
        low, high = median_interval(paired_ratios(result, reference), EARLY_CONFIDENCE)
        if low <= job.resolve <= high:
            return False
    return True


def host_outputs(values, device) -> list[np.ndarray]:
    """A call's results on `device` (an IREE `HalDevice`) as numpy arrays that own their
    data, read back as the device allows (`devices.read_back`: a Vulkan buffer through a
    staging buffer)."""
    import iree.runtime as rt

    from autotune_runtime.devices import read_back

    values = values if isinstance(values, tuple | list) else (values,)
    return [
        read_back(device, v) if isinstance(v, rt.DeviceArray) else np.asarray(v) for v in values
    ]


def type_tolerance(dtype: np.dtype, tolerance: float) -> float:
    """`tolerance`, or more for a narrow float type: 8 of its rounding steps (f16 0.008,
    bf16 0.06), what another order of summing its values may change."""
    if not is_floating(dtype):
        return tolerance
    return max(tolerance, 8 * float(ml_dtypes.finfo(dtype).eps))


def agree(got: Sequence[np.ndarray], expected: Sequence[np.ndarray], tolerance: float) -> bool:
    """Whether a candidate's outputs match the default's: same shapes, and every element
    within `tolerance` (scaled to a narrow float type) times the default's largest
    magnitude (at least 1), compared in float64 (complex128: a complex difference's
    magnitude)."""
    if len(got) != len(expected):
        return False
    for a, b in zip(got, expected, strict=True):
        if a.shape != b.shape:
            return False
        if b.size == 0:
            continue
        wide = np.complex128 if b.dtype.kind == "c" else np.float64
        scale = max(1.0, float(np.max(np.abs(b.astype(wide)))))
        diff = np.abs(a.astype(wide) - b.astype(wide))
        allowed = type_tolerance(b.dtype, tolerance) * scale
        if not (np.all(np.isfinite(diff)) and float(np.max(diff)) <= allowed):
            return False
    return True
