"""`tune-model --target vulkan`: IREE's SPIR-V configuration read (tiling levels, the
pipeline, workgroup and subgroup sizes, the target's workgroup limits), candidates
around it that keep the threads to the tiles and to the target's limits and that IREE
builds, and a tuned module that computes the model on the vulkan device.

Reading and building need no device; the test that runs the tuned module is skipped,
with the reason, where no Vulkan device can be opened (Mesa's llvmpipe runs it on a
machine without a GPU: what it proves is the plumbing, never speed)."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest
from small_models import MLP, SMALL, assert_close, fake_benchmark, mlp_inputs, mlp_reference
from test_vulkan import vulkan_problem

from autotune_dialect.iree_ir import iree_context
from autotune_model import tune_model
from autotune_model.candidates import around, candidates
from autotune_model.executors import SerialExecutor
from autotune_model.report import FAILED, KEPT
from autotune_model.spirv_candidates import PROMOTED, workgroup_size
from autotune_model.tuning_setup import flow_phase
from autotune_runtime.session import load
from lowering.dispatch_configs import (
    DispatchConfig,
    SpirvConfig,
    WorkgroupLimits,
    default_configs,
)
from lowering.driver import run_iree_compile, target_flags

BASELINE = WorkgroupLimits((128, 128, 64), 128, 16384)
"""The limits of IREE's default Vulkan target, vp_android_baseline_2022."""


@pytest.fixture(scope="module")
def configs() -> dict[str, DispatchConfig]:
    """IREE's configurations of the MLP's two matmuls for the default Vulkan target."""
    return default_configs(flow_phase(MLP, "vulkan", None, "mlp.mlir"), "vulkan")


def spirv_of(config: DispatchConfig, compilation_info: str) -> SpirvConfig:
    """The SPIR-V configuration a candidate's compilation info gives."""
    inner = compilation_info.removeprefix("#iree_codegen.compilation_info<lowering_config = ")
    lowering, _, translation = inner.removesuffix(">").partition(", translation_info = ")
    spirv = SpirvConfig.parse(lowering, translation)
    assert spirv is not None, compilation_info
    return spirv


def matmul(m: int, n: int, k: int, compilation_info: str) -> str:
    return f"""func.func @mm(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %c = linalg.matmul {{compilation_info = {compilation_info}}} ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %c : tensor<{m}x{n}xf32>
}}"""


def built_local_size(text: str, arch: str | None = None) -> tuple[int, ...]:
    """The SPIR-V `LocalSize` of the one kernel IREE builds from `text` (asserting it
    builds)."""
    flags = [*target_flags("vulkan", arch), "--compile-to=executable-targets"]
    returncode, out, log = run_iree_compile(text, flags)
    assert returncode == 0 and "error:" not in log, log
    found = re.search(r'"LocalSize", (\d+), (\d+), (\d+)', out.decode())
    assert found is not None
    return tuple(int(v) for v in found.groups())


def loop_sizes(export: str) -> tuple[int, int, int]:
    """M, N, K of a matmul dispatch named `..._matmul_MxNxK_f32`."""
    found = re.search(r"matmul_(\d+)x(\d+)x(\d+)_", export)
    assert found is not None
    m, n, k = (int(v) for v in found.groups())
    return m, n, k


def test_iree_s_spirv_configuration_is_read(configs):
    """IREE configures the MLP's matmuls for Vulkan in the SPIR-V form; before it was
    read, every dispatch was skipped ("IREE gave it no tile configuration")."""
    assert len(configs) == 2
    first, second = (configs[name] for name in sorted(configs))
    assert first.spirv == SpirvConfig(((16, 256), (8, 8), (0, 0, 4)), "BaseVectorize", (32, 2, 1))
    assert second.spirv == SpirvConfig(((16, 128), (4, 8), (0, 0, 8)), "BaseVectorize", (16, 4, 1))
    for config in configs.values():
        assert config.limits == BASELINE and config.has_reduction_tile
        assert config.root_form is not None and config.root_form.loop_bounds[0] == 16
        spirv = config.spirv
        assert spirv is not None
        assert spirv.lowering_config == config.lowering_config  # written as IREE prints it
        assert spirv.translation_info == config.translation_info


def test_a_subgroup_size_pipeline_options_and_the_older_spelling_are_read_and_written():
    from iree.compiler import ir

    read = SpirvConfig.parse(
        "#iree_codegen.lowering_config<tile_sizes = [[16, 64, 16]]>",
        "#iree_codegen.translation_info<pipeline = SPIRVMatmulPromoteVectorize "
        "workgroup_size = [16, 8, 1] subgroup_size = 32, {pipeline_depth = 2 : i64, "
        "store_stage = 0 : i64}>",
    )
    assert read == SpirvConfig(
        ((16, 64, 16),),
        "MatmulPromoteVectorize",
        (16, 8, 1),
        32,
        "{pipeline_depth = 2 : i64, store_stage = 0 : i64}",
    )
    written = read.translation_info
    assert "#iree_gpu.spirv_pipeline<MatmulPromoteVectorize>" in written  # 3.13's spelling
    with iree_context():
        assert str(ir.Attribute.parse(written)) == written
    assert SpirvConfig.parse("#iree_cpu.lowering_config<distribution = [8]>", written) is None


def test_candidates_are_distinct_keep_threads_to_tiles_and_iree_builds_them(configs):
    for export, config in configs.items():
        found = candidates(config, limit=6)
        assert found[0].is_default and len(found) == 7
        names = [c.name for c in found]
        infos = [c.compilation_info for c in found]
        assert len(set(names)) == len(names) and len(set(infos)) == len(infos)
        assert {n[0] for n in names[1:]} >= {"w", "t", "k"}  # each kind of change
        m, n, k = loop_sizes(export)
        for candidate in found[1:]:
            assert candidate.compilation_info is not None
            spirv = spirv_of(config, candidate.compilation_info)
            assert spirv != config.spirv
            assert math.prod(spirv.workgroup_size) <= BASELINE.threads
            if spirv.pipeline == PROMOTED:
                tm, tn, tk = spirv.levels[0]
                assert (tm * tk + tk * tn) * 4 <= BASELINE.memory and k % tk == 0
            else:  # one thread per thread tile
                assert workgroup_size(spirv.levels[0], spirv.levels[1]) == spirv.workgroup_size
            assert spirv.levels[0][0] <= m and spirv.levels[0][1] <= n
            # IREE builds it, with the threads the candidate asks for.
            text = matmul(m, n, k, candidate.compilation_info)
            assert built_local_size(text) == spirv.workgroup_size, candidate.name


def test_a_configuration_whose_threads_do_not_follow_its_tiles_gets_reduction_candidates_only(
    configs,
):
    config = configs[min(configs)]
    odd = config.translation_info.replace("[32, 2, 1]", "[16, 2, 1]")
    found = candidates(replace(config, translation_info=odd), limit=6)
    assert [c.name for c in found[1:]] == ["k2", "k8"]


def test_no_candidate_asks_for_more_threads_than_the_target_allows(configs):
    config = configs[min(configs)]  # IREE's own: 64 threads
    tight = replace(config, limits=WorkgroupLimits((64, 64, 64), 64, 16384))
    found = candidates(tight, limit=20)
    assert len(found) > 3
    for candidate in found[1:]:
        assert candidate.compilation_info is not None
        assert math.prod(spirv_of(config, candidate.compilation_info).workgroup_size) <= 64
    assert "t4x8" in {c.name for c in candidates(config, limit=20)}  # 128 threads
    assert "t4x8" not in {c.name for c in found}


def test_a_search_step_around_a_spirv_candidate_stays_valid(configs):
    config = configs[min(configs)]
    centre = next(c for c in candidates(config, limit=6) if c.name == "t4x8")
    steps = around(config, centre)
    assert steps and all(s.name.startswith("t4x8_") for s in steps)
    for step in steps:
        assert step.compilation_info is not None
        spirv = spirv_of(config, step.compilation_info)
        assert math.prod(spirv.workgroup_size) <= BASELINE.threads
        if spirv.pipeline != PROMOTED:
            assert workgroup_size(spirv.levels[0], spirv.levels[1]) == spirv.workgroup_size


def test_a_target_that_stages_operands_gets_staged_candidates_that_build():
    """rdna3: IREE picks MatmulPromoteVectorize; the candidates change its tiles and its
    software pipelining and keep its threads."""
    flow = flow_phase(MLP, "vulkan", "rdna3", "mlp.mlir")
    configs = default_configs(flow, "vulkan", "rdna3")
    export = min(configs)
    config = configs[export]
    assert config.spirv is not None and config.spirv.pipeline == PROMOTED
    found = candidates(config, limit=4)
    assert [c.name for c in found[1:]] == ["k8", "w8x64", "d3", "k32"]
    for candidate in found[1:]:
        assert candidate.compilation_info is not None
        spirv = spirv_of(config, candidate.compilation_info)
        assert spirv.workgroup_size == config.spirv.workgroup_size
        text = matmul(*loop_sizes(export), candidate.compilation_info)
        assert built_local_size(text, "rdna3") == spirv.workgroup_size


_PROBLEM = vulkan_problem()


@pytest.mark.skipif(_PROBLEM is not None, reason=str(_PROBLEM))
def test_tune_model_on_vulkan_keeps_the_faster_candidates_and_computes_the_mlp():
    """With times that favour `t*` (thread tile) candidates, those are kept, none fails,
    and the tuned module gives numpy's result on the vulkan device."""
    options = replace(SMALL, target="vulkan", candidates=4)
    tuned = tune_model(MLP, options, executor=SerialExecutor(), benchmark_job=fake_benchmark)
    report = tuned.report
    assert not report.skipped
    assert len(report.dispatches) == 2
    for dispatch in report.dispatches:
        fates = {c.name: c.fate for c in dispatch.candidates}
        assert not set(fates.values()) & set(FAILED), fates
        kept = [name for name, fate in fates.items() if fate == KEPT]
        assert kept and all(name.startswith("t") for name in kept), fates
    args = mlp_inputs()
    with load(tuned.vmfb, device="vulkan", cache=False) as module:
        assert_close(module.function("mlp")(*args), mlp_reference(args))
