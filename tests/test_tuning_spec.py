"""IREE tuning specs: `tune-model`'s frozen configurations written as a spec that the stock
`iree-compile --iree-codegen-tuning-spec-path` applies to the model as the frontend wrote
it (`spec_out`), a matcher that would configure two dispatches refused, and a spec read
back as the incumbents the candidates must beat (`spec_in`).

Benchmarks are faked (`small_models.fake_benchmark`): nothing here is timed."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from conftest import DATA
from iree.compiler import ir
from small_models import MLP, assert_close, fake_benchmark, mlp_inputs, mlp_reference

from autotune_contracts.errors import DiagnosticError
from autotune_dialect.iree_ir import iree_context
from autotune_model import TuneOptions, tune_model
from autotune_model.candidates import candidates
from autotune_model.flow_builds import FROM_FLOW
from autotune_model.report import REFERENCE
from autotune_model.tuning_setup import flow_phase, input_type_flags, worth_tuning
from autotune_model.tuning_spec import SPEC_FLAG, build_spec
from autotune_runtime.session import load
from lowering.dispatch_configs import default_configs
from lowering.driver import compile_lowered

FROZEN = TuneOptions(
    candidates=3, top_k=1, time_model=False, combine=False, freeze=True, spec_out=True
)


def configurations(text: str, flags: list[str]) -> dict[str, str]:
    """Each function's configured root op's `lowering_config`, where the stock iree-compile
    builds `text` (a model as written; with `FROM_FLOW` among `flags`, a flow-phase module)
    with `flags` to `--compile-to=executable-configurations`."""
    given = [flag for flag in flags if flag not in FROM_FLOW]
    configs = default_configs(text, extra_flags=given, from_flow=len(given) < len(flags))
    return {name: config.lowering_config for name, config in configs.items()}


def test_the_spec_of_a_frozen_mlp_gives_the_stock_build_its_configurations(tmp_path):
    # The MLP's two dispatches have the same root op (a matmul) at other sizes.
    tuned = tune_model(MLP, FROZEN, benchmark_job=fake_benchmark)
    assert tuned.spec is not None
    spec = tmp_path / "spec.mlir"
    spec.write_text(tuned.spec)
    flags = [*input_type_flags(MLP), *tuned.report.base.flags]
    applied = configurations(MLP, [*flags, f"{SPEC_FLAG}={spec}"])
    stock = configurations(MLP, flags)
    frozen = configurations(tuned.lowered, [*flags, *FROM_FLOW])
    dispatches = tuned.report.dispatches
    assert len(dispatches) == 2
    for dispatch in dispatches:
        (choice,) = dispatch.frozen
        assert choice.variant != "default"  # the fake times keep a `t*` candidate
        runs = f"{dispatch.export}__{choice.variant}"
        assert f"@{runs}(" in tuned.lowered  # what the frozen module dispatches
        assert applied[dispatch.export] == frozen[runs] != stock[dispatch.export]
    assert tuned.spec.index("// IREE tuning spec") == 0
    assert f"{SPEC_FLAG}=THIS_FILE" in tuned.spec and "--mlir-disable-threading" in tuned.spec
    # the same results as the frozen module and numpy
    built = compile_lowered(MLP, extra_args=[*flags, f"{SPEC_FLAG}={spec}"])
    args = mlp_inputs()
    with load(built, device="local-sync", cache=False) as module:
        with_spec = module.function("mlp")(*args)
    with load(tuned.vmfb, device="local-sync", cache=False) as module:
        np.testing.assert_array_equal(with_spec, module.function("mlp")(*args))
    assert_close(with_spec, mlp_reference(args))


# Two matmuls of one shape, types and maps, whose results go to other work: two dispatches
# whose root ops no matcher tells apart.
TWINS = """func.func @twins(%x: tensor<16x64xf32>, %w1: tensor<64x32xf32>, %w2: tensor<64x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m2 = linalg.matmul ins(%x, %w2 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m1 : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.maximumf %a, %zero : f32
    linalg.yield %y : f32
  } -> tensor<16x32xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m2 : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<16x32xf32>
  return %r, %n : tensor<16x32xf32>, tensor<16x32xf32>
}
"""


# TWINS and a third matmul, of other sizes, over the first one's result.
TRIPLETS = (
    TWINS.replace("%w2: tensor<64x32xf32>)", "%w2: tensor<64x32xf32>, %w3: tensor<32x8xf32>)")
    .replace(
        "-> (tensor<16x32xf32>, tensor<16x32xf32>) {",
        "-> (tensor<16x8xf32>, tensor<16x32xf32>) {",
    )
    .replace(
        "  return %r, %n : tensor<16x32xf32>, tensor<16x32xf32>",
        "  %e3 = tensor.empty() : tensor<16x8xf32>\n"
        "  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x8xf32>) -> tensor<16x8xf32>\n"
        "  %m3 = linalg.matmul ins(%r, %w3 : tensor<16x32xf32>, tensor<32x8xf32>) "
        "outs(%f3 : tensor<16x8xf32>) -> tensor<16x8xf32>\n"
        "  return %m3, %n : tensor<16x8xf32>, tensor<16x32xf32>",
    )
)


def test_a_matcher_that_would_configure_two_dispatches_is_refused(tmp_path):
    """One of two matmuls no matcher tells apart is given another configuration: its
    matcher is refused, naming both, and the spec leaves both at IREE's configuration; it
    still carries the third matmul's. A spec that would carry nothing is refused."""
    flow = flow_phase(TRIPLETS, "llvm-cpu", None, "triplets.mlir")
    configs = default_configs(flow)
    matmuls = sorted(e for e in configs if "matmul" in e)
    (third,) = [e for e in matmuls if "16x8x32" in e]
    first, second = [e for e in matmuls if e != third]
    other, changed = (candidates(configs[e], 2)[1].compilation_info for e in (first, third))
    assert other is not None and changed is not None
    text, left = build_spec(flow, "llvm-cpu", None, [], {first: other, third: changed})
    assert left == [
        f"{first}: its matcher would also configure {second}, which keeps IREE's own "
        "configuration; no matcher tells the two apart (the same root op, its sizes and "
        "types), so the spec leaves it at IREE's configuration"
    ]
    assert text.count("transform.iree.match.contraction") == 1
    path = tmp_path / "spec.mlir"
    path.write_text(text)
    applied = configurations(TRIPLETS, [f"{SPEC_FLAG}={path}"])
    assert applied[first] == configs[first].lowering_config
    assert applied[second] == configs[second].lowering_config
    assert applied[third] != configs[third].lowering_config
    with iree_context():
        assert f"lowering_config = {applied[third]}" in str(ir.Attribute.parse(changed))
    with pytest.raises(DiagnosticError, match=f"would carry no dispatch: {first}: its matcher"):
        build_spec(flow, "llvm-cpu", None, [], {first: other})
    # both given the same configuration: one matcher serves both
    text, left = build_spec(flow, "llvm-cpu", None, [], {first: other, second: other})
    assert left == [] and text.count("transform.iree.match.contraction") == 2


def test_a_spec_in_is_the_incumbent_of_the_dispatch_it_configures(tmp_path):
    flow = flow_phase(MLP, "llvm-cpu", None, "mlp.mlir")
    configs = default_configs(flow)
    export = sorted(configs)[0]
    incumbent = candidates(configs[export], 2)[1].compilation_info
    assert incumbent is not None
    text, _ = build_spec(flow, "llvm-cpu", None, [], {export: incumbent})
    spec = tmp_path / "given.mlir"
    spec.write_text(text)
    options = replace(FROZEN, spec_in=str(spec), spec_out=False, freeze=False)
    tuned = tune_model(MLP, options, benchmark_job=fake_benchmark)
    by_export = {d.export: d for d in tuned.report.dispatches}
    (reference,) = [c for c in by_export[export].candidates if c.fate == REFERENCE]
    assert reference.detail == f"the tuning spec {spec}: {incumbent}"
    (other,) = [e for e in by_export if e != export]
    (plain,) = [c for c in by_export[other].candidates if c.fate == REFERENCE]
    assert plain.detail is None
    assert any(f"the tuning spec {spec} configures {export}" in n for n in tuned.report.notes)
    # IREE's own variant of that dispatch in the module built is the spec's configuration
    built = configurations(tuned.lowered, FROM_FLOW)
    with iree_context():
        assert f"lowering_config = {built[export]}" in str(ir.Attribute.parse(incumbent))
    assert built[other] == default_configs(flow)[other].lowering_config


def test_the_spec_of_a_real_model_configures_what_a_spec_can_reach(tmp_path):
    model = (DATA / "models" / "vit_bf16_flax.mlir").read_text()
    flags = input_type_flags(model)
    flow = flow_phase(model, "llvm-cpu", None, "vit_bf16_flax.mlir")
    configs = default_configs(flow)
    chosen = {}
    for export, config in configs.items():
        generated = candidates(config, 2) if worth_tuning(config, TuneOptions()) else []
        if len(generated) > 1 and generated[1].compilation_info is not None:
            chosen[export] = generated[1].compilation_info
    text, left = build_spec(flow, "llvm-cpu", None, [], chosen)
    # a batch-1 convolution and bf16 reductions are configured in a form that IREE makes
    # after it applies a spec
    unmatched = sorted(line.split(":")[0] for line in left)
    assert unmatched == [
        "main_dispatch_1_conv_4x4x64x8x8x3_bf16",
        "main_dispatch_3_reduction_17x64_f32",
        "main_dispatch_4_reduction_17x64_f32",
    ]
    carried = [e for e in chosen if e not in unmatched]
    assert len(carried) == 9
    path = tmp_path / "spec.mlir"
    path.write_text(text)
    applied = configurations(model, [*flags, f"{SPEC_FLAG}={path}"])
    stock = configurations(model, flags)
    with iree_context():
        for export in carried:
            info = str(ir.Attribute.parse(chosen[export]))
            assert f"lowering_config = {applied[export]}" in info
            assert applied[export] != stock[export]
        for export in unmatched:
            assert applied[export] == stock[export]


def tune_model_command(monkeypatch, tmp_path, benchmark) -> tuple[Callable, list[str]]:
    """`iree-autotune`'s entry point, run in this process with `benchmark` in place of
    timing, and a tune-model command of the MLP written to `tmp_path` (3 candidates, 1
    kept, the model not timed)."""
    from autotune_cli.main import main
    from autotune_model import pipeline

    monkeypatch.setattr(
        pipeline, "tune_model", functools.partial(tune_model, benchmark_job=benchmark)
    )
    model = tmp_path / "mlp.mlir"
    model.write_text(MLP)
    return main, [
        "tune-model",
        str(model),
        "--candidates",
        "3",
        "--top-k",
        "1",
        "--no-timing",
        "-q",
    ]


def test_tune_model_writes_the_spec_and_reads_one(tmp_path, monkeypatch, capsys):
    main, common = tune_model_command(monkeypatch, tmp_path, fake_benchmark)
    out, spec = tmp_path / "mlp.vmfb", tmp_path / "mlp.spec.mlir"
    assert main([*common, "-o", str(out), "--freeze", "--spec-out", str(spec)]) == 0
    assert f"wrote {out} and {tmp_path / 'mlp.tune.json'} and {spec}" in capsys.readouterr().out
    written = spec.read_text()
    assert written.startswith("// IREE tuning spec") and "@__kernel_config" in written
    # read back: a missing spec is refused before any work, the written one starts a run
    missing = tmp_path / "missing.mlir"
    assert main([*common, "-o", str(tmp_path / "b.vmfb"), "--spec-in", str(missing)]) == 1
    assert f"cannot read {missing}" in capsys.readouterr().err
    assert not (tmp_path / "b.vmfb").exists()
    assert main([*common, "-o", str(tmp_path / "c.vmfb"), "--spec-in", str(spec)]) == 0
    saved = json.loads((tmp_path / "c.tune.json").read_text())
    assert any(f"the tuning spec {spec} configures" in n for n in saved["notes"])
    assert spec.read_text() == written  # an input is never written over


def iree_fastest(job):
    """Times in which IREE's own configuration beats every candidate."""
    return [
        replace(m, times_ns=[1000 if m.candidate.name == "default" else 2000])
        for m in fake_benchmark(job)
    ]


def test_where_nothing_is_kept_the_spec_configures_nothing(tmp_path, monkeypatch, capsys):
    """A frozen model that keeps IREE's configuration of every dispatch runs as the stock
    build does: `--spec-out` writes a spec that configures nothing (the stock iree-compile
    builds the stock configurations with it), says so and succeeds; `spec` writes the
    same from its report."""
    main, args = tune_model_command(monkeypatch, tmp_path, iree_fastest)
    out, spec = tmp_path / "mlp.vmfb", tmp_path / "mlp.spec.mlir"
    assert main([*args, "-o", str(out), "--freeze", "--spec-out", str(spec)]) == 0
    assert f"and {spec}" in capsys.readouterr().out
    written = spec.read_text()
    assert "configures no dispatch: no dispatch keeps a tuned configuration" in written
    assert "compilation_info" not in written and "foreach_match" not in written
    report = json.loads((tmp_path / "mlp.tune.json").read_text())
    assert any("the tuning spec configures no dispatch" in n for n in report["notes"])
    flags = [*input_type_flags(MLP), *report["base"]["flags"]]
    assert configurations(MLP, [*flags, f"{SPEC_FLAG}={spec}"]) == configurations(MLP, flags)
    again = tmp_path / "again.spec.mlir"
    command = ["spec", args[1], "--report", str(tmp_path / "mlp.tune.json")]
    assert main([*command, "-o", str(again)]) == 0
    assert again.read_text() == written


def test_a_compile_that_applies_a_spec_runs_on_one_thread():
    """iree-compile 3.13 can hang loading a spec while it configures executables on
    several threads: every compile given a spec, and the command a spec's header names,
    compile on one thread; others keep their threads."""
    from lowering.driver import SERIAL, _spec_loaded_on_one_thread

    given = ["--iree-hal-target-device=local", f"{SPEC_FLAG}=s.mlir"]
    assert _spec_loaded_on_one_thread(given) == [*given, SERIAL]
    assert _spec_loaded_on_one_thread([*given, SERIAL]) == [*given, SERIAL]
    assert _spec_loaded_on_one_thread(given[:1]) == given[:1]


def test_a_root_op_whose_body_reads_values_from_outside_it_gets_no_matcher():
    """MobileNet's depthwise weights gathered inside a `linalg.generic` body from a
    constant tensor and index constants defined outside the op: a DAG matcher of that
    body named values it does not declare, and IREE refused the whole probe spec (`use of
    undeclared SSA value name`); such an op is refused with the values named, and the
    others keep their matchers."""
    from autotune_model.tuning_spec import _captured

    body = (
        '%r0 = "linalg.generic"(%in0, %in1) ({\n'
        "^bb0(%a: f32, %b: f32, %o: f32):\n"
        '  %1 = "linalg.index"() <{dim = 0 : i64}> : () -> index\n'
        '  %2 = "arith.divsi"(%1, %202) : (index, index) -> index\n'
        '  %3 = "tensor.extract"(%209, %2) : (tensor<1280xf32>, index) -> f32\n'
        '  %4 = "arith.mulf"(%a, %3) : (f32, f32) -> f32\n'
        '  "linalg.yield"(%4) : (f32) -> ()\n'
        "}) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>"
    )
    assert _captured(body) == ["%202", "%209"]
    assert _captured(body.replace("%202", "%1").replace("%209", "%in1")) == []
    # an op of several results (IREE's attention: `%r0, %r1, %r2 = ...`) defines them all
    several = body.replace('%r0 = "linalg.generic"', '%r0, %r1, %r2 = "linalg.generic"')
    assert _captured(several.replace("%202", "%r1").replace("%209", "%r2")) == []


def test_twins_of_a_frozen_model_run_one_candidate_so_that_its_spec_carries_them():
    """The two matmuls of TWINS (one root op, sizes and types) timed apart: the first runs
    candidate 1 fastest (400 against 450), the second candidate 2 (420 against 440). With
    `--spec-out`, both run candidate 1, whose times sum the least over the two (840
    against 870), and the spec carries both (before, neither)."""
    times = {0: [1000, 400, 450], 1: [1000, 440, 420]}  # per matmul: IREE's own, c1, c2
    names: dict[int, str] = {}

    def twin_times(job):
        out = fake_benchmark(job)
        if job.dispatch in matmuls:
            for k, measured in enumerate(out):
                measured.times_ns = [times[matmuls.index(job.dispatch)][k] if k < 3 else 2000]
                names[k] = measured.candidate.name
        return out

    flow = flow_phase(TWINS, "llvm-cpu", None, "twins.mlir")
    matmuls = sorted(e for e in default_configs(flow) if "matmul" in e)
    tuned = tune_model(TWINS, replace(FROZEN, top_k=2), benchmark_job=twin_times)
    frozen = {d.export: [f.variant for f in d.frozen] for d in tuned.report.dispatches}
    assert [frozen[e] for e in matmuls] == [[names[1]], [names[1]]], frozen
    assert any("which a tuning spec cannot tell apart" in n for n in tuned.report.notes)
    assert tuned.spec is not None
    assert not any("does not carry" in n for n in tuned.report.notes), tuned.report.notes
    assert tuned.spec.count("transform.iree.match.contraction") == 2
