"""GPU candidates around a tensor-core configuration (IREE 3.13's `TileAndFuse` with
mma.sync on sm_80), read and built through IREE's typed bindings: the intrinsic switched
to the other NVIDIA family of the same types, the pipelining depth, the staging, and the
subgroup tiles with the workgroup size following; a translation info without pipeline
options gets no pipelining candidates."""

from __future__ import annotations

from autotune_bridge.iree_configs import tile_lists
from autotune_model.gpu_candidates import gpu_candidates
from lowering.dispatch_configs import DispatchConfig

LOWERING = (
    "#iree_gpu.lowering_config<{convert_acc_gemm, mma_kind = "
    "#iree_gpu.mma_layout<NV_MMA_SYNC_F32_16x8x16_F16>, promote_operands = [0, 1], "
    "reduction = [0, 0, 4], subgroup = [2, 4, 0], workgroup = [64, 64, 0]}>"
)
OPTIONS = (
    "{gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = 2, "
    "no_reduce_shared_memory_bank_conflicts = false, use_igemm_convolution = false>}"
)


def translation(threads: int, options: str = OPTIONS) -> str:
    tail = f", {options}" if options else ""
    return (
        "#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> "
        f"workgroup_size = [{threads}, 1, 1] subgroup_size = 32{tail}>"
    )


def config(options: str = OPTIONS) -> DispatchConfig:
    return DispatchConfig("mm", "linalg.matmul", LOWERING, translation(128, options))


def test_tensor_core_candidates_are_built_typed_and_exactly():
    found = {c.name: c for c in gpu_candidates(config())}
    wmma = found["wmma"]
    assert "mma_layout<NV_WMMA_F32_16x16x16_F16>" in wmma.lowering_config
    assert tile_lists(wmma.lowering_config)["subgroup"] == [2, 2, 0]  # 4 x 8 = 2 x 16
    assert wmma.translation_info == translation(128)
    assert found["p0"].translation_info == translation(128).replace("stages = 2", "stages = 0")
    assert found["p3"].translation_info == translation(128).replace("stages = 2", "stages = 3")
    assert found["direct"].lowering_config == LOWERING.replace("promote_operands = [0, 1], ", "")
    # half the subgroup tile along N: twice the subgroups, twice the threads
    assert tile_lists(found["s2x2"].lowering_config)["subgroup"] == [2, 2, 0]
    assert found["s2x2"].translation_info == translation(256)
    assert found["s4x4"].translation_info == translation(64)
    assert found["s4x4_w128x64"].translation_info == translation(128)


def test_a_translation_info_without_pipeline_options_gets_no_pipelining_candidates():
    names = [c.name for c in gpu_candidates(config(options=""))]
    assert "wmma" in names and "direct" in names
    assert not [n for n in names if n.startswith("p")]
