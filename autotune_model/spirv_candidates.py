"""Candidate configurations of a SPIR-V (vulkan) dispatch, around the one IREE's SPIR-V
code generation picks (`lowering.dispatch_configs.SpirvConfig`).

IREE 3.13 builds a matmul for a Vulkan target without cooperative matrices with one of
two pipelines:

- `BaseVectorize` (`BaseDistribute` without the reduction level), tiles
  `[[workgroup], [thread], [reduction]]` (`[[16, 256], [8, 8], [0, 0, 4]]`) and one
  thread per thread tile: `workgroup_size` is the workgroup tile over the thread tile of
  each tiled parallel loop, the innermost loop first (`[32, 2, 1]`). IREE builds a
  `workgroup_size` that breaks this without a word (the threads then loop over the tiles
  or idle) and one past the target's thread limit too, so every candidate here keeps to
  the rule and to the target's `WorkgroupLimits`. Candidates: the workgroup tile of a
  parallel loop doubled or halved with its thread tile kept (twice or half the threads
  along it), the thread tile halved or doubled with the workgroup tile kept (the same),
  the reduction tile halved and doubled, and, for a contraction, the same workgroup tile
  and threads with the operands staged in workgroup memory (`MatmulPromoteVectorize`,
  whose reduction tile is the largest of 32, 16 and 8 that divides the loop and whose
  staged tiles fit the target's workgroup memory).
- `MatmulPromoteVectorize` (targets such as `rdna3` or `ampere`), one level
  `[[M, N, K]]` and its software pipelining (`pipeline_depth`, `store_stage`):
  the reduction tile and each parallel tile halved and doubled with the same threads,
  and the pipelining one stage deeper or shallower.

No tile grows past its loop's trip count. A candidate IREE refuses to build (a staged
tile past the target's workgroup memory: "uses 18432 bytes of shared memory; exceeded
the limit of 16384 bytes") is dropped when it is compiled, as for the other targets.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from autotune_model.gpu_candidates import GpuCandidate
from lowering.dispatch_configs import DispatchConfig, SpirvConfig, WorkgroupLimits

DISTRIBUTED = ("BaseVectorize", "BaseDistribute")
"""IREE's SPIR-V pipelines with one thread per thread tile (the second tiling level)."""

PROMOTED = "MatmulPromoteVectorize"
"""IREE's SPIR-V pipeline that stages a matmul's operands in workgroup memory."""

PROMOTED_REDUCTION_TILES = (32, 16, 8)
"""The reduction tiles a staged candidate tries, the largest that fits first."""

PROMOTED_OPTIONS = "{pipeline_depth = 1 : i64, store_stage = 1 : i64}"
"""The software pipelining a staged candidate starts with (IREE's own for `ampere`)."""

DEFAULT_LIMITS = WorkgroupLimits((128, 128, 64), 128, 16384)
"""The limits of IREE's default Vulkan target, where a module does not say its own."""

_DEPTH = re.compile(r"pipeline_depth = (\d+)")
_ELEMENT_BITS = re.compile(r"x[a-z]*?(\d+)>$")


def spirv_candidates(config: DispatchConfig) -> Iterator[GpuCandidate]:
    """The changed configurations of a SPIR-V dispatch, one kind of change at a time
    (none for a pipeline other than `DISTRIBUTED` and `PROMOTED`)."""
    spirv = config.spirv
    if spirv is None:
        return
    context = _Context(config, spirv)
    kinds: list[Iterable[GpuCandidate]] = []
    if spirv.pipeline in DISTRIBUTED:
        kinds = [context.workgroup(), context.threads(), context.reduction(2)]
        kinds.append(context.promoted())
    elif spirv.pipeline == PROMOTED:
        kinds = [context.reduction(0), context.staged_tiles(), context.pipelining()]
    for batch in itertools.zip_longest(*kinds):
        yield from (c for c in batch if c is not None)


def _name(prefix: str, tiles: Sequence[int]) -> str:
    return prefix + "x".join(str(t) for t in tiles if t)


def workgroup_size(workgroup: Sequence[int], thread: Sequence[int]) -> tuple[int, ...] | None:
    """The threads of a distributed pipeline along x, y, z: the workgroup tile over the
    thread tile of each tiled parallel loop, the innermost first (None: a tile that does
    not divide, or more than three such loops)."""
    axes = [i for i, t in enumerate(workgroup) if t > 0 and i < len(thread) and thread[i] > 0]
    if len(axes) > 3 or any(workgroup[i] % thread[i] for i in axes):
        return None
    sizes = [workgroup[i] // thread[i] for i in reversed(axes)]
    return tuple(sizes + [1] * (3 - len(sizes)))


class _Context:
    """One dispatch's SPIR-V configuration with what bounds its candidates: the loops'
    trip counts, which loops reduce, and the target's workgroup limits."""

    def __init__(self, config: DispatchConfig, spirv: SpirvConfig):
        self.spirv = spirv
        form = config.root_form
        loops = max(len(level) for level in spirv.levels)
        self.bounds: list[int | None] = form.loop_bounds if form else [None] * loops
        kinds = form.iterator_types.split(",") if form else []
        self.reductions = [i for i, kind in enumerate(kinds) if "reduction" in kind]
        self.limits = config.limits or DEFAULT_LIMITS
        bits = _ELEMENT_BITS.search(form.operand_types[0]) if form and form.operand_types else None
        self.element_bytes = max(1, int(bits[1]) // 8) if bits else 4

    def fits_loop(self, axis: int, tile: int) -> bool:
        bound = self.bounds[axis] if axis < len(self.bounds) else None
        return tile >= 1 and (bound is None or tile <= bound)

    def fits_threads(self, size: Sequence[int]) -> bool:
        limits = self.limits
        return math.prod(size) <= limits.threads and all(
            s <= m for s, m in zip(size, limits.sizes, strict=True)
        )

    def candidate(self, name: str, changed: SpirvConfig) -> GpuCandidate:
        return GpuCandidate(name, changed.lowering_config, changed.translation_info)

    def with_level(self, index: int, tiles: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        levels = list(self.spirv.levels)
        levels[index] = tuple(tiles)
        return tuple(levels)

    def distributed(self, workgroup: list[int], thread: list[int]) -> SpirvConfig | None:
        """IREE's configuration with these workgroup and thread tiles and the threads they
        need (None: past a loop or the target's limits)."""
        size = workgroup_size(workgroup, thread)
        if size is None or not self.fits_threads(size):
            return None
        if not all(self.fits_loop(i, t) for i, t in enumerate(workgroup) if t > 0):
            return None
        levels = (tuple(workgroup), *self.with_level(1, thread)[1:])
        return replace(self.spirv, levels=levels, workgroup_size=size)

    def own_threads_follow_the_rule(self) -> bool:
        levels = self.spirv.levels
        return len(levels) >= 2 and workgroup_size(levels[0], levels[1]) == tuple(
            self.spirv.workgroup_size
        )

    def workgroup(self) -> Iterator[GpuCandidate]:
        """The workgroup tile of each tiled parallel loop doubled and halved, its thread
        tile kept (so twice or half the threads along it)."""
        if not self.own_threads_follow_the_rule():
            return
        workgroup, thread = list(self.spirv.levels[0]), list(self.spirv.levels[1])
        for axis, tile in enumerate(workgroup):
            if tile <= 0 or axis >= len(thread) or thread[axis] <= 0:
                continue
            for scaled in (tile * 2, tile // 2):
                new = [scaled if i == axis else t for i, t in enumerate(workgroup)]
                changed = self.distributed(new, thread) if scaled >= thread[axis] else None
                if changed is not None:
                    yield self.candidate(_name("w", new), changed)

    def threads(self) -> Iterator[GpuCandidate]:
        """The thread tile of each tiled parallel loop halved and doubled, the workgroup
        tile kept (so twice or half the threads along it)."""
        if not self.own_threads_follow_the_rule():
            return
        workgroup, thread = list(self.spirv.levels[0]), list(self.spirv.levels[1])
        for axis, tile in enumerate(thread):
            if tile <= 0 or axis >= len(workgroup) or workgroup[axis] <= 0:
                continue
            for scaled in (tile // 2, tile * 2):
                new = [scaled if i == axis else t for i, t in enumerate(thread)]
                changed = self.distributed(workgroup, new) if scaled >= 1 else None
                if changed is not None:
                    yield self.candidate(_name("t", new), changed)

    def reduction(self, level: int) -> Iterator[GpuCandidate]:
        """The tile of each reduction loop at `level` halved and doubled."""
        if level >= len(self.spirv.levels):
            return
        tiles = list(self.spirv.levels[level])
        for axis in (a for a in self.reductions if a < len(tiles) and tiles[a] > 0):
            for scaled in (tiles[axis] // 2, tiles[axis] * 2):
                new = [scaled if i == axis else t for i, t in enumerate(tiles)]
                if self.fits_loop(axis, scaled) and self.staged_fit(new, level):
                    changed = replace(self.spirv, levels=self.with_level(level, new))
                    yield self.candidate(_name("k", [scaled]), changed)

    def staged_fit(self, tiles: Sequence[int], level: int = 0) -> bool:
        """Whether a staged (`PROMOTED`) tiling's operand tiles fit workgroup memory
        (a distributed pipeline's levels stage nothing)."""
        if self.spirv.pipeline != PROMOTED or level != 0 or len(tiles) < 3:
            return True
        return _staged_bytes(tiles, self.element_bytes) <= self.limits.memory

    def promoted(self) -> Iterator[GpuCandidate]:
        """A contraction's workgroup tile and threads with its operands staged in
        workgroup memory (`PROMOTED`), the largest reduction tile that fits."""
        workgroup = list(self.spirv.levels[0])
        parallel = [i for i, t in enumerate(workgroup) if t > 0]
        loops = len(self.bounds)
        if self.reductions != [loops - 1] or len(parallel) < 2 or len(workgroup) >= loops:
            return
        if not self.own_threads_follow_the_rule():
            return
        staged = replace(self.spirv, pipeline=PROMOTED, options=PROMOTED_OPTIONS)
        bound = self.bounds[-1]
        for k in PROMOTED_REDUCTION_TILES:
            tiles = workgroup + [0] * (loops - 1 - len(workgroup)) + [k]
            fits_loop = bound is None or bound % k == 0
            if fits_loop and _staged_bytes(tiles, self.element_bytes) <= self.limits.memory:
                yield self.candidate(f"promote_k{k}", replace(staged, levels=(tuple(tiles),)))
                return

    def staged_tiles(self) -> Iterator[GpuCandidate]:
        """A staged tiling's parallel tiles halved and doubled, the threads kept (each
        tile still a multiple of the threads along it)."""
        tiles = list(self.spirv.levels[0])
        axes = [i for i, t in enumerate(tiles) if t > 0 and i not in self.reductions]
        along = dict(zip(reversed(axes), self.spirv.workgroup_size, strict=False))
        for axis in axes:
            for scaled in (tiles[axis] * 2, tiles[axis] // 2):
                new = [scaled if i == axis else t for i, t in enumerate(tiles)]
                threads = along.get(axis, 1)
                fits = self.fits_loop(axis, scaled) and scaled % threads == 0
                if fits and _staged_bytes(new, self.element_bytes) <= self.limits.memory:
                    changed = replace(self.spirv, levels=self.with_level(0, new))
                    yield self.candidate(_name("w", new[:-1]), changed)

    def pipelining(self) -> Iterator[GpuCandidate]:
        """The staged loads pipelined one stage deeper, and shallower (at least 1)."""
        depth = _DEPTH.search(self.spirv.options)
        if depth is None:
            return
        for new in (int(depth[1]) + 1, int(depth[1]) - 1):
            if new >= 1:
                options = _DEPTH.sub(f"pipeline_depth = {new}", self.spirv.options, count=1)
                changed = replace(self.spirv, options=options)
                yield self.candidate(f"d{new}", changed)


def _staged_bytes(tiles: Sequence[int], element_bytes: int) -> int:
    """The workgroup memory a staged tiling's operand tiles take ([..., M, N, K])."""
    m, n, k = tiles[-3], tiles[-2], tiles[-1]
    return (m * k + k * n) * element_bytes
