"""Example input shapes that disagree with each other where the model's ops meet them.

`--input` gives each argument's shape; static sizes are checked against the signature
(`measure.function_inputs`), but dynamic ones may still disagree where an op takes two of
them (a matmul's K of 64 on one side and 32 on the other): IREE does not check them at run
time, and the dispatches would read out of bounds. So each dispatch's kernel is specialized
to the sizes the example inputs give it (its index operands as constants) and IREE's
canonicalizer, which infers the static shapes and verifies the ops with them, is asked
whether they agree (`'linalg.matmul' op inferred input/output operand #1 has shape's
dimension #0 to be 64, but found 32`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from autotune_bridge.generic_text import generic_text
from autotune_contracts.errors import DiagnosticError
from autotune_dialect import interop
from autotune_dialect.flow import DispatchOp
from autotune_dialect.interop import op_name
from autotune_dialect.symbols import lookup_symbol
from autotune_model.bench import kernel_function
from autotune_model.measure import ModelFunction

_DISAGREEMENT = re.compile(r"to be (\d+), but found (\d+)")


def _specialization(
    dispatch: DispatchOp, values: dict[SSAValue, int]
) -> tuple[str, str, list[int]] | None:
    """The text of a module holding the dispatch's executable, its kernel function's name
    and the values of the kernel's index arguments for the example inputs; None when one
    is unknown."""
    entry = dispatch.entry_point
    export = lookup_symbol(dispatch, entry)
    kernel = interop.kernel_function_name(export) if export is not None else None
    executable = lookup_symbol(dispatch, type(entry)(entry.root_reference))
    scalars = [a for a in dispatch.arguments if not isinstance(a.type, TensorType)]
    if kernel is None or executable is None or any(a not in values for a in scalars):
        return None
    return generic_text(ModuleOp([executable.clone()])), kernel, [values[a] for a in scalars]


def _specialized(ir, text: str, kernel: str, sizes: list[int]):
    """The module of `text` whose kernel function takes `sizes` as constants instead of
    its index arguments (IREE's IR); None when its index arguments are not as many."""
    module = ir.Module.parse(text)
    function = kernel_function(module, kernel)
    if function is None:
        return None
    block = function.regions[0].blocks[0]
    index = ir.IndexType.get()
    arguments = [a for a in block.arguments if a.type == index]
    if len(arguments) != len(sizes):
        return None
    with ir.InsertionPoint.at_block_begin(block):
        for argument, size in zip(arguments, sizes, strict=True):
            constant = ir.Operation.create(
                "arith.constant",
                results=[index],
                attributes={"value": ir.IntegerAttr.get(index, size)},
            )
            argument.replace_all_uses_with(constant.result)
    return module


def check_input_sizes(
    function: ModelFunction,
    values: dict[SSAValue, int],
    shapes: Sequence[tuple[int, ...]],
    source: str | None,
) -> None:
    """Refuse example shapes whose dynamic sizes disagree where a dispatch's ops take
    them (before any tuning): an error at the function's signature that names the op,
    the sizes and the arguments whose given size IREE found unexpected."""
    from iree.compiler import ir
    from iree.compiler.passmanager import PassManager

    from autotune_dialect.iree_ir import iree_context

    found = [_specialization(d, values) for d in function.dispatches()]
    with iree_context(), ir.Location.unknown():
        for text, kernel, sizes in [f for f in found if f is not None]:
            module = _specialized(ir, text, kernel, sizes)
            if module is None:
                continue
            try:
                PassManager.parse("builtin.module(canonicalize)").run(module.operation)
            except ir.MLIRError as err:
                raise _disagreement(function, err, shapes, source) from None


def _disagreement(
    function: ModelFunction, err, shapes: Sequence[tuple[int, ...]], source: str | None
) -> DiagnosticError:
    """The error for example shapes that an op of the model finds disagreeing."""
    diagnostic = err.error_diagnostics[0] if err.error_diagnostics else None
    message = diagnostic.message if diagnostic is not None else str(err).splitlines()[0]
    where = str(diagnostic.location) if diagnostic is not None else ""
    place = re.search(r'"([^"]+)":(\d+):(\d+)', where)
    at = f" at {place.group(1)}:{place.group(2)}:{place.group(3)}" if place else ""
    given = ", ".join("x".join(map(str, shape)) for shape in shapes)
    sizes = _DISAGREEMENT.search(message)
    named = []
    if sizes is not None:
        expected, found = int(sizes.group(1)), int(sizes.group(2))
        named = [
            (i, d)
            for i, shape in enumerate(shapes)
            for d, size in enumerate(shape)
            if size == found and _dynamic(function, i, d)
        ]
    if len(named) == 1:
        (index, axis) = named[0]
        shape = list(shapes[index])
        wanted = "x".join(str(expected if d == axis else s) for d, s in enumerate(shape))
        return function.error(
            f"input shape {'x'.join(map(str, shape))} does not fit argument {index} of "
            f"@{function.name} (expected {wanted}): its dimension {axis} must be {expected} "
            f"where @{function.name} uses it with the other inputs{at} (IREE: {message}); "
            f"input shapes given: {given}",
            source,
        )
    return function.error(
        f"the input shapes given disagree where @{function.name} uses them{at} (IREE: "
        f"{message}); input shapes given: {given}",
        source,
    )


def _dynamic(function: ModelFunction, index: int, axis: int) -> bool:
    """Whether dimension `axis` of argument `index` is dynamic in the model's signature."""
    for op in function.body.walk():
        if op_name(op) == "hal.tensor.import" and op.operands[0] is function.arguments[index]:
            shape = op.results[0].type.get_shape()
            return axis < len(shape) and shape[axis] < 0
    return False


def check_example_inputs(
    flow: str, function_name: str | None, shapes: Sequence, model: str, filename: str
) -> None:
    """Check the `--input` shapes against the model at the flow phase (`flow`), before
    anything is built or timed on them: against the function's signature
    (`function_inputs`), and with each other where its dispatches use them."""
    from autotune_bridge.ir import parse_module
    from autotune_model.measure import function_inputs, model_function
    from autotune_model.sizes import host_values

    module = parse_module(flow, f"{filename} (flow phase)")
    function = model_function(module, function_name, model, filename)
    inputs = function_inputs(function, shapes, model)
    values = host_values(function.body, function.arguments, [o.shape for o in inputs])
    check_input_sizes(function, values, [o.shape for o in inputs], model)
