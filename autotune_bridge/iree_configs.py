"""IREE's configuration of a kernel, in one place: the root op it configures, and the tile
lists of its `lowering_config`, read and changed.

The lowering's variants API (`variants`), IREE's own choices (`lowering.dispatch_configs`)
and the model tuner's candidates (`autotune_model.candidates`, `root_forms`, `bench`) all
read and write configurations through this module. A GPU config
(`#iree_gpu.lowering_config`) is read and built through IREE's bindings; IREE 3.13's
bindings do not expose the CPU's (`#iree_cpu.lowering_config`), whose integer lists are
read and replaced in its text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from iree.compiler import ir
from iree.compiler.dialects import iree_gpu

from autotune_dialect.iree_ir import iree_context

ROOT_OP_WORDS = ("matmul", "matvec", "vecmat", "conv", "pooling", "contract", "dot", "attention")
"""Named linalg ops that are a kernel's root (they have reduction loops; IREE's
`attention`, which has no iterator types, too: a transpose fused after it is not)."""

ROOT_MARK = "autotune.root"
"""A unit attribute on the op of a kernel that IREE configures, where it is not the one
`root_op` would take by its kind (e.g. the last reduction of a softmax)."""

TILED_LISTS = ("distribution", "workgroup")
"""The tile lists with one entry per loop of the root op: CPU, GPU."""

_NOT_ROOTS = ("linalg.fill", "linalg.yield", "linalg.index")
_LIST = re.compile(r"\b(\w+) = \[([-\d, ]*)\]")
_CACHE_PARALLEL = re.compile(r"cache_parallel = \[[^\]]*\](, )?")
_GPU_CONFIG = "#iree_gpu.lowering_config<"


def linalg_ops(function: ir.Operation) -> list[ir.Operation]:
    """The linalg (and IREE's linalg_ext) ops of a kernel that can be configured."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name.startswith(("linalg.", "iree_linalg_ext.")) and name not in _NOT_ROOTS:
            found.append(op)
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    return found


def root_op(function: ir.Operation) -> ir.Operation | None:
    """The op a kernel is built around: the one marked `ROOT_MARK`, else the first
    contraction, convolution or reduction, else the last linalg op."""
    candidates = linalg_ops(function)
    marked = [op for op in candidates if ROOT_MARK in op.attributes]
    if marked:
        return marked[0]
    for op in candidates:
        name = op.name
        iterators = (
            str(op.attributes["iterator_types"]) if "iterator_types" in op.attributes else ""
        )
        if any(w in name for w in ROOT_OP_WORDS) or "reduction" in iterators:
            return op
    return candidates[-1] if candidates else None


def tile_lists(config: str) -> dict[str, list[int]]:
    """The integer lists of a lowering config (`distribution`, `workgroup`, ...), or of
    the lowering config inside a `compilation_info`."""
    if _GPU_CONFIG in config:
        with iree_context():
            return {
                named.name: [ir.IntegerAttr(v).value for v in ir.ArrayAttr(named.attr)]
                for named in _gpu_config(config).attributes
                if _is_integer_list(named.attr)
            }
    return {
        m.group(1): [int(t) for t in m.group(2).split(",") if t.strip()]
        for m in _LIST.finditer(config)
    }


def with_lists(config: str, lists: Mapping[str, Sequence[int]]) -> str:
    """A lowering config with some of its lists replaced (the others as they were)."""
    if config.startswith(_GPU_CONFIG):
        with iree_context():
            entries = {named.name: named.attr for named in _gpu_config(config).attributes}
            i64 = ir.IntegerType.get_signless(64)
            for name, tiles in lists.items():
                if name in entries:
                    entries[name] = ir.ArrayAttr.get([ir.IntegerAttr.get(i64, t) for t in tiles])
            return str(iree_gpu.LoweringConfigAttr.get(ir.DictAttr.get(entries)))

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in lists:
            return match.group()
        return f"{name} = [{', '.join(str(t) for t in lists[name])}]"

    return _LIST.sub(replace, config)


def without_cache_tiles(config: str) -> str:
    """A CPU lowering config without its cache-level tiles (IREE derives them)."""
    return _CACHE_PARALLEL.sub("", config)


def loop_count(config: str) -> int | None:
    """How many loops a lowering config tiles (the length of its first tile list)."""
    lists = tile_lists(config)
    first = next((lists[name] for name in TILED_LISTS if name in lists), None)
    return None if first is None else len(first)


def check_loop_count(root: ir.Operation, config: str, key: str) -> None:
    """A config's tile lists must have one entry per loop of the root op (IREE's own
    config may be for another form of the op, e.g. with a unit dimension folded away)."""
    count = loop_count(config)
    if count is None or "iterator_types" not in root.attributes:
        return
    loops = len(ir.ArrayAttr(root.attributes["iterator_types"]))
    if count != loops:
        raise ValueError(
            f"config {key!r} tiles {count} loops but the root op {root.name} has {loops}"
        )


def _gpu_config(config: str) -> iree_gpu.LoweringConfigAttr:
    """The GPU lowering config of a config's text (itself, or inside a compilation_info)."""
    start = config.index(_GPU_CONFIG)
    depth = 0
    for end in range(start, len(config)):
        depth += {"<": 1, ">": -1}.get(config[end], 0)
        if depth == 0 and config[end] == ">":
            return iree_gpu.LoweringConfigAttr(ir.Attribute.parse(config[start : end + 1]))
    raise ValueError(f"not a GPU lowering config: {config}")


def _is_integer_list(attr: ir.Attribute) -> bool:
    return attr.typeid == ir.ArrayAttr.static_typeid and all(
        v.typeid == ir.IntegerAttr.static_typeid for v in ir.ArrayAttr(attr)
    )
