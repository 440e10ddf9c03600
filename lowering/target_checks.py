"""What `iree-compile` would crash on instead of reporting, checked before it runs (for
`compile` and `lower_to_iree(target=...)`), each at its place in the user's file."""

from __future__ import annotations

import re

from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr

from autotune_dialect import interop
from autotune_dialect.diagnostics import op_error
from autotune_dialect.interop import attribute, op_name, symbol_name
from lowering.target_devices import split_targets


def check_buildable(module: ModuleOp, target: str, source: str | None = None) -> None:
    """Every executable can be built for `target`, and every dispatched one exists."""
    check_object_targets(module, target, source)
    check_dispatched_executables(module, source)


def check_object_targets(module: ModuleOp, target: str, source: str | None = None) -> None:
    """Fail at its location on a `hal.executable.source` that has no kernel module and
    objects for other targets only: it cannot be built for `target` (for llvm-cpu,
    `iree-compile` crashes on it instead of saying so)."""
    for op in module.body.ops:
        if op_name(op) != "hal.executable.source" or interop.kernel_modules(op):
            continue
        objects = attribute(op, "objects")
        if objects is None:
            continue
        backends = sorted(set(_OBJECT_TARGET.findall(interop.mlir_text(objects))))
        missing = [t for t in split_targets(target) if t not in backends]
        if backends and missing:
            raise op_error(
                op,
                f"has kernel objects for {', '.join(backends)} only; it cannot be compiled "
                f"for {','.join(missing)}",
                source,
            )


def check_dispatched_executables(module: ModuleOp, source: str | None = None) -> None:
    """Fail at a `flow.dispatch` of an executable that the module does not define, naming
    it: `iree-compile` crashes on one (in ConvertToHALPass). IREE's parser and `lower`
    accept it, as a module may be linked with others later."""
    defined = {symbol_name(op) for op in module.body.ops}
    for op in module.walk():
        if op_name(op) != "flow.dispatch":
            continue
        for entry in getattr(attribute(op, "entry_points"), "data", ()):
            if isinstance(entry, SymbolRefAttr) and entry.root_reference.data not in defined:
                raise op_error(
                    op,
                    f"dispatches {entry}, but the module defines no executable "
                    f"@{entry.root_reference.data}",
                    source,
                )


_OBJECT_TARGET = re.compile(r'#hal\.executable\.target<"([^"]+)"')
