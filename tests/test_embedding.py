"""Building and lowering from Python (docs/embedding.md): a misspelt property of an IREE op
is refused where the module is verified, naming it and the op's properties; tile_variants
adds variants to an existing group; the lowering runs as a pass of one's own pipeline."""

from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ArrayAttr
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

from autotune_bridge import DiagnosticError, make_context, parse_module, print_module, verify_module
from autotune_bridge.variants import dispatches, tile_variants
from lowering import AutotuneToIREEPass, lower_module
from lowering.dispatch_configs import default_configs, distribution_variants

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def flow() -> str:
    compiler = Path(sysconfig.get_path("scripts")) / "iree-compile"
    done = subprocess.run(
        [str(compiler), "--compile-to=flow", str(ROOT / "examples" / "mlp.mlir")],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_a_misspelt_dispatch_property_is_refused_naming_the_right_one(flow):
    module = parse_module(flow, "mlp.flow.mlir")
    dispatch = dispatches(module)[0]
    dispatch.properties["entry_point"] = ArrayAttr([dispatch.entry_point])
    message = (
        r"mlp.flow.mlir:\d+:\d+: error: 'flow.dispatch' op has no property 'entry_point' "
        r"\(did you mean 'entry_points'\? its properties: entry_points, "
        r"operandSegmentSizes, tied_operands\)"
    )
    with pytest.raises(DiagnosticError, match=message):
        lower_module(module)
    with pytest.raises(PassFailedException, match="has no property 'entry_point'"):
        PassPipeline((AutotuneToIREEPass(),)).apply(make_context(), module)


def test_properties_iree_gives_under_other_names_are_kept(flow):
    module = parse_module(flow, "mlp.flow.mlir")
    dispatch = dispatches(module)[0]
    dispatch.properties["workgroup_count_hint"] = ArrayAttr([])
    verify_module(module)  # no error: not a near-miss of a property the op defines
    assert dispatch.properties["workgroup_count_hint"] == ArrayAttr([])


def test_tile_variants_adds_to_an_existing_group(flow):
    module = parse_module(flow, "mlp.flow.mlir")
    dispatch = dispatches(module)[0]
    export = dispatch.entry_point.nested_references.data[-1].data
    first, second = distribution_variants(default_configs(flow)[export]).items()
    group = tile_variants(module, dispatch, dict([first]), group_name="mm", policy="static")
    joined = tile_variants(module, dispatch, dict([second]), group=group)
    assert joined is group
    assert group.variant_names == [export, f"{export}__{first[0]}", f"{export}__{second[0]}"]
    assert group.reference is not None and group.reference.root_reference.data == export
    groups = [op for op in module.walk() if op.name == "autotune.group"]
    assert groups == [group]
    assert dispatch.entry_point.nested_references.data[-1].data == "mm"
    assert f"flow.executable.export public @{export}__{second[0]}" in print_module(module)
    PassPipeline((AutotuneToIREEPass(policy="static"),)).apply(make_context(), module)
    assert "autotune.group" not in print_module(module)


def test_a_group_to_join_takes_no_new_name_or_parameters(flow):
    module = parse_module(flow, "mlp.flow.mlir")
    dispatch = dispatches(module)[0]
    export = dispatch.entry_point.nested_references.data[-1].data
    first, second = distribution_variants(default_configs(flow)[export]).items()
    group = tile_variants(module, dispatch, dict([first]), group_name="mm")
    with pytest.raises(DiagnosticError, match="policy cannot be given with group="):
        tile_variants(module, dispatch, dict([second]), group=group, policy="online")
    assert len(group.variant_names) == 2
