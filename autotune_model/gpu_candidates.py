"""Candidate configurations of a GPU dispatch (CUDA, ROCm), around the one IREE's GPU
pipeline picks.

IREE 3.13 builds CUDA and ROCm matmuls and convolutions with its `TileAndFuse` pipeline. Its
`#iree_gpu.lowering_config` and `translation_info` expose, per dispatch:

- `reduction`: the reduction tile (halved and doubled);
- `workgroup` with `thread` (SIMT code): the workgroup tile of a parallel loop doubled
  together with its thread tile, so the thread count stays right;
- with a matrix intrinsic (`mma_kind`: tensor cores, AMD's MFMA or WMMA): on NVIDIA, the
  intrinsic itself (mma.sync 16x8x16 against wmma 16x16x16 of the same types, each
  subgroup covering the same elements); the `subgroup` tile of a parallel loop (in
  intrinsics) doubled or halved, which changes the number of subgroups and so
  `workgroup_size`; or doubled together with
  the workgroup tile (same threads, larger tiles); the operands staged in shared memory
  or not (`promote_operands`);
- the software pipelining depth of shared-memory loads (`prefetch_num_stages`).

An attention (`iree_linalg_ext.attention`) is built with the `VectorDistribute` pipeline,
its config a `workgroup` tile and a `partial_reduction` tile (of the keys' loop, `K2`),
its threads laid out by a decomposition config that IREE derives again when a candidate's
configuration is given: each of those tiles is halved and doubled (a `partial_reduction`
larger than the keys' loop is refused at build time, "Padding OnlineAttention without
existing mask is not yet supported", and dropped).

Candidates come from each kind in turn, so that a small limit tries several. What IREE
refuses to build is dropped when it is compiled, as for llvm-cpu (3.13 refuses wmma in
`TileAndFuse` for a 512x768x1024 f16 matmul: "'tensor.expand_shape' op expected dimension
2 of collapsed type to be static value of ..."; every other kind above builds for sm_80).
On gfx942 an f32 matmul's reduction, staging and pipelining candidates build, and an f16
matmul's (MFMA_F32_16x16x16_F16) subgroup candidates too.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from autotune_bridge.iree_configs import tile_lists, with_lists
from lowering.dispatch_configs import SUBGROUP_SIZE, WORKGROUP_SIZE, DispatchConfig

MAX_THREADS = 1024
"""Threads per workgroup that every CUDA and AMD GPU architecture allows."""

_INTRINSIC = re.compile(r"#iree_gpu\.mma_layout<(\w+)>")
_INTRINSIC_SHAPE = re.compile(
    r"^(NV_MMA_SYNC|NV_WMMA|MFMA|WMMAR3|WMMAR4|WMMA)_(\w+?)_(\d+)x(\d+)x(\d+)_(\w+)$"
)
"""A matrix intrinsic's name: its family (NVIDIA's, or AMD's MFMA and WMMA), result type,
M x N x K, input type."""
_SHAPES = {"NV_MMA_SYNC": (16, 8, 16), "NV_WMMA": (16, 16, 16)}
"""The NVIDIA intrinsics IREE has for f16/bf16 inputs, by family: (M, N, K)."""
_STAGES = re.compile(r"prefetch_num_stages = (\d+)")
_PROMOTE = re.compile(r"promote_operands = \[[\d, ]*\], ")


@dataclass(frozen=True)
class GpuCandidate:
    """A changed GPU configuration: a name, the lowering config and the translation info."""

    name: str
    lowering_config: str
    translation_info: str


def gpu_candidates(config: DispatchConfig) -> Iterator[GpuCandidate]:
    """The changed configurations of a GPU dispatch, one kind of change at a time."""
    lists = tile_lists(config.lowering_config)
    kinds: list[Iterable[GpuCandidate]] = [
        _reduction(config, lists),
        _partial_reduction(config, lists),
        _threads(config, lists),
        _workgroup(config, lists),
        _subgroups(config, lists),
        _stages(config),
        _staging(config),
        _intrinsic(config, lists),
    ]
    for batch in itertools.zip_longest(*kinds):
        yield from (c for c in batch if c is not None)


def _name(prefix: str, tiles: Sequence[int]) -> str:
    return prefix + "x".join(str(t) for t in tiles if t)


def _same(config: DispatchConfig, name: str, lists: dict[str, list[int]]) -> GpuCandidate:
    return GpuCandidate(name, with_lists(config.lowering_config, lists), config.translation_info)


def _scaled(
    config: DispatchConfig, lists: dict[str, list[int]], name: str, prefix: str, above: int = 0
) -> Iterator[GpuCandidate]:
    """Each tile of the list `name` above `above`, halved and doubled (never below 1)."""
    tiles = lists.get(name, [])
    for axis, tile in enumerate(tiles):
        if tile > above:
            for factor in (0.5, 2):
                new = list(tiles)
                new[axis] = int(tile * factor)
                if new[axis] >= 1:
                    yield _same(config, _name(prefix, new), {name: new})


def _reduction(config: DispatchConfig, lists: dict[str, list[int]]) -> Iterator[GpuCandidate]:
    return _scaled(config, lists, "reduction", "k")


def _partial_reduction(
    config: DispatchConfig, lists: dict[str, list[int]]
) -> Iterator[GpuCandidate]:
    """An attention's tile of the keys' loop, halved and doubled."""
    return _scaled(config, lists, "partial_reduction", "kv")


def _workgroup(config: DispatchConfig, lists: dict[str, list[int]]) -> Iterator[GpuCandidate]:
    """An attention's workgroup tiles above 1, halved and doubled (no thread or subgroup
    tile goes with them: the decomposition config that lays out the threads is derived
    again)."""
    if "partial_reduction" not in lists or "thread" in lists or "subgroup" in lists:
        return iter(())
    return _scaled(config, lists, "workgroup", "w", above=1)


def _threads(config: DispatchConfig, lists: dict[str, list[int]]) -> Iterator[GpuCandidate]:
    workgroup = lists.get("workgroup", [])
    thread = lists.get("thread", [])
    for axis, tile in enumerate(workgroup):
        if tile > 1 and axis < len(thread) and thread[axis] > 0:
            new_workgroup, new_thread = list(workgroup), list(thread)
            new_workgroup[axis] *= 2
            new_thread[axis] *= 2
            yield _same(
                config,
                _name("w", new_workgroup),
                {"workgroup": new_workgroup, "thread": new_thread},
            )


def _intrinsic_of(config: DispatchConfig) -> tuple[str, tuple[int, int, int]] | None:
    found = _INTRINSIC.search(config.lowering_config)
    shape = _INTRINSIC_SHAPE.match(found[1]) if found else None
    if found is None or shape is None:
        return None
    return found[1], (int(shape[3]), int(shape[4]), int(shape[5]))


def _intrinsic(config: DispatchConfig, lists: dict[str, list[int]]) -> Iterator[GpuCandidate]:
    """The other family's intrinsic of the same types, each subgroup covering the same
    elements as before (so the same number of threads)."""
    current = _intrinsic_of(config)
    subgroup = lists.get("subgroup", [])
    axes = [i for i, t in enumerate(subgroup) if t > 0]
    if current is None or len(axes) != 2:
        return
    name, shape = current
    parts = _INTRINSIC_SHAPE.match(name)
    assert parts is not None
    if parts[1] not in _SHAPES:
        return  # AMD's: its other intrinsics of the same types differ in K
    for family, other in _SHAPES.items():
        if family == parts[1]:
            continue
        new_subgroup = list(subgroup)
        for axis, old, new in zip(axes, shape[:2], other[:2], strict=True):
            elements = subgroup[axis] * old
            if elements % new:
                break
            new_subgroup[axis] = elements // new
        else:
            if other[2] != shape[2]:
                continue  # the reduction tile counts intrinsics: keep K
            kind = f"{family}_{parts[2]}_{other[0]}x{other[1]}x{other[2]}_{parts[6]}"
            text = with_lists(config.lowering_config, {"subgroup": new_subgroup})
            text = text.replace(f"mma_layout<{name}>", f"mma_layout<{kind}>")
            short = "mma" if family == "NV_MMA_SYNC" else "wmma"
            yield GpuCandidate(short, text, config.translation_info)


def _threads_per_workgroup(translation_info: str) -> int | None:
    found = WORKGROUP_SIZE.search(translation_info)
    if found is None or (found[2], found[3]) != ("1", "1"):
        return None
    return int(found[1])


def _with_threads(translation_info: str, threads: int) -> str:
    return WORKGROUP_SIZE.sub(f"workgroup_size = [{threads}, 1, 1]", translation_info, count=1)


def _subgroups(config: DispatchConfig, lists: dict[str, list[int]]) -> Iterator[GpuCandidate]:
    """Per parallel loop of an intrinsic's tile: the subgroup tile doubled with the
    workgroup tile (the same subgroups, each doing twice the work), doubled alone (half
    the subgroups), halved alone (twice as many), `workgroup_size` following."""
    current = _intrinsic_of(config)
    threads = _threads_per_workgroup(config.translation_info)
    found = SUBGROUP_SIZE.search(config.translation_info)
    workgroup, subgroup = lists.get("workgroup", []), lists.get("subgroup", [])
    axes = [i for i, t in enumerate(subgroup) if t > 0]
    if current is None or threads is None or found is None or len(axes) != 2:
        return
    width = int(found[1])
    intrinsic = dict(zip(axes, current[1][:2], strict=True))
    for axis in axes:
        for grow_workgroup, factor in ((True, 2), (False, 2), (False, 0.5)):
            new_subgroup, new_workgroup = list(subgroup), list(workgroup)
            new_subgroup[axis] = int(subgroup[axis] * factor)
            if grow_workgroup:
                new_workgroup[axis] *= 2
            per_subgroup = new_subgroup[axis] * intrinsic[axis]
            if new_subgroup[axis] < 1 or new_workgroup[axis] % per_subgroup:
                continue
            ratio = (new_workgroup[axis] / workgroup[axis]) * (subgroup[axis] / new_subgroup[axis])
            new_threads = threads * ratio
            if not (width <= new_threads <= MAX_THREADS) or not float(new_threads).is_integer():
                continue
            changed = {"subgroup": new_subgroup}
            name = _name("s", new_subgroup)
            if grow_workgroup:
                changed["workgroup"] = new_workgroup
                name += "_" + _name("w", new_workgroup)
            yield GpuCandidate(
                name,
                with_lists(config.lowering_config, changed),
                _with_threads(config.translation_info, math.floor(new_threads)),
            )


def _stages(config: DispatchConfig) -> Iterator[GpuCandidate]:
    """Shared-memory loads pipelined deeper or not at all."""
    found = _STAGES.search(config.translation_info)
    if found is None:
        return
    for stages in sorted({0, int(found[1]) + 1} - {int(found[1])}):
        text = _STAGES.sub(f"prefetch_num_stages = {stages}", config.translation_info, count=1)
        yield GpuCandidate(f"p{stages}", config.lowering_config, text)


def _staging(config: DispatchConfig) -> Iterator[GpuCandidate]:
    """The operands read from global memory directly, not staged in shared memory."""
    if _PROMOTE.search(config.lowering_config):
        text = _PROMOTE.sub("", config.lowering_config, count=1)
        yield GpuCandidate("direct", text, config.translation_info)
