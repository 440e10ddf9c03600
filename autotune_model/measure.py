"""A model's example inputs, and its end-to-end time: the tuned module against the stock
build of the same model, called in turn on the same inputs in one run (machines are
noisy; a ratio measured side by side is what holds)."""

from __future__ import annotations

import contextlib
import functools
import re
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import Policy
from autotune_dialect import interop
from autotune_dialect.diagnostics import op_location
from autotune_dialect.flow import DispatchOp
from autotune_dialect.interop import op_name, symbol_name
from autotune_model.bench import Operand, agree, host_outputs, numpy_dtype
from autotune_model.report import ModelTiming
from autotune_model.steadiness import Comparison, time_rounds

ASYNC_ABI = '"coarse-fences"'
"""The `iree.abi.model` of IREE's asynchronous ABI functions: for a torch program
(`iree-import-onnx`, iree-turbine) the flow phase has `@f$async(views..., wait, signal)`,
which holds the dispatches, and the synchronous `@f(views...)` that calls it."""


@dataclass(frozen=True)
class ModelFunction:
    """The function a user calls (`entry`) and the one that runs its dispatches (`body`):
    the same function, or IREE's asynchronous twin that `entry` calls."""

    entry: Operation
    body: Operation

    @property
    def name(self) -> str:
        return symbol_name(self.entry) or "main"

    @property
    def arguments(self) -> list[SSAValue]:
        """The body's arguments that stand for the entry's (the fences left out)."""
        count = len(self.entry.regions[0].blocks[0].args)
        return list(self.body.regions[0].blocks[0].args)[:count]

    def dispatches(self) -> list[Operation]:
        return [op for op in self.body.walk() if isinstance(op, DispatchOp)]

    def error(self, message: str, source: str | None) -> DiagnosticError:
        """An error about the function, at its signature line in the model's `source`."""
        return DiagnosticError(message, op_location(self.entry), source)


def _is_public(op: Operation) -> bool:
    visibility = interop.attribute(op, "sym_visibility") or StringAttr("public")
    return interop.mlir_text(visibility) == '"public"'


def _is_async_abi(op: Operation) -> bool:
    model = interop.attribute(op, "iree.abi.model")
    return model is not None and interop.mlir_text(model) == ASYNC_ABI


def _defined_functions(module: ModuleOp) -> dict[str, Operation]:
    return {
        name: op
        for op in module.body.ops
        if op_name(op) in interop.FUNCTIONS
        and op.regions
        and op.regions[0].blocks
        and (name := symbol_name(op)) is not None
    }


def _async_body(function: Operation, functions: dict[str, Operation]) -> Operation | None:
    """The asynchronous ABI function that `function` calls, if it is such a stub."""
    for op in function.walk():
        if op_name(op) == "util.call":
            callee = functions.get(interop.mlir_text(interop.attribute(op, "callee"))[1:])
            if callee is not None and _is_async_abi(callee):
                return callee
    return None


def public_functions(module: ModuleOp) -> list[ModelFunction]:
    """The model's entry points at the flow phase: its public functions, each with the
    function that runs its dispatches; IREE's asynchronous twins of them are no entry
    points of their own."""
    functions = _defined_functions(module)
    found = [
        ModelFunction(op, _async_body(op, functions) or op)
        for op in functions.values()
        if _is_public(op)
    ]
    bodies = {id(f.body) for f in found if f.body is not f.entry}
    return [f for f in found if id(f.entry) not in bodies]


def model_function(
    module: ModuleOp, name: str | None, source: str | None = None, filename: str = "<model>"
) -> ModelFunction:
    """The public function `name`, or the only one; a clear error otherwise, at the
    signature of the function it is about in the model's `source` (`filename`)."""
    functions = public_functions(module)
    if not functions:
        empty = source is not None and not source.strip()
        raise DiagnosticError(
            f"{filename}: the model has no public function to tune"
            + (" (the file is empty)" if empty else "")
        )
    names = [f.name for f in functions]
    if name is not None:
        for function in functions:
            if function.name == name:
                return function
        twin = next((f for f in functions if symbol_name(f.body) == name), None)
        if twin is not None:
            raise twin.error(
                f"@{name} is IREE's asynchronous form of @{twin.name} (it takes fences); "
                f"tune @{twin.name}",
                source,
            )
        raise functions[0].error(
            f"the model has no public function @{name} (it has "
            + ", ".join(f"@{n}" for n in names)
            + ")",
            source,
        )
    if len(functions) != 1:
        raise functions[1].error(
            f"the model has {len(functions)} public functions ("
            + ", ".join(f"@{n}" for n in names)
            + "); name the one to tune with --function",
            source,
        )
    return functions[0]


InputShape = tuple[int, ...] | str
"""An example input: its dimensions, or text such as `40x256xf32` (`40x256`), whose
element type, when given, must be the argument's."""


def parse_shape(text: str) -> tuple[tuple[int, ...], str | None]:
    """`40x256xf32` -> ((40, 256), "f32"); `40x256` -> ((40, 256), None)."""
    parts = [p for p in text.strip().split("x") if p]
    element = None
    if parts and not parts[-1].isdigit():
        element = parts.pop()
    if not all(p.isdigit() for p in parts) or (element is not None and not element.isalnum()):
        raise DiagnosticError(f"input shape '{text}' is not like 40x256xf32")
    return tuple(int(p) for p in parts), element


def function_inputs(
    function: ModelFunction, shapes: Sequence[InputShape] | None, source: str | None = None
) -> list[Operand]:
    """The model function's arguments at their example shapes: static sizes from its
    signature, dynamic ones from `shapes` (one per argument, required when any is dynamic).
    The argument types are the tensors IREE imports the arguments as. An error is at the
    function's signature in the model's `source`."""
    args = function.arguments
    imported: dict[object, TensorType] = {}
    for op in function.body.walk():
        if op_name(op) == "hal.tensor.import" and isinstance(op.results[0].type, TensorType):
            imported.setdefault(op.operands[0], op.results[0].type)
    name = function.name
    if shapes is not None and len(shapes) != len(args):
        raise function.error(
            f"@{name} takes {len(args)} arguments; {len(shapes)} input "
            + ("shape was" if len(shapes) == 1 else "shapes were")
            + " given",
            source,
        )
    operands = []
    for index, arg in enumerate(args):
        type_ = imported.get(arg)
        if type_ is None:
            raise function.error(_not_imported(function, index), source)
        declared = list(type_.get_shape())
        element = interop.mlir_text(type_.get_element_type())
        dtype = numpy_dtype(type_.get_element_type())
        if dtype is None:
            raise function.error(
                f"argument {index} of @{name} has element type {element}, which tune-model "
                "cannot make inputs of",
                source,
            )
        if shapes is None:
            if any(d < 0 for d in declared):
                raise function.error(
                    f"argument {index} of @{name} is {interop.mlir_text(type_)}: give the example "
                    "shape of every argument (--input 40x256xf32, one per argument)",
                    source,
                )
            shape = tuple(declared)
        else:
            given = shapes[index]
            shape, given_element = parse_shape(given) if isinstance(given, str) else (given, None)
            shape = tuple(shape)
            text = "x".join([*map(str, shape), *([given_element] if given_element else [])])
            if (
                len(shape) != len(declared)
                or any(d >= 0 and d != s for d, s in zip(declared, shape, strict=False))
                or given_element not in (None, element)
            ):
                raise function.error(
                    f"input shape {text or 'scalar'} does not fit argument {index} of @{name} "
                    f"({interop.mlir_text(type_)})",
                    source,
                )
        operands.append(Operand(shape, dtype))
    return operands


def _not_imported(function: ModelFunction, index: int) -> str:
    """Why argument `index` of a model function reaches no tensor at the flow phase: the
    function returns nothing (IREE dropped its body), the argument has a zero-size
    dimension (nothing is computed with it), or it is no tensor."""
    declared = interop.attribute(function.entry, "iree.reflection")
    text = interop.mlir_text(declared) if declared is not None else ""
    match = re.search(r"@[\w.$-]+\((.*?)\)\s*->\s*\((.*?)\)", text)
    name = function.name
    if match is not None and not match.group(2).strip():
        return f"@{name} returns no value: there is nothing to compare or time"
    types = re.findall(r"%input\d+: (tensor<[^>]*>)", match.group(1)) if match else []
    if index < len(types) and re.search(r"[<x]0x", types[index]):
        return (
            f"argument {index} of @{name} has a zero-size dimension ({types[index]}): "
            "there is nothing to time"
        )
    return f"argument {index} of @{name} is not a tensor; it cannot be tuned"


def check_model(
    stock_vmfb: bytes | None,
    tuned_vmfb: bytes,
    function: str,
    inputs: Sequence[Operand],
    policy: str,
    device: str,
    tolerance: float,
    calls: int = 40,
) -> str | None:
    """The tuned module's last check before it is written: called on the example inputs
    as its users will call it, it must run and give the stock build's results (where
    `stock_vmfb` is None, run only). `online`: every call until its groups have decided (at
    most `calls`), the exploring ones and the committed one; `explicit`: before and after
    its `__autotune`. Returns what went wrong, or None."""
    from autotune_runtime.session import load

    host_args = [operand.array(seed) for seed, operand in enumerate(inputs)]
    expected = (
        None if stock_vmfb is None else _stock_outputs(stock_vmfb, function, host_args, device)
    )
    try:
        with load(tuned_vmfb, device=device, cache=False) as tuned:
            run = tuned.function(function)
            done = 0
            while True:
                got = host_outputs(run(*host_args), tuned.config.device)
                done += 1
                if expected is not None and not agree(got, expected, tolerance):
                    return f"call {done} gave other results than the stock build"
                if _has_autotune(tuned, policy) and done == 1:
                    tuned.tune()
                    continue
                if policy != Policy.ONLINE or done >= calls or tuned.settled():
                    return None
    except (RuntimeError, ValueError, TypeError) as err:
        return f"it failed to run: {str(err).strip().splitlines()[0]}"


def _has_autotune(module, policy: str) -> bool:
    """Whether a loaded module is tuned by its `__autotune` (an `explicit` module with
    groups: one without has no such entry point)."""
    return policy == Policy.EXPLICIT and module.tune_function is not None


def _stock_outputs(
    stock_vmfb: bytes, function: str, host_args: Sequence[np.ndarray], device: str
) -> list[np.ndarray]:
    """The stock build's results of one call."""
    import iree.runtime as rt

    config = rt.Config(device)
    stock_module = rt.VmModule.copy_buffer(config.vm_instance, stock_vmfb)
    stock_context = rt.SystemContext(vm_modules=[stock_module], config=config)
    outputs = stock_context.modules[stock_module.name][function](*host_args)
    return host_outputs(outputs, config.device)


@dataclass
class SideBySide:
    """The stock build and a tuned module loaded on one device (one thread pool), the tuned
    one settled: both functions are raw (no conversion, results left on the device), so
    that their times hold only what the modules do."""

    tuned: Any
    """The tuned module's session (`autotune_runtime.session.load`)."""
    run_stock: Any
    run_tuned: Any
    settle_calls: int | None
    """The calls an `online` module took to settle (None for other policies)."""
    settled: bool


def _settle(tuned, function: str, host_args: Sequence[np.ndarray], policy: str, limit: int):
    """Settle a loaded tuned module: `online` is called until its groups have decided (at
    most `limit` calls), `explicit` runs its `__autotune` entry point. Returns the calls
    taken (None but for `online`) and whether it settled."""
    if _has_autotune(tuned, policy):
        tuned.tune()
    if policy != Policy.ONLINE:
        return None, True
    calls = 0
    while calls < limit and not tuned.settled():
        tuned.function(function)(*host_args)
        calls += 1
    return calls, tuned.settled()


@contextlib.contextmanager
def side_by_side(
    stock_vmfb: bytes,
    tuned_vmfb: bytes,
    function: str,
    host_args: Sequence[np.ndarray],
    policy: str,
    device: str,
    warmup_calls: int = 400,
) -> Iterator[SideBySide]:
    """Both builds of a model loaded on the tuned module's device, the tuned one settled
    (`_settle`) on `host_args`, no tuning cache read or written."""
    import iree.runtime as rt

    from autotune_runtime.session import load

    with load(tuned_vmfb, device=device, cache=False) as tuned:
        stock_module = rt.VmModule.copy_buffer(tuned.config.vm_instance, stock_vmfb)
        stock_context = rt.SystemContext(vm_modules=[stock_module], config=tuned.config)
        pair = SideBySide(
            tuned,
            stock_context.modules[stock_module.name][function],
            tuned.context.modules[tuned.module.name][function],
            *_settle(tuned, function, host_args, policy, warmup_calls),
        )
        try:
            yield pair
        finally:
            # The functions go before the module they belong to is unloaded.
            pair.run_stock = pair.run_tuned = None
            del stock_context, stock_module


def time_model(
    stock_vmfb: bytes,
    tuned_vmfb: bytes,
    function: str,
    inputs: Sequence[Operand],
    policy: str,
    device: str,
    budget_s: float = 3.0,
    min_calls: int = 10,
    warmup_calls: int = 400,
    resolve: float | None = None,
) -> ModelTiming:
    """Time of one call, stock and tuned, side by side (`steadiness.time_rounds`: the
    order alternating each round, the median of the rounds' ratios and its interval; the
    timing goes on, up to three times `budget_s`, while the interval holds `resolve`, where
    given, and ends from a third of `budget_s` once clear of it: the guard's timing gives
    1). The tuned module first settles (`side_by_side`; the calls it took and whether it
    settled are in the result)."""
    import iree.runtime as rt

    host_args = [operand.array(seed) for seed, operand in enumerate(inputs)]
    with side_by_side(
        stock_vmfb, tuned_vmfb, function, host_args, policy, device, warmup_calls
    ) as pair:
        # Inputs on the device once (as a served model keeps its weights): the calls time
        # the modules, not copies of their inputs.
        args = [rt.asdevicearray(pair.tuned.config.device, a) for a in host_args]
        pair.run_stock(*args)
        pair.run_tuned(*args)
        rounds = time_rounds(
            functools.partial(pair.run_stock, *args),
            functools.partial(pair.run_tuned, *args),
            budget_s,
            min_calls,
            resolve,
        )
        settle_calls, settled = pair.settle_calls, pair.settled
        del args
    low, high = rounds.interval
    return ModelTiming(
        function,
        statistics.median(rounds.reference_ns),
        statistics.median(rounds.other_ns),
        len(rounds.ratios),
        settle_calls,
        settled,
        paired=statistics.median(rounds.ratios),
        interval=[low, high],
        held_up=rounds.disturbed_share,
        spread=rounds.spread,
        runnable=rounds.runnable,
        rounds=rounds.ratios,
    )


def time_model_loads(
    stock_vmfb: bytes,
    tuned_vmfb: bytes,
    function: str,
    inputs: Sequence[Operand],
    policy: str,
    device: str,
    loads: int,
    budget_s: float,
) -> tuple[ModelTiming, list[ModelTiming]]:
    """`time_model` in `loads` fresh loads of both modules, `budget_s` in all: the timing
    of the load with the median ratio, and every load's timing. (On a loaded machine one
    load of a module has measured 1.01 and another 1.35 of the same stock build within a
    minute: what differs between loads does not average out within one.)"""
    timings = [
        time_model(
            stock_vmfb, tuned_vmfb, function, inputs, policy, device, budget_s=budget_s / loads
        )
        for _ in range(loads)
    ]
    return sorted(timings, key=lambda t: t.ratio)[len(timings) // 2], timings


def compared(timings: Sequence[ModelTiming]) -> Comparison:
    """Timings of the same two builds in fresh loads as one comparison: each load's
    ratio, and the interval of the median over every load's rounds."""
    return Comparison.of_rounds([t.ratio for t in timings], [r for t in timings for r in t.rounds])
