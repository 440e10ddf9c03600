"""Candidate configurations of a dispatch, around the one IREE picks.

IREE's own choice is always candidate 0 (`DEFAULT`: no `compilation_info`, the compiler
decides as it would anyway), and the reference for numerics. The others change the tile
sizes of IREE's `lowering_config` on the dispatch's root op:

- llvm-cpu (`#iree_cpu.lowering_config`): each tiling level in turn. The `distribution`
  (workgroup) tile of each tiled loop halved and doubled, one loop at a time and the
  first two together; the `vector_reduction` tile halved; the `vector_common_parallel`
  tile of each loop halved, or doubled with the reduction tile halved. Where IREE
  vectorizes one parallel loop only (a convolution, attention), register blocks come
  first: a second loop's vector tile grown to 8 and 16 (`_blocks`); an attention's
  before them, the keys' tile grown with the head dimension's vector tile and a block of
  query rows (`_attention`). A distribution tile
  stays a multiple of its loop's vector tile; the cache level is left to IREE.
- cuda (`#iree_gpu.lowering_config`): the choices IREE's GPU pipeline exposes
  (`gpu_candidates`): tiles, the matrix intrinsic, subgroups, shared-memory staging and
  its pipelining depth.
- vulkan (`#iree_codegen.lowering_config<tile_sizes = [...]>`, SPIR-V): workgroup,
  thread and reduction tiles with the threads that follow them, and operands staged in
  workgroup memory (`spirv_candidates`).

Candidates are generated apart from compiling and benchmarking them (`bench`,
`pipeline`): a config that IREE cannot build is dropped there, not here. After the first
round, `combined` joins the changes of the two best candidates that change different tile
lists (a distribution tile and a vector tile, say) into one more candidate, and `around`
makes the next round's candidates one step from the best so far (`search.climb`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from autotune_bridge.iree_configs import tile_lists, with_lists, without_cache_tiles
from autotune_model.gpu_candidates import gpu_candidates
from autotune_model.spirv_candidates import spirv_candidates
from lowering.dispatch_configs import DispatchConfig


@dataclass(frozen=True)
class Candidate:
    """A configuration of one dispatch: a name, and the `compilation_info` to put on the
    root op of its kernel (None: IREE's own choice)."""

    name: str
    compilation_info: str | None = None

    @property
    def is_default(self) -> bool:
        return self.compilation_info is None


DEFAULT = Candidate("default")


def variant_name(export: str, candidate: str) -> str:
    """The group variant that runs a dispatch's candidate: IREE's export itself for IREE's
    own, else `export__candidate` (`freeze.chosen_candidate` reads it back)."""
    return export if candidate == DEFAULT.name else f"{export}__{candidate}"


def _name(prefix: str, tiles: Sequence[int]) -> str:
    return prefix + "x".join(str(t) for t in tiles if t)


def _cpu(config: DispatchConfig, grow_vectors: bool = False) -> Iterator[Candidate]:
    lists = tile_lists(config.lowering_config)
    tiles = lists.get("distribution", [])
    vector = lists.get("vector_common_parallel", [0] * len(tiles))
    reduction = lists.get("vector_reduction", [])
    axes = [i for i, t in enumerate(tiles) if t > 0]

    def fits(new_tiles: list[int], new_vector: list[int]) -> bool:
        """Each tiled loop's tile is a multiple of its vector tile."""
        return all(
            t > 0 and (i >= len(new_vector) or new_vector[i] == 0 or t % new_vector[i] == 0)
            for i, t in enumerate(new_tiles)
            if tiles[i] > 0
        )

    def make(prefix: str, changed: dict[str, list[int]]) -> Candidate:
        text = with_lists(without_cache_tiles(config.lowering_config), changed)
        shown = changed.get("distribution") or changed.get("vector_common_parallel")
        name = _name(prefix, shown or changed["vector_reduction"])
        if "vector_common_parallel" in changed and "vector_reduction" in changed:
            name += "r" + _name("", changed["vector_reduction"])
        return Candidate(name, config.compilation_info(text))

    def scaled(values: list[int], positions: Sequence[int], factor: float) -> list[int]:
        return [int(v * factor) if i in positions else v for i, v in enumerate(values)]

    distribution: list[Candidate] = []
    for positions in [[axis] for axis in axes] + ([axes[:2]] if len(axes) >= 2 else []):
        for factor in (0.5, 2):
            new = scaled(tiles, positions, factor)
            if fits(new, vector):
                distribution.append(make("t", {"distribution": new}))
    # Vector tiles around IREE's: no more elements in flight than its own.
    vectors: list[Candidate] = []
    halved = [scaled(reduction, [axis], 0.5) for axis, size in enumerate(reduction) if size > 1]
    for new_reduction in halved:
        vectors.append(make("r", {"vector_reduction": new_reduction}))
    for axis in (a for a in axes if a < len(vector) and vector[a] > 0):
        wider = scaled(vector, [axis], 2)
        if halved and fits(tiles, wider):
            vectors.append(
                make("v", {"vector_common_parallel": wider, "vector_reduction": halved[0]})
            )
        if grow_vectors and fits(tiles, wider):
            vectors.append(make("v", {"vector_common_parallel": wider}))
        if vector[axis] > 1:
            vectors.append(make("v", {"vector_common_parallel": scaled(vector, [axis], 0.5)}))
    # Register blocks first (one vector load then feeds 8 or 16 FMAs).
    if "attention" in config.root_op:
        yield from _attention(tiles, vector, reduction, fits, make)
    yield from _blocks(tiles, vector, reduction, fits, make)
    # Distribution and vector candidates alternate, so that a small limit tries both levels.
    for index in range(max(len(distribution), len(vectors))):
        yield from distribution[index : index + 1]
        yield from vectors[index : index + 1]


Fits = Callable[[list[int], list[int]], bool]
"""Whether distribution and vector tiles fit each other (each tile a multiple of its
vector tile)."""
Make = Callable[[str, dict[str, list[int]]], Candidate]
"""The candidate that changes the given tile lists, its name from the letter given."""

BLOCK_SIZES = (8, 16)
"""The vector tiles a register block gives the loop it grows (`_blocks`)."""

MOVED_REDUCTION = 4
"""The vector tile a block gives the reduction loop outside the innermost one."""


def _blocks(
    tiles: list[int], vector: list[int], reduction: list[int], fits: Fits, make: Make
) -> Iterator[Candidate]:
    """Register-block candidates of a root op that IREE vectorizes along one parallel loop
    only (a convolution over its output width, attention over its head dimension): the
    innermost other tiled parallel loop, whose workgroup tile holds at least 8, gets a
    vector tile of each of `BLOCK_SIZES`, alone and with the innermost reduction loop's
    vector tile moved to the reduction loop outside it. On Whisper's 1-D convolutions
    (IREE vectorizes the width by 8, and the window of 3 by 16) the tuned blocks ran
    4.5-11.7x faster alone than IREE's own (B7)."""
    parallel = [i for i, t in enumerate(tiles) if t > 0 and i < len(vector)]
    if sum(1 for i in parallel if vector[i] > 1) != 1:
        return
    growable = [i for i in parallel if vector[i] == 1 and tiles[i] >= min(BLOCK_SIZES)]
    if not growable:
        return
    axis = growable[-1]
    loops = [i for i, r in enumerate(reduction) if r > 0]
    moved = None
    if len(loops) >= 2 and reduction[loops[-1]] > 1 and reduction[loops[-2]] == 1:
        moved = list(reduction)
        moved[loops[-2]], moved[loops[-1]] = MOVED_REDUCTION, 1
    for size in BLOCK_SIZES:
        grown = [size if i == axis else v for i, v in enumerate(vector)]
        if not fits(tiles, grown):
            continue
        yield make("v", {"vector_common_parallel": grown})
        if moved is not None:
            yield make("v", {"vector_common_parallel": grown, "vector_reduction": moved})


ATTENTION_ROWS = 4
"""The query rows an attention's register block holds (`_attention`)."""

ATTENTION_STEPS = ((4, 2), (2, 2), (1, 2), (4, 1))
"""(the keys' vector tile, the head dimension's vector tile), each as a multiple of IREE's,
of an attention's candidates (`_attention`), in the order they are tried."""


def _attention(
    tiles: list[int], vector: list[int], reduction: list[int], fits: Fits, make: Make
) -> Iterator[Candidate]:
    """Candidates of an attention (IREE's online attention: batch, query and head-dimension
    loops, then the two reductions, the keys' last). IREE's configuration on llvm-cpu
    vectorizes the head dimension only and takes the keys 1 to 4 at a time, so that each
    step of its online softmax is a tiny matmul: the keys' tile grown and the head
    dimension's vector tile doubled, each with a block of `ATTENTION_ROWS` query rows
    first, then without (`ATTENTION_STEPS`). Timed alone on a 2-core machine: Whisper's
    2x64x64x64x64 attention 9.3x faster than IREE's own with 4 rows, a 4x keys' tile and
    the head dimension's doubled (1.55 ms to 0.17 ms), CLIP's 2x17x32x32x17 1.78x with the
    head dimension's doubled alone (a 17-key loop runs slower with larger keys' tiles)."""
    parallel = [i for i, t in enumerate(tiles) if t > 0 and i < len(vector)]
    lanes = [i for i in parallel if vector[i] > 1]
    keys = [i for i, r in enumerate(reduction) if r > 0]
    if len(lanes) != 1 or not keys:
        return
    lane, key = lanes[0], keys[-1]
    rows = [i for i in parallel if i != lane and vector[i] == 1][-1:]
    for block in (ATTENTION_ROWS, 1) if rows else (1,):
        for keys_factor, lane_factor in ATTENTION_STEPS:
            grown = [block if i in rows else v for i, v in enumerate(vector)]
            grown[lane] = vector[lane] * lane_factor
            wider = [r * keys_factor if i == key else r for i, r in enumerate(reduction)]
            if not fits(tiles, grown):
                continue
            changed = {"vector_reduction": wider} if wider != reduction else {}
            if grown != vector:
                yield make("v", {"vector_common_parallel": grown, **changed})
            else:
                yield make("r", changed)


def _gpu(config: DispatchConfig) -> Iterator[Candidate]:
    generated = spirv_candidates(config) if config.spirv else gpu_candidates(config)
    for changed in generated:
        info = config.compilation_info(changed.lowering_config, changed.translation_info)
        yield Candidate(changed.name, info)


def _is_gpu(config: DispatchConfig) -> bool:
    return "workgroup = [" in config.lowering_config or config.spirv is not None


def _beyond_tiles(config: DispatchConfig, candidate: Candidate) -> bool:
    """Whether a GPU candidate changes more than IREE's tile lists."""
    own = tile_lists(config.lowering_config)
    changed = _configured(config, candidate)
    return changed.translation_info != config.translation_info or with_lists(
        changed.lowering_config, own
    ) != with_lists(config.lowering_config, own)


def _normalized(config: DispatchConfig, candidate: Candidate) -> tuple[str, str]:
    """A GPU candidate's lowering config as IREE prints it, and its translation info."""
    changed = _configured(config, candidate)
    return with_lists(changed.lowering_config, {}), changed.translation_info


def _configured(config: DispatchConfig, candidate: Candidate) -> DispatchConfig:
    """`config` with the candidate's lowering config and translation info."""
    info = candidate.compilation_info or config.compilation_info()
    inner = info.removeprefix("#iree_codegen.compilation_info<lowering_config = ")
    lowering, _, translation = inner.removesuffix(">").partition(", translation_info = ")
    return replace(config, lowering_config=lowering, translation_info=translation)


def combined(config: DispatchConfig, first: Candidate, second: Candidate) -> Candidate | None:
    """One candidate with the tile lists that `first` changes from IREE's config and those
    that `second` changes (None when both change the same list, or when the result does
    not fit: a distribution tile that is no multiple of its vector tile)."""
    default = tile_lists(config.lowering_config)
    if first.is_default or second.is_default:
        return None
    if _is_gpu(config) and (_beyond_tiles(config, first) or _beyond_tiles(config, second)):
        return None  # an intrinsic, staging or thread count is not merged
    a, b = changes(config, first), changes(config, second)
    if not a or not b or set(a) & set(b):
        return None
    merged = {**default, **a, **b}
    tiles, vector = merged.get("distribution", []), merged.get("vector_common_parallel", [])
    for tile, vec in zip(tiles, vector, strict=False):
        if tile and vec and tile % vec:
            return None
    text = with_lists(without_cache_tiles(config.lowering_config), {**a, **b})
    return Candidate(f"{first.name}_{second.name}", config.compilation_info(text))


LIST_LETTERS = {
    "distribution": "t",
    "vector_common_parallel": "v",
    "vector_reduction": "r",
    "workgroup": "w",
    "reduction": "k",
}
"""How a candidate's name shows each tile list it changes (a GPU `thread` tile follows its
`workgroup` tile and is not shown)."""


def changes(config: DispatchConfig, candidate: Candidate) -> dict[str, list[int]]:
    """The tile lists of IREE's configuration that `candidate` changes, with its values."""
    default = tile_lists(config.lowering_config)
    lists = tile_lists(candidate.compilation_info or "")
    return {k: v for k, v in lists.items() if k in default and v != default[k]}


def around(config: DispatchConfig, centre: Candidate) -> list[Candidate]:
    """The candidates one step from `centre` as round one's are from IREE's own (vector
    tiles may also grow past IREE's here: a build IREE refuses is dropped), each named by
    every tile list it changes from IREE's configuration (`t64x32_v16x8`); none around
    IREE's own, which round one covers."""
    if centre.is_default:
        return []
    if _is_gpu(config):  # named after the centre: the changes are not all tile lists
        own = _normalized(config, DEFAULT)
        return [
            Candidate(f"{centre.name}_{c.name}", c.compilation_info)
            for c in _gpu(_configured(config, centre))
            if _normalized(config, c) != own  # a step back to IREE's own
        ]
    centred = replace(
        config, lowering_config=with_lists(config.lowering_config, changes(config, centre))
    )
    generated = _cpu(centred, True)
    out = []
    for candidate in generated:
        changed = changes(config, candidate)
        if changed:
            name = "_".join(
                _name(LIST_LETTERS[k], changed[k]) for k in LIST_LETTERS if k in changed
            )
            out.append(Candidate(name, candidate.compilation_info))
    return out


def candidates(config: DispatchConfig, limit: int = 6) -> list[Candidate]:
    """`DEFAULT` and up to `limit` other distinct candidates for a dispatch."""
    generated = _gpu(config) if _is_gpu(config) else _cpu(config)
    out = [DEFAULT]
    seen: set[str | None] = {None, DEFAULT.name}
    for candidate in generated:
        fresh = candidate.compilation_info not in seen and candidate.name not in seen
        if fresh and len(out) <= limit:
            seen.update((candidate.compilation_info, candidate.name))
            out.append(candidate)
    return out
