"""IREE's own configuration of each dispatch, and tile-size variants around it.

`iree-compile --compile-to=executable-configurations` shows the `lowering_config` IREE
picks for the root op of every dispatch (the op whose config has `distribution` tiles on
llvm-cpu, `workgroup` tiles on GPUs) and
the `translation_info` of its function. `default_configs` reads them from a flow-phase
module; `distribution_variants` makes configs with other distribution tiles, as
`#iree_codegen.compilation_info` text that `autotune_dialect.variants.tile_variants`
puts on a copy of the kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iree.compiler import ir

from autotune_contracts.errors import DiagnosticError
from autotune_dialect.iree_configs import tile_lists, with_lists, without_cache_tiles
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


@dataclass(frozen=True)
class DispatchConfig:
    """IREE's choice for one export: its root op and the configs of both levels."""

    export: str
    root_op: str
    lowering_config: str
    translation_info: str
    root_form: RootForm | None = None

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
) -> dict[str, DispatchConfig]:
    """Export name -> IREE's configuration, for every dispatch of a flow-phase module that
    has a root op with distribution (GPU: workgroup) tiles (built with `extra_flags`)."""
    flags = [*target_flags(target, arch), *extra_flags, "--compile-from=flow"]
    flags.append("--compile-to=executable-configurations")
    returncode, configured, log = run_iree_compile(flow_text, flags)
    if returncode != 0:
        raise DiagnosticError(first_error(log) or failure_summary(log, returncode))
    configs: dict[str, DispatchConfig] = {}
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
                    )
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return configs


def configured_root(function: ir.Operation) -> ir.Operation | None:
    """The op of a configured kernel whose `lowering_config` has distribution (GPU:
    workgroup) tiles: the one IREE's configuration is built around."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if "lowering_config" in op.attributes:
            config = str(op.attributes["lowering_config"])
            if "distribution = [" in config or "workgroup = [" in config:  # CPU, GPU
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
