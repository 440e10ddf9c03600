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

The configurations are read and built typed, through IREE's Python bindings
(`iree.compiler.dialects.iree_gpu`: `LoweringConfigAttr`, `MMAAttr`, `MMAIntrinsic`,
`PipelineOptionsAttr`; `iree_codegen.TranslationInfoAttr`), in an IREE context
(`iree_context`); the tile lists through `autotune_bridge.iree_configs`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from iree.compiler import ir
from iree.compiler.dialects import iree_codegen, iree_gpu

from autotune_bridge.iree_configs import tile_lists, with_lists
from autotune_dialect.iree_ir import iree_context
from lowering.dispatch_configs import DispatchConfig

MAX_THREADS = 1024
"""Threads per workgroup that every CUDA and AMD GPU architecture allows."""

_NVIDIA_FAMILIES = {"NV_MMA_SYNC": "mma", "NV_WMMA": "wmma"}
"""NVIDIA's matrix intrinsics by family (the prefix of `MMAIntrinsic`'s names), and the
name of a candidate that switches to one."""
_OPTIONS = "gpu_pipeline_options"
"""The translation info's configuration entry of the GPU pipeline's options."""


@dataclass(frozen=True)
class _Intrinsic:
    """A lowering config's matrix intrinsic (`mma_kind`): its `MMAIntrinsic` name, its
    M x N x K and its operand types (as text)."""

    name: str
    shape: tuple[int, int, int]
    types: tuple[str, ...]

    @property
    def family(self) -> str | None:
        return next((f for f in _NVIDIA_FAMILIES if self.name.startswith(f + "_")), None)


@functools.cache
def _intrinsics() -> tuple[_Intrinsic, ...]:
    """Every intrinsic IREE's `MMAIntrinsic` names, read from its `MMAAttr`."""
    with iree_context():
        attrs = {name: iree_gpu.MMAAttr(_mma(name)) for name in iree_gpu.MMAIntrinsic.__members__}
        return tuple(
            _Intrinsic(name, tuple(a.mnk_shape), tuple(map(str, a.abc_element_types)))
            for name, a in attrs.items()
        )


def _lowering_entries(lowering_config: str) -> dict[str, ir.Attribute]:
    """The entries of a GPU lowering config (call in an IREE context)."""
    attr = iree_gpu.LoweringConfigAttr(ir.Attribute.parse(lowering_config))
    return {named.name: named.attr for named in attr.attributes}


def _lowering_config(entries: dict[str, ir.Attribute]) -> str:
    return str(iree_gpu.LoweringConfigAttr.get(ir.DictAttr.get(entries)))


def _translation_info(text: str) -> iree_codegen.TranslationInfoAttr:
    """A translation info's attribute (call in an IREE context)."""
    return iree_codegen.TranslationInfoAttr(ir.Attribute.parse(text))


def _with_translation(
    info: iree_codegen.TranslationInfoAttr,
    workgroup_size: Sequence[int] | None = None,
    configuration: ir.Attribute | None = None,
) -> str:
    """`info` with another workgroup size or configuration (call in an IREE context)."""
    return str(
        iree_codegen.TranslationInfoAttr.get(
            info.pass_pipeline,
            info.codegen_spec,
            list(info.workgroup_size) if workgroup_size is None else list(workgroup_size),
            info.subgroup_size,
            info.configuration if configuration is None else configuration,
        )
    )


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


def _intrinsic_of(config: DispatchConfig) -> _Intrinsic | None:
    with iree_context():
        kind = _lowering_entries(config.lowering_config).get("mma_kind")
        if kind is None or not iree_gpu.MMAAttr.isinstance(kind):
            return None
        return next((i for i in _intrinsics() if _mma(i.name) == kind), None)


def _mma(name: str) -> ir.Attribute:
    """The `mma_kind` of the intrinsic `name` (call in an IREE context)."""
    return iree_gpu.MMAAttr.get(iree_gpu.MMAIntrinsic[name])


def _intrinsic(config: DispatchConfig, lists: dict[str, list[int]]) -> Iterator[GpuCandidate]:
    """The other family's intrinsic of the same types, each subgroup covering the same
    elements as before (so the same number of threads)."""
    current = _intrinsic_of(config)
    subgroup = lists.get("subgroup", [])
    axes = [i for i, t in enumerate(subgroup) if t > 0]
    if current is None or len(axes) != 2 or current.family is None:
        return  # AMD's: its other intrinsics of the same types differ in K
    for other in _intrinsics():
        if other.family in (None, current.family) or other.types != current.types:
            continue
        new_subgroup = list(subgroup)
        for axis, old, new in zip(axes, current.shape[:2], other.shape[:2], strict=True):
            elements = subgroup[axis] * old
            if elements % new:
                break
            new_subgroup[axis] = elements // new
        else:
            if other.shape[2] != current.shape[2]:
                continue  # the reduction tile counts intrinsics: keep K
            text = with_lists(config.lowering_config, {"subgroup": new_subgroup})
            with iree_context():
                entries = _lowering_entries(text)
                entries["mma_kind"] = _mma(other.name)
                text = _lowering_config(entries)
            yield GpuCandidate(_NVIDIA_FAMILIES[other.family], text, config.translation_info)  # type: ignore[index]


def _threads_per_workgroup(translation_info: str) -> int | None:
    with iree_context():
        size = list(_translation_info(translation_info).workgroup_size)
    if len(size) != 3 or size[1:] != [1, 1]:
        return None
    return size[0]


def _with_threads(translation_info: str, threads: int) -> str:
    with iree_context():
        return _with_translation(_translation_info(translation_info), [threads, 1, 1])


def _subgroups(config: DispatchConfig, lists: dict[str, list[int]]) -> Iterator[GpuCandidate]:
    """Per parallel loop of an intrinsic's tile: the subgroup tile doubled with the
    workgroup tile (the same subgroups, each doing twice the work), doubled alone (half
    the subgroups), halved alone (twice as many), `workgroup_size` following."""
    current = _intrinsic_of(config)
    threads = _threads_per_workgroup(config.translation_info)
    with iree_context():
        width = _translation_info(config.translation_info).subgroup_size
    workgroup, subgroup = lists.get("workgroup", []), lists.get("subgroup", [])
    axes = [i for i, t in enumerate(subgroup) if t > 0]
    if current is None or threads is None or not width or len(axes) != 2:
        return
    intrinsic = dict(zip(axes, current.shape[:2], strict=True))
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
    with iree_context():
        info = _translation_info(config.translation_info)
        if info.configuration is None:
            return
        entries = {named.name: named.attr for named in ir.DictAttr(info.configuration)}
        options = entries.get(_OPTIONS)
        if options is None or not iree_gpu.PipelineOptionsAttr.isinstance(options):
            return
        options = iree_gpu.PipelineOptionsAttr(options)
        current = options.prefetch_num_stages
        if current is None:
            return
        texts = []
        for stages in sorted({0, current + 1} - {current}):
            entries[_OPTIONS] = iree_gpu.PipelineOptionsAttr.get(
                stages,
                options.no_reduce_shared_memory_bank_conflicts,
                options.use_igemm_convolution,
                options.reorder_workgroups_strategy,
            )
            texts.append((stages, _with_translation(info, configuration=ir.DictAttr.get(entries))))
    for stages, text in texts:
        yield GpuCandidate(f"p{stages}", config.lowering_config, text)


def _staging(config: DispatchConfig) -> Iterator[GpuCandidate]:
    """The operands read from global memory directly, not staged in shared memory."""
    with iree_context():
        entries = _lowering_entries(config.lowering_config)
        if entries.pop("promote_operands", None) is None:
            return
        text = _lowering_config(entries)
    yield GpuCandidate("direct", text, config.translation_info)
