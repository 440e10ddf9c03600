"""The tuned module of a model: its flow phase with a group of IREE's export and the
kept candidates at every site of each tuned dispatch, lowered with the policy and built
with the option set's flags."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, ModuleOp

from autotune_bridge import parse_module, print_module
from autotune_bridge.variants import tile_variants
from autotune_contracts.policy import Policy
from autotune_dialect.flow import DispatchOp
from autotune_model.flow_builds import FROM_FLOW, TO_FLOW, kernels_as_given, without_shape_ties
from autotune_model.measure import model_function
from autotune_model.tunable import Tunable, TuneOptions
from lowering.autotune_to_iree import lower_module
from lowering.driver import compile_lowered


def export_name(dispatch: DispatchOp) -> str:
    """The export a dispatch runs (the last part of its entry point)."""
    return dispatch.entry_point.nested_references.data[-1].data


def build_tuned(
    flow: str,
    filename: str,
    function_name: str,
    grouped: Sequence[Tunable],
    options: TuneOptions,
    policy: str,
    base_flags: Sequence[str],
    expected: bool = True,
) -> tuple[bytes, str]:
    """The tuned module: the flow phase with a group for each of `grouped`, lowered with
    the policy, compiled (with the base flags); `expected`: each group names its offline
    winner as the variant the function's fast path runs."""
    module = parse_module(flow, f"{filename} (flow phase)")
    sites: dict[str, list[DispatchOp]] = {}
    for dispatch in model_function(module, function_name).dispatches():
        sites.setdefault(export_name(dispatch), []).append(dispatch)
    for tunable in grouped:
        _make_group(module, sites[tunable.export], tunable, policy, expected)
    decisions = [d for t in grouped if t.frozen for d in t.decisions]
    lower_module(module, policy, options.cache, decisions=decisions)
    if base_flags:
        without_shape_ties(module)  # built from the flow phase as it is (below)
    lowered = print_module(module, locations=True)
    target, arch = options.target, options.arch
    if base_flags:
        # A flow phase of other build options is built from there, with them (a flow
        # phase of dispatch-creation data tiling holds encoded tensors, which IREE refuses
        # to bring to the flow phase again: `'hal.encoding_type' op unsupported encoding
        # type`). Nothing folds its kernels on the way.
        return compile_lowered(lowered, target, arch, extra_args=[*base_flags, *FROM_FLOW]), lowered
    at_flow = compile_lowered(lowered, target, arch, extra_args=TO_FLOW)
    built, _ = kernels_as_given(at_flow.decode(), lowered)
    return compile_lowered(built, target, arch, extra_args=FROM_FLOW), lowered


def _make_group(
    module: ModuleOp, sites: list[DispatchOp], tunable: Tunable, policy: str, expected: bool
) -> None:
    """Make the dispatch's sites run a group of IREE's export and the kept candidates."""
    kept = {c.name: c.compilation_info for c in tunable.candidates if c.name in tunable.result.kept}
    params: dict[str, object] = {"policy": policy}
    first = sites[0]
    if policy == Policy.STATIC:
        if not tunable.frozen:  # else the cache's decisions choose
            params["choice"] = tunable.winner_variant
    else:
        if policy in (Policy.EXPLICIT, Policy.INIT):
            params["workloads"] = tunable.workloads_run
        if expected:  # offline tuning's winner: the function's fast path runs it
            params["expected"] = tunable.winner_variant  # (`lowering.fast_path`)
    tile_variants(module, first, kept, **params)
    for site in sites[1:]:
        site.properties["entry_points"] = ArrayAttr(list(first.entry_points.data))
