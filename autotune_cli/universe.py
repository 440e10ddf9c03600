"""Plug-in for the stock `xdsl-opt`: the project's dialects and passes, the target
`-t iree`, which prints a module as IREE does (IREE verifies it), and errors of the input
printed as diagnostics, without a traceback (`xdsl_errors`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import ArrayAttr, DenseResourceAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.universe import Universe
from xdsl.utils.target import Target

from autotune_bridge.bridge import resources_section
from autotune_bridge.ir import print_module, project_dialects
from autotune_cli.xdsl_errors import report_xdsl_opt_errors
from lowering import project_passes


@dataclass(frozen=True)
class IREETarget(Target):
    """`-t iree`: the module as IREE prints it, in the syntax IREE's tools read."""

    name = "iree"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if not hasattr(module, "resources"):
            module.resources = resources_text(ctx, module)  # type: ignore[attr-defined]
        output.write(print_module(module))
        release_blobs(ctx)


def release_blobs(ctx: Context) -> None:
    """Forget the blobs that xDSL's parser stored for this run. Its builtin dialect keeps
    them in one store for the whole process, and a later parse that meets a handle already
    stored renames it (`blob` -> `blob_0`) on every use but stores the blob under yet
    another name: a second module read in the same process (a notebook, a frontend that
    runs `xDSLOptMain` again) would lose its `dialect_resources`."""
    interface = ctx.get_dialect("builtin").get_interface(OpAsmDialectInterface)
    if interface is not None:
        interface._blob_storage.clear()  # noqa: SLF001 - xDSL has no public way to reset it


def resources_text(ctx: Context, module: ModuleOp) -> str:
    """The `{-# dialect_resources: ... #-}` section of the blobs that `module`'s
    `dense_resource`s name, which xDSL's parser keeps in its builtin dialect (empty if
    none)."""
    handles = sorted(
        {
            attr.resource_handle.data
            for op in module.walk()
            for value in (*op.properties.values(), *op.attributes.values())
            for attr in _nested(value)
            if isinstance(attr, DenseResourceAttr)
        }
    )
    interface = ctx.get_dialect("builtin").get_interface(OpAsmDialectInterface)
    return resources_section(interface.build_resources(handles) if handles and interface else {})


def _nested(attr: Attribute) -> Iterator[Attribute]:
    yield attr
    if isinstance(attr, ArrayAttr):
        for item in attr.data:
            yield from _nested(item)
    elif isinstance(attr, DictionaryAttr):
        for item in attr.data.values():
            yield from _nested(item)


UNIVERSE = Universe(
    all_dialects=project_dialects(),
    all_passes=project_passes(),
    all_targets={IREETarget.name: lambda: IREETarget},
)

report_xdsl_opt_errors()
