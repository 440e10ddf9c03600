"""IREE's own configuration of each dispatch, and tile-size variants around it.

`iree-compile --compile-to=executable-configurations` shows the `lowering_config` IREE
picks for the root op of every dispatch (the op whose config has `distribution` tiles on
llvm-cpu, `workgroup` tiles on GPUs) and
the `translation_info` of its function. `default_configs` reads them from a flow-phase
module; `distribution_variants` makes configs with other distribution tiles, as
`#iree_codegen.compilation_info` text that `autotune_bridge.variants.tile_variants`
puts on a copy of the kernel.

IREE's SPIR-V code generation (vulkan) configures a kernel in another form: a
`#iree_codegen.lowering_config<tile_sizes = [[16, 256], [8, 8], [0, 0, 4]]>` of tiling
levels (BaseVectorize: workgroup, thread, reduction) and a translation info naming a
`#iree_gpu.spirv_pipeline<...>`, the `workgroup_size` and, on targets with subgroups, the
`subgroup_size` (`SpirvConfig`); the target's workgroup limits come with it
(`WorkgroupLimits`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from iree.compiler import ir

from autotune_bridge.iree_configs import tile_lists, with_lists, without_cache_tiles
from autotune_contracts.errors import DiagnosticError
from autotune_dialect.iree_ir import iree_context
from lowering.driver import failure_summary, first_error, run_iree_compile, target_flags


@dataclass(frozen=True)
class RootForm:
    """The root op as IREE configures it: its loops and the types of its operands (the
    kernel's own op may differ, e.g. with a unit dimension folded away)."""

    op_name: str
    indexing_maps: str
    iterator_types: str
    operand_types: tuple[str, ...]
    result_count: int

    @property
    def loop_count(self) -> int:
        return self.iterator_types.count("#linalg.iterator_type<")

    @property
    def loop_bounds(self) -> list[int | None]:
        """The trip count of each loop, as an operand's static shape gives it (None: no
        operand indexes the loop by itself, or its size is dynamic)."""
        bounds: list[int | None] = [None] * self.loop_count
        with iree_context():
            maps = ir.ArrayAttr(ir.Attribute.parse(self.indexing_maps))
            for attr, text in zip(maps, self.operand_types, strict=False):
                if not text.startswith("tensor<"):
                    continue
                shape = ir.RankedTensorType(ir.Type.parse(text)).shape
                for size, expr in zip(shape, ir.AffineMapAttr(attr).value.results, strict=True):
                    try:
                        loop = ir.AffineDimExpr(expr).position
                    except ValueError:
                        continue  # a compound index, e.g. a convolution's window
                    if size >= 0 and loop < len(bounds):
                        bounds[loop] = size
        return bounds


_SPIRV_TILES = re.compile(r"^#iree_codegen\.lowering_config<tile_sizes = \[(.*)\]>$")
_LEVEL = re.compile(r"\[([-\d, ]*)\]")
_SPIRV_PIPELINE = re.compile(r"pipeline = (?:#iree_gpu\.spirv_pipeline<(\w+)>|SPIRV(\w+))")
WORKGROUP_SIZE = re.compile(r"workgroup_size = \[(\d+), (\d+), (\d+)\]")
SUBGROUP_SIZE = re.compile(r"subgroup_size = (\d+)")
_PIPELINE_OPTIONS = re.compile(r", (\{.*\})>$")


@dataclass(frozen=True)
class SpirvConfig:
    """A configuration of IREE's SPIR-V code generation: the tile sizes of each level
    (`tile_sizes`; BaseVectorize: workgroup, thread, reduction; BaseDistribute: workgroup,
    thread; MatmulPromoteVectorize: one level, the workgroup tiles and the reduction
    tile), the pipeline (`BaseVectorize`), the workgroup size (x the innermost tiled
    loop), the subgroup size (None: not set) and the pipeline's options as IREE prints
    them (`{pipeline_depth = 1 : i64, store_stage = 1 : i64}`, or "")."""

    levels: tuple[tuple[int, ...], ...]
    pipeline: str
    workgroup_size: tuple[int, int, int]
    subgroup_size: int | None = None
    options: str = ""

    @classmethod
    def parse(cls, lowering_config: str, translation_info: str) -> SpirvConfig | None:
        """The SPIR-V configuration of a lowering config and translation info (None:
        another form; `pipeline = SPIRVBaseVectorize`, an older spelling, is read too)."""
        tiles = _SPIRV_TILES.match(lowering_config)
        pipeline = _SPIRV_PIPELINE.search(translation_info)
        size = WORKGROUP_SIZE.search(translation_info)
        if tiles is None or pipeline is None or size is None:
            return None
        levels = tuple(
            tuple(int(t) for t in level.split(",") if t.strip())
            for level in _LEVEL.findall(tiles[1])
        )
        subgroup = SUBGROUP_SIZE.search(translation_info)
        options = _PIPELINE_OPTIONS.search(translation_info)
        return cls(
            levels,
            pipeline[1] or pipeline[2],
            (int(size[1]), int(size[2]), int(size[3])),
            int(subgroup[1]) if subgroup else None,
            options[1] if options else "",
        )

    @property
    def lowering_config(self) -> str:
        """The lowering config as IREE 3.13 prints it."""
        levels = ", ".join("[" + ", ".join(str(t) for t in level) + "]" for level in self.levels)
        return f"#iree_codegen.lowering_config<tile_sizes = [{levels}]>"

    @property
    def translation_info(self) -> str:
        """The translation info as IREE 3.13 prints it (the pipeline always spelled
        `#iree_gpu.spirv_pipeline<...>`: 3.13 does not parse `SPIRVBaseVectorize`)."""
        x, y, z = self.workgroup_size
        text = (
            f"#iree_codegen.translation_info<pipeline = #iree_gpu.spirv_pipeline<"
            f"{self.pipeline}> workgroup_size = [{x}, {y}, {z}]"
        )
        if self.subgroup_size is not None:
            text += f" subgroup_size = {self.subgroup_size}"
        return text + (f", {self.options}>" if self.options else ">")


_TARGET_LIMITS = re.compile(
    r"max_workgroup_sizes = \[(\d+), (\d+), (\d+)\], max_thread_count_per_workgroup = "
    r"(\d+), max_workgroup_memory_bytes = (\d+)"
)


@dataclass(frozen=True)
class WorkgroupLimits:
    """What a GPU target allows a workgroup (its `#iree_gpu.target`): threads along each
    dimension, threads in all, and bytes of workgroup (shared) memory. IREE's SPIR-V
    code generation builds a configuration past them without a word (a 256-thread
    workgroup for a 128-thread target), so candidates keep within them."""

    sizes: tuple[int, int, int]
    threads: int
    memory: int

    @classmethod
    def of_module(cls, text: str) -> WorkgroupLimits | None:
        """The limits of the first GPU target a module names (None: none there)."""
        found = _TARGET_LIMITS.search(text)
        if found is None:
            return None
        sizes = (int(found[1]), int(found[2]), int(found[3]))
        return cls(sizes, int(found[4]), int(found[5]))


@dataclass(frozen=True)
class DispatchConfig:
    """IREE's choice for one export: its root op and the configs of both levels."""

    export: str
    root_op: str
    lowering_config: str
    translation_info: str
    root_form: RootForm | None = None
    limits: WorkgroupLimits | None = None

    @property
    def spirv(self) -> SpirvConfig | None:
        """The configuration of IREE's SPIR-V code generation (None: another target's)."""
        return SpirvConfig.parse(self.lowering_config, self.translation_info)

    @property
    def has_reduction_tile(self) -> bool:
        """Whether the config tiles a reduction loop (CPU `vector_reduction`, GPU
        `reduction`, SPIR-V a tile of a reduction loop at any level)."""
        spirv = self.spirv
        if spirv is not None and self.root_form is not None:
            kinds = self.root_form.iterator_types.split(",")
            reductions = {i for i, kind in enumerate(kinds) if "reduction" in kind}
            return any(
                t > 0 and i in reductions for level in spirv.levels for i, t in enumerate(level)
            )
        lists = tile_lists(self.lowering_config)
        return any(t > 0 for name in ("vector_reduction", "reduction") for t in lists.get(name, []))

    @property
    def distribution(self) -> list[int]:
        """The distribution (workgroup) tile size of each loop of the root op."""
        return tile_lists(self.lowering_config).get("distribution", [])

    def compilation_info(
        self, lowering_config: str | None = None, translation_info: str | None = None
    ) -> str:
        """`#iree_codegen.compilation_info` with the given lowering config and translation
        info (default: IREE's own)."""
        config = self.lowering_config if lowering_config is None else lowering_config
        translation = self.translation_info if translation_info is None else translation_info
        return (
            f"#iree_codegen.compilation_info<lowering_config = {config}, "
            f"translation_info = {translation}>"
        )

    def with_distribution(self, tiles: Sequence[int]) -> str:
        """The compilation info of IREE's config with other distribution tiles (the cache
        tiles, a level below, are dropped: IREE derives them)."""
        config = with_lists(self.lowering_config, {"distribution": tiles})
        return self.compilation_info(without_cache_tiles(config))


def default_configs(
    flow_text: str,
    target: str = "llvm-cpu",
    arch: str | None = None,
    extra_flags: Sequence[str] = (),
    from_flow: bool = True,
) -> dict[str, DispatchConfig]:
    """Export name -> IREE's configuration, for every dispatch of a flow-phase module that
    has a root op with distribution (GPU: workgroup) tiles (built with `extra_flags`);
    `from_flow=False`: of a model as its frontend wrote it, built from its input."""
    flags = [*target_flags(target, arch), *extra_flags]
    flags += ["--compile-from=flow"] if from_flow else []
    flags.append("--compile-to=executable-configurations")
    returncode, configured, log = run_iree_compile(flow_text, flags)
    if returncode != 0:
        raise DiagnosticError(first_error(log) or failure_summary(log, returncode))
    configs: dict[str, DispatchConfig] = {}
    limits = WorkgroupLimits.of_module(configured.decode())
    with iree_context():
        module = ir.Module.parse(configured.decode())

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.func" and "translation_info" in op.attributes:
                root = configured_root(op)
                if root is not None:
                    name = ir.StringAttr(op.attributes["sym_name"]).value
                    configs[name] = DispatchConfig(
                        name,
                        root.name,
                        str(root.attributes["lowering_config"]),
                        str(op.attributes["translation_info"]),
                        _root_form(root),
                        limits,
                    )
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return configs


_SPIRV_ROOT = re.compile(r"tile_sizes = \[\[\d")
"""A SPIR-V lowering config with workgroup tiles (IREE's SubgroupReduce also configures
ops with none, `tile_sizes = [[], [0, 512]]`)."""


def configured_root(function: ir.Operation) -> ir.Operation | None:
    """The op of a configured kernel whose `lowering_config` has distribution (GPU:
    workgroup) tiles: the one IREE's configuration is built around."""
    found: list[ir.Operation] = []
    info = (
        function.attributes["translation_info"] if "translation_info" in function.attributes else ""
    )
    spirv = "spirv_pipeline<" in str(info)

    def visit(op: ir.Operation) -> ir.WalkResult:
        if "lowering_config" in op.attributes:
            config = str(op.attributes["lowering_config"])
            tiled = "distribution = [" in config or "workgroup = [" in config  # CPU, GPU
            if tiled or (spirv and _SPIRV_ROOT.search(config)):
                found.append(op)
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    return found[0] if found else None


def _root_form(root: ir.Operation) -> RootForm | None:
    """The form of a configured linalg op with loops (None: another kind of op)."""
    if "indexing_maps" not in root.attributes or "iterator_types" not in root.attributes:
        return None
    return RootForm(
        root.name,
        str(root.attributes["indexing_maps"]),
        str(root.attributes["iterator_types"]),
        tuple(str(v.type) for v in root.operands),
        len(root.results),
    )


def distribution_variants(config: DispatchConfig, count: int = 2) -> dict[str, str]:
    """Up to `count` compilation infos around IREE's: the distribution tile of the first
    tiled loop halved and doubled (then the next loop's), named by their tiles."""
    tiles = config.distribution
    out: dict[str, str] = {}
    for axis, tile in enumerate(tiles):
        if tile <= 0:
            continue
        for scaled in (tile // 2, tile * 2):
            if scaled < 1 or len(out) >= count:
                continue
            new = list(tiles)
            new[axis] = scaled
            out["x".join(str(t) for t in new if t)] = config.with_distribution(new)
    return out
