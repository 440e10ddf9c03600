"""Candidate configurations of a dispatch, around the one IREE picks.

IREE's own choice is always candidate 0 (`DEFAULT`: no `compilation_info`, the compiler
decides as it would anyway), and the reference for numerics. The others change the tile
sizes of IREE's `lowering_config` on the dispatch's root op:

- llvm-cpu (`#iree_cpu.lowering_config`): the `distribution` (workgroup) tile of each
  tiled loop halved and doubled, one loop at a time and both first two loops together;
  a tile stays a multiple of the loop's vector tile. The cache level is left to IREE.
- cuda (`#iree_gpu.lowering_config`): the `reduction` tile halved and doubled, and the
  `workgroup` tile of a parallel loop doubled together with its `thread` tile (so the
  number of threads, IREE's `workgroup_size`, stays right).

Candidates are generated apart from compiling and benchmarking them (`bench`,
`pipeline`): a config that IREE cannot build is dropped there, not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from lowering.dispatch_configs import DispatchConfig

_LIST = re.compile(r"\b(\w+) = \[([-\d, ]*)\]")


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


def tile_lists(config: str) -> dict[str, list[int]]:
    """The integer lists of a lowering config's text (`distribution`, `workgroup`, ...)."""
    return {
        m.group(1): [int(t) for t in m.group(2).split(",") if t.strip()]
        for m in _LIST.finditer(config)
    }


def with_lists(config: str, lists: dict[str, Sequence[int]]) -> str:
    """A lowering config's text with some of its lists replaced."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in lists:
            return match.group()
        return f"{name} = [{', '.join(str(t) for t in lists[name])}]"

    return _LIST.sub(replace, config)


def _name(prefix: str, tiles: Sequence[int]) -> str:
    return prefix + "x".join(str(t) for t in tiles if t)


def _cpu(config: DispatchConfig) -> Iterator[Candidate]:
    lists = tile_lists(config.lowering_config)
    tiles = lists.get("distribution", [])
    vector = lists.get("vector_common_parallel", [0] * len(tiles))
    axes = [i for i, t in enumerate(tiles) if t > 0]

    def valid(new: list[int]) -> bool:
        return all(
            t > 0
            and (i >= len(vector) or vector[i] == 0 or (t >= vector[i] and t % vector[i] == 0))
            for i, t in enumerate(new)
            if tiles[i] > 0
        )

    def make(new: list[int]) -> Candidate:
        return Candidate(_name("t", new), config.with_distribution(new))

    for axis in axes:
        for factor in (0.5, 2):
            new = list(tiles)
            new[axis] = int(tiles[axis] * factor)
            if valid(new):
                yield make(new)
    if len(axes) >= 2:
        for factor in (0.5, 2):
            new = list(tiles)
            for axis in axes[:2]:
                new[axis] = int(tiles[axis] * factor)
            if valid(new):
                yield make(new)


def _gpu(config: DispatchConfig) -> Iterator[Candidate]:
    lists = tile_lists(config.lowering_config)
    workgroup = lists.get("workgroup", [])
    thread = lists.get("thread", [0] * len(workgroup))
    reduction = lists.get("reduction", [])

    def make(name: str, changed: dict[str, list[int]]) -> Candidate:
        return Candidate(name, config.compilation_info(with_lists(config.lowering_config, changed)))

    for axis, tile in enumerate(reduction):
        if tile > 0:
            for factor in (0.5, 2):
                new = list(reduction)
                new[axis] = int(tile * factor)
                if new[axis] >= 1:
                    yield make(_name("k", new), {"reduction": new})
    for axis, tile in enumerate(workgroup):
        if tile > 1 and axis < len(thread) and thread[axis] > 0:
            new_workgroup, new_thread = list(workgroup), list(thread)
            new_workgroup[axis] *= 2
            new_thread[axis] *= 2
            yield make(
                _name("w", new_workgroup), {"workgroup": new_workgroup, "thread": new_thread}
            )


def candidates(config: DispatchConfig, limit: int = 6) -> list[Candidate]:
    """`DEFAULT` and up to `limit` other distinct candidates for a dispatch."""
    generated = _gpu(config) if "workgroup = [" in config.lowering_config else _cpu(config)
    out = [DEFAULT]
    seen = {None}
    for candidate in generated:
        if candidate.compilation_info not in seen and len(out) <= limit:
            seen.add(candidate.compilation_info)
            out.append(candidate)
    return out
