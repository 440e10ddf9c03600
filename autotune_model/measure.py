"""A model's example inputs, and its end-to-end time: the tuned module against the stock
build of the same model, called in turn on the same inputs in one run (machines are
noisy; a ratio measured side by side is what holds)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation

from autotune_dialect import interop
from autotune_dialect.diagnostics import DiagnosticError
from autotune_dialect.interop import op_name, symbol_name
from autotune_model.bench import Operand, numpy_dtype
from autotune_model.report import ModelTiming


def public_functions(module: ModuleOp) -> list[Operation]:
    """The public functions of a flow-phase module (the model's entry points)."""
    return [
        op
        for op in module.body.ops
        if op_name(op) in ("util.func", "func.func")
        and interop.mlir_text(interop.attribute(op, "sym_visibility") or StringAttr("public"))
        == '"public"'
        and op.regions
        and op.regions[0].blocks
    ]


def model_function(module: ModuleOp, name: str | None) -> Operation:
    """The public function `name`, or the only one; a clear error otherwise."""
    functions = public_functions(module)
    names = [symbol_name(f) for f in functions]
    if name is not None:
        for function in functions:
            if symbol_name(function) == name:
                return function
        raise DiagnosticError(
            f"the model has no public function @{name} (it has "
            + ", ".join(f"@{n}" for n in names)
            + ")"
        )
    if len(functions) != 1:
        raise DiagnosticError(
            "the model has "
            + (
                f"{len(functions)} public functions (" + ", ".join(f"@{n}" for n in names) + ")"
                if functions
                else "no public function"
            )
            + "; name the one to tune with --function"
        )
    return functions[0]


def parse_shape(text: str) -> tuple[int, ...]:
    """`40x256xf32` or `40x256` -> (40, 256); the element type, if given, is ignored here
    (the model's signature has it)."""
    parts = [p for p in text.strip().split("x") if p]
    if parts and not parts[-1].isdigit():
        parts = parts[:-1]
    if not all(p.isdigit() for p in parts):
        raise DiagnosticError(f"input shape '{text}' is not like 40x256xf32")
    return tuple(int(p) for p in parts)


def function_inputs(function: Operation, shapes: Sequence[Sequence[int]] | None) -> list[Operand]:
    """The model function's arguments at their example shapes: static sizes from its
    signature, dynamic ones from `shapes` (one per argument, required when any is dynamic)."""
    args = list(function.regions[0].blocks[0].args)
    imported: dict[object, TensorType] = {}
    for op in function.walk():
        if op_name(op) == "hal.tensor.import" and isinstance(op.results[0].type, TensorType):
            imported.setdefault(op.operands[0], op.results[0].type)
    name = symbol_name(function)
    if shapes is not None and len(shapes) != len(args):
        raise DiagnosticError(
            f"@{name} takes {len(args)} arguments; {len(shapes)} input shapes were given"
        )
    operands = []
    for index, arg in enumerate(args):
        type_ = imported.get(arg)
        if type_ is None:
            raise DiagnosticError(
                f"argument {index} of @{name} is not a tensor; it cannot be tuned"
            )
        declared = list(type_.get_shape())
        dtype = numpy_dtype(type_.get_element_type())
        if dtype is None:
            raise DiagnosticError(
                f"argument {index} of @{name} has element type "
                f"{interop.mlir_text(type_.get_element_type())}, which has no numpy counterpart"
            )
        if shapes is None:
            if any(d < 0 for d in declared):
                raise DiagnosticError(
                    f"argument {index} of @{name} is {interop.mlir_text(type_)}: give the example "
                    "shape of every argument (--input 40x256xf32, one per argument)"
                )
            shape = tuple(declared)
        else:
            shape = tuple(shapes[index])
            if len(shape) != len(declared) or any(
                d >= 0 and d != s for d, s in zip(declared, shape, strict=False)
            ):
                raise DiagnosticError(
                    f"input shape {'x'.join(map(str, shape)) or 'scalar'} does not fit argument "
                    f"{index} of @{name} ({interop.mlir_text(type_)})"
                )
        operands.append(Operand(shape, dtype))
    return operands


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
) -> ModelTiming:
    """Median time of one call, stock and tuned, interleaved (the order alternating each
    round). The tuned module first settles: `online` runs until its groups have decided
    (at most `warmup_calls`; the calls it took and whether it settled are in the result),
    `explicit` runs its `__autotune` entry point."""
    import iree.runtime as rt

    from autotune_runtime.session import load

    host_args = [operand.array(seed) for seed, operand in enumerate(inputs)]
    with load(tuned_vmfb, device=device, cache=False) as tuned:
        # Inputs on the device once (as a served model keeps its weights): the calls time
        # the modules, not copies of their inputs.
        args = [rt.asdevicearray(tuned.config.device, a) for a in host_args]
        # The stock module runs on the tuned one's device: one device, one thread pool.
        stock_module = rt.VmModule.copy_buffer(tuned.config.vm_instance, stock_vmfb)
        stock_context = rt.SystemContext(vm_modules=[stock_module], config=tuned.config)
        # Both called the same way (raw functions: no conversion, results left on the
        # device), so that the ratio holds only what the modules do.
        run_stock = stock_context.modules[stock_module.name][function]
        run_tuned = tuned.context.modules[tuned.module.name][function]
        if policy == "explicit":
            tuned.tune()
        calls = 0
        while policy == "online" and calls < warmup_calls and not _settled(tuned):
            tuned.function(function)(*host_args)
            calls += 1
        settle_calls = calls if policy == "online" else None
        settled = _settled(tuned) if policy == "online" else True
        run_stock(*args)
        run_tuned(*args)
        times: dict[str, list[int]] = {"stock": [], "tuned": []}
        start = time.perf_counter()
        rounds = 0
        while rounds < min_calls or time.perf_counter() - start < budget_s:
            order = [("stock", run_stock), ("tuned", run_tuned)]
            for label, run in order if rounds % 2 == 0 else order[::-1]:
                begin = time.perf_counter_ns()
                run(*args)
                times[label].append(time.perf_counter_ns() - begin)
            rounds += 1
        del run_stock, run_tuned, stock_context, stock_module
    return ModelTiming(
        function,
        statistics.median(times["stock"]),
        statistics.median(times["tuned"]),
        rounds,
        settle_calls,
        settled,
    )


def _settled(module) -> bool:
    """Whether every group of a loaded module has decided for the sizes it has seen."""
    states = module.stats()
    return len(states) >= len(module.groups) and all(s["decision"] for s in states)
