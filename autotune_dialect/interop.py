"""What the project reads of IREE ops it does not model: names, symbols, function types,
executables and their exports, kernel function arities.

These ops are xDSL unregistered ops after the import (IREE parsed and verified them), or
the project's own ops where it models them; the readers below work on both, by op name
and attribute.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, SymbolRefAttr, UnregisteredOp
from xdsl.ir import Attribute, Operation

from autotune_dialect.iree_ir import FUNCTIONS
from autotune_dialect.mlir_text import attribute_text
from autotune_dialect.verbatim import VerbatimAttr, VerbatimOp

EXPORT_OF = {
    "flow.executable": "flow.executable.export",
    "hal.executable.source": "hal.executable.export",
}
"""The executables a group may sit in, and the ops that are their exports."""

_CONSTANTS = re.compile(r"constants\s*=\s*(-?\d+)")
_BINDING = re.compile(r"#hal\.pipeline\.binding<")


def op_name(op: Operation) -> str:
    """The op's full name (`flow.executable`), also for unregistered ops."""
    return op.op_name.data if isinstance(op, UnregisteredOp) else op.name


def attribute(op: Operation, key: str) -> Attribute | None:
    """An inherent or discardable attribute of an op, wherever the import put it."""
    value = op.properties.get(key)
    return value if value is not None else op.attributes.get(key)


def symbol_name(op: Operation) -> str | None:
    """The `sym_name` of an op, or None."""
    name = attribute(op, "sym_name")
    return name.data if isinstance(name, StringAttr) else None


def missing_kernel_function(kernel: str) -> str:
    """What is wrong with an export whose kernel function `@kernel` its executable's
    kernel module does not define (iree-compile crashes on it instead of saying so)."""
    return f"runs kernel function @{kernel}, which the executable's module does not define"


def is_executable(op: Operation | None) -> bool:
    return op is not None and op_name(op) in EXPORT_OF


def is_export(op: Operation) -> bool:
    return op_name(op) in EXPORT_OF.values()


def is_function(op: Operation) -> bool:
    return op_name(op) in FUNCTIONS


def exports(executable: Operation) -> list[Operation]:
    """The export ops directly inside an executable."""
    kind = EXPORT_OF[op_name(executable)]
    return [op for region in executable.regions for op in region.ops if op_name(op) == kind]


def function_type(op: Operation) -> Attribute | None:
    """The `function_type` of a function op (a `FunctionType`, or verbatim text)."""
    return attribute(op, "function_type")


def function_arity(op: Operation) -> tuple[int, int] | None:
    """(inputs, results) of a function op, when its type is readable."""
    type_ = function_type(op)
    if isinstance(type_, FunctionType):
        return len(type_.inputs), len(type_.outputs)
    return None


def workload_arity(export: Operation) -> int | None:
    """How many workload values an export takes: the arguments of its count region (less
    the device of a `hal.executable.export`); None without a count region."""
    if not export.regions or not export.regions[0].blocks:
        return None
    args = len(export.regions[0].blocks[0].args)
    return args - 1 if op_name(export) == "hal.executable.export" else args


def layout_text(export: Operation) -> str | None:
    """The `#hal.pipeline.layout` of a `hal.executable.export`, as text."""
    layout = attribute(export, "layout")
    return None if layout is None else mlir_text(layout)


def layout_counts(layout: str) -> tuple[int, int]:
    """(push constants, bindings) of a `#hal.pipeline.layout`'s text."""
    constants = _CONSTANTS.search(layout)
    return (int(constants.group(1)) if constants else 0), len(_BINDING.findall(layout))


def kernel_function_name(export: Operation) -> str | None:
    """The kernel function a `flow.executable.export` runs (its `function_ref`, or its own
    name)."""
    ref = attribute(export, "function_ref")
    if isinstance(ref, SymbolRefAttr):
        return ref.root_reference.data
    return symbol_name(export)


def mlir_text(attr: Attribute) -> str:
    """An attribute's MLIR text (verbatim text as it is)."""
    if isinstance(attr, VerbatimAttr):
        return attr.text.data
    return attribute_text(attr)


def kernel_modules(executable: Operation) -> list[Operation]:
    """The kernel modules directly inside an executable (kept text or xDSL modules)."""
    kinds = (VerbatimOp, ModuleOp)
    return [op for region in executable.regions for op in region.ops if type(op) in kinds]


def kernel_arity(executable: Operation, name: str) -> int | None:
    """Number of arguments of the kernel function `@name` of an executable, if found."""
    for module in kernel_modules(executable):
        arity = kernel_arity_in(module, name)
        if arity is not None:
            return arity
    return None


def kernel_arity_in(module: Operation, name: str) -> int | None:
    """Number of arguments of `func.func @name` in a kernel module, if it has one."""
    if isinstance(module, VerbatimOp):
        return module.function_arities().get(name)
    for op in module.regions[0].blocks[0].ops:
        if is_function(op) and symbol_name(op) == name:
            counts = function_arity(op)
            return None if counts is None else counts[0]
    return None


def kernel_argument_types(executable: Operation, name: str) -> tuple[str, ...] | None:
    """The argument types of the kernel function `@name` of an executable (kept text),
    as MLIR text, if found."""
    for module in kernel_modules(executable):
        if isinstance(module, VerbatimOp):
            signature = module.function_signatures().get(name)
            if signature is not None:
                return signature[0]
    return None


_DISPATCH_TENSOR = re.compile(r"!iree_tensor_ext\.dispatch\.tensor<\w+:(tensor<[^<>]*>)>")
_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([A-Za-z0-9_]+)>")


def dispatch_tensor_shape(kernel_type: str) -> str | None:
    """The `tensor<...>` a kernel argument of type `!iree_tensor_ext.dispatch.tensor<
    access:tensor<...>>` binds (None for another type, or one with an encoding)."""
    match = _DISPATCH_TENSOR.fullmatch(kernel_type)
    return match[1] if match and _TENSOR.fullmatch(match[1]) else None


def shapes_agree(given: str, held: str) -> bool:
    """Whether two `tensor<...>` texts can be the same tensor: same rank and element
    type, and equal sizes where both are static (`?` agrees with any size). A text this
    does not read (an encoding, ...) agrees."""
    a, b = _TENSOR.fullmatch(given), _TENSOR.fullmatch(held)
    if a is None or b is None:
        return True
    dims_a, dims_b = a[1].split("x")[:-1], b[1].split("x")[:-1]
    return (
        a[2] == b[2]
        and len(dims_a) == len(dims_b)
        and all(x == y or "?" in (x, y) for x, y in zip(dims_a, dims_b, strict=True))
    )


def kernel_signature(executable: Operation, name: str) -> str | None:
    """The function type of the kernel function `@name` of an executable, as MLIR text."""
    for module in kernel_modules(executable):
        if isinstance(module, VerbatimOp):
            signature = module.function_signatures().get(name)
            if signature is not None:
                inputs, results = signature
                shown = results[0] if len(results) == 1 else f"({', '.join(results)})"
                return f"({', '.join(inputs)}) -> {shown}"
            continue
        for op in module.regions[0].blocks[0].ops:
            if is_function(op) and symbol_name(op) == name:
                type_ = function_type(op)
                return None if type_ is None else mlir_text(type_)
    return None
