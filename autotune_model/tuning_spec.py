"""IREE tuning specs: a model's configurations written as the transform-dialect module that
the stock `iree-compile --iree-codegen-tuning-spec-path=SPEC` applies, and read back.

A spec holds one matcher per configured dispatch, built from the op IREE configures (as
`--compile-to=executable-configurations` shows it): IREE's `transform.iree.match.contraction`
or `transform.iree.match.convolution` (element types, indexing maps, and the size of every
loop by `transform.iree.match.dims_equal`; a convolution's strides and dilations too), and
for other ops `transform.iree.match.cast_compatible_dag_from_root` with the op itself
(its maps, loops, body and operand types). Its action annotates the op with the
`compilation_info` to use (`@apply_op_config`), as IREE's own tuner writes it.

Before a spec is written, IREE itself is asked where each matcher hits (`matcher_hits`: a
probe spec whose actions only mark the ops they match): a matcher that would configure
another dispatch than its own, one the spec is to leave or configure otherwise, is
refused with both named (the spec leaves both at IREE's configuration and carries the
others: two identical matmuls of a transformer layer, the query's and the key's
projections, kept different candidates on timings within the noise), and one that hits
nothing is refused too.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from iree.compiler import ir
from iree.compiler.dialects import linalg

from autotune_bridge.iree_configs import root_op
from autotune_contracts.errors import DiagnosticError
from autotune_dialect.iree_ir import iree_context
from autotune_model.candidates import DEFAULT
from autotune_model.report import REFERENCE
from autotune_model.tunable import Tunable
from lowering.dispatch_configs import DispatchConfig, configured_root, default_configs
from lowering.driver import (
    SERIAL,
    SPEC_FLAG,
    failure_summary,
    first_error,
    run_iree_compile,
    target_flags,
)

PROBE_MARK = "autotune.spec_match"
"""The attribute a probe spec's actions put on the ops they match (its value: the matcher)."""
PARAM = "!transform.param<i64>"


@dataclass(frozen=True)
class Matcher:
    """The match ops of one dispatch's configured root op (the body of a named sequence
    whose argument is `%op`), or why there is none (`refused`)."""

    export: str
    ops: tuple[str, ...] = ()
    refused: str | None = None


def _loop_sizes(op: ir.Operation, maps: list[ir.AffineMap]) -> list[int] | None:
    """The static size of each loop of a linalg op: the extent of an operand dimension that
    its map reads by that loop alone (None: a loop of dynamic or unknown size)."""
    sizes: list[int | None] = [None] * maps[0].n_dims
    for operand, amap in zip(op.operands, maps, strict=False):
        shaped = operand.type
        if not isinstance(shaped, ir.ShapedType) or not shaped.has_rank:
            continue
        for position, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr) and not shaped.is_dynamic_dim(position):
                sizes[expr.position] = shaped.get_dim_size(position)
    return None if any(s is None for s in sizes) else [int(s) for s in sizes]  # type: ignore[arg-type]


def _element(value: ir.Value) -> str:
    kind = value.type
    return str(ir.ShapedType(kind).element_type) if isinstance(kind, ir.ShapedType) else str(kind)


def _dims_equal(name: str, loops: Sequence[int], sizes: Sequence[int]) -> str:
    listed = ", ".join(str(sizes[d]) for d in loops)
    return f"transform.iree.match.dims_equal %{name}, [{listed}] : {PARAM}"


def _int_list(attr: ir.Attribute | None) -> list[int]:
    """The values of an integer array or elements attribute (IREE's bindings give the loops
    of a contraction as `array<i32>`, a convolution's strides as `dense<...>`)."""
    if attr is None:
        return []
    if isinstance(attr, ir.DenseIntElementsAttr):
        return [int(v) for v in attr]
    return [int(v) for v in attr]  # type: ignore[union-attr]


def _typed_matcher(op: ir.Operation) -> tuple[str, ...] | None:
    """`transform.iree.match.contraction` or `.convolution` with every loop's size; None
    for another op, or one with a loop of dynamic size."""
    maps_attr = linalg.get_indexing_maps(op)
    if maps_attr is None or len(op.operands) != 3:
        return None
    maps = [ir.AffineMapAttr(m).value for m in maps_attr]
    sizes = _loop_sizes(op, maps)
    if sizes is None:
        return None
    types = (
        f"lhs_type = {_element(op.operands[0])}, rhs_type = {_element(op.operands[1])}, "
        f"output_type = {_element(op.operands[2])}, indexing_maps = {maps_attr}"
    )
    if linalg.isa_contraction_op(op):
        dims = linalg.infer_contraction_dimensions(op)
        names = ("batch", "m", "n", "k")
        head = f"%{', %'.join(names)} = transform.iree.match.contraction %op, {types}"
        groups = [dims.batch, dims.m, dims.n, dims.k]
        checks = [_dims_equal(n, _int_list(g), sizes) for n, g in zip(names, groups, strict=True)]
        return (f"{head} : !transform.any_op -> {PARAM}", *checks)
    if linalg.isa_convolution_op(op):
        dims = linalg.infer_convolution_dimensions(op)
        names = ("batch", "output_image", "output_channel", "filter_loop", "input_channel")
        names += ("depth",)
        head = "%" + ", %".join((*names, "strides", "dilations"))
        head += f" = transform.iree.match.convolution %op, {types}"
        checks = [_dims_equal(n, _int_list(getattr(dims, n)), sizes) for n in names]
        for name in ("strides", "dilations"):
            values = ", ".join(str(v) for v in _int_list(getattr(dims, name)))
            checks.append(f"transform.iree.match.dims_equal %{name}, [{values}] : {PARAM}")
        return (f"{head} : !transform.any_op -> {PARAM}", *checks)
    return None


def _dag_matcher(op: ir.Operation) -> tuple[str, ...]:
    """`transform.iree.match.cast_compatible_dag_from_root` with the op itself (generic
    form, its configuration left out), its operands the region's arguments."""
    args = ", ".join(f"%in{i}: {v.type}" for i, v in enumerate(op.operands))
    for name in ("lowering_config", "compilation_info", PROBE_MARK):
        if name in op.attributes:
            del op.attributes[name]
    text = op.get_asm(print_generic_op_form=True, assume_verified=True)
    # the operands, printed as values unknown outside the function, become the arguments
    start = text.index("(", text.index(f'"{op.name}"'))
    end = text.index(")", start)
    names = ", ".join(f"%in{i}" for i in range(len(op.operands)))
    results = ", ".join(f"%r{i}" for i in range(len(op.results)))
    body = text[text.index("=") + 1 : start] if op.results else text[:start]
    text = f"{results} ={body}({names}{text[end:]}" if op.results else f"{body}({names}{text[end:]}"
    return (
        "%ins, %outs = transform.iree.match.cast_compatible_dag_from_root %op {",
        f"^bb0({args}):",
        f"  {text}",
        "} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)",
    )


def matcher_of(export: str, op: ir.Operation) -> Matcher:
    """The matcher of a dispatch's configured root op."""
    typed = _typed_matcher(op)
    if typed is not None:
        return Matcher(export, typed)
    if any(isinstance(v.type, ir.ShapedType) and not v.type.has_static_shape for v in op.operands):
        return Matcher(export, refused="its root op has dynamic sizes, which no matcher pins")
    dag = _dag_matcher(op)
    captured = _captured(dag[2])
    if captured:
        return Matcher(
            export,
            refused=f"its root op's body reads values from outside the op ({', '.join(captured)}: "
            "a gather from a constant), which no matcher can state",
        )
    return Matcher(export, dag)


_SSA_NAME = re.compile(r"%[\w$.-]+")
_DEFINED = re.compile(r"(?m)^\s*((?:%[\w$.-]+(?::\d+)?\s*,\s*)*%[\w$.-]+(?::\d+)?)\s*=")
_BLOCK_ARGS = re.compile(r"\^bb\d+\(([^)]*)\)")


def _captured(text: str) -> list[str]:
    """The SSA names an op's generic text reads that it does not define (its results, its
    blocks' arguments, the `%inN` operands): values from outside the op, which its body
    uses as a gather from a constant tensor does."""
    defined = {name for names in _DEFINED.findall(text) for name in _SSA_NAME.findall(names)}
    for arguments in _BLOCK_ARGS.findall(text):
        defined.update(_SSA_NAME.findall(arguments))
    used = _SSA_NAME.findall(text)
    return sorted({n for n in used if n not in defined and not re.fullmatch(r"%in\d+", n)})


def configured_ops(
    flow_text: str, target: str, arch: str | None, flags: Sequence[str], spec: str | None = None
) -> tuple[ir.Module, dict[str, ir.Operation]]:
    """The module at `--compile-to=executable-configurations` (built from the flow phase with
    `flags`, and the tuning spec `spec` where given) and each export's configured root op.
    Call within `iree_context()`."""
    command = [*target_flags(target, arch), *flags, "--compile-from=flow"]
    command.append("--compile-to=executable-configurations")
    if spec is not None:
        command.append(f"{SPEC_FLAG}={spec}")
    code, out, log = run_iree_compile(flow_text, command)
    if code != 0:
        raise DiagnosticError(first_error(log) or failure_summary(log, code))
    module = ir.Module.parse(out.decode())
    roots: dict[str, ir.Operation] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.func" and "translation_info" in op.attributes:
            root = configured_root(op)
            if root is not None:
                roots[ir.StringAttr(op.attributes["sym_name"]).value] = root
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return module, roots


def _sequence(name: str, ops: Sequence[str], results: str, yielded: str) -> list[str]:
    head = f"  transform.named_sequence @{name}(%op: !transform.any_op {{transform.readonly}})"
    return [
        f"{head} -> ({results}) {{",
        *(f"    {line}" for line in ops),
        f"    transform.yield {yielded} : {results}",
        "  }",
    ]


def _entry_point(pairs: Sequence[tuple[str, str]], chained: bool) -> list[str]:
    """`@__kernel_config`: one `foreach_match` over every (matcher, action) pair (a spec:
    the first matcher that hits an op configures it), or one per pair (`chained`, the
    probe: every matcher tries every op)."""
    lines = [
        "  transform.named_sequence @__kernel_config(%variant: !transform.any_op "
        "{transform.consumed}) -> !transform.any_op attributes "
        "{iree_codegen.tuning_spec_entrypoint} {"
    ]
    steps = [list(pairs)] if not chained else [[p] for p in pairs]
    current = "%variant"
    for index, step in enumerate(steps):
        listed = ", ".join(f"@{m} -> @{a}" for m, a in step)
        lines.append(
            f"    %v{index} = transform.foreach_match in {current} {listed} : "
            "(!transform.any_op) -> !transform.any_op"
        )
        current = f"%v{index}"
    lines += [f"    transform.yield {current} : !transform.any_op", "  }"]
    return lines


MODULE_HEAD = (
    "module attributes {iree_codegen.tuning_spec_with_default_entrypoint, "
    "transform.with_named_sequence} {"
)
PROBE_HEAD = "module attributes {transform.with_named_sequence} {"
"""A probe's entry point runs several `foreach_match`, which a spec with IREE's default
entry point (exactly one) may not."""
EMPTY_SPEC = "\n".join(
    [
        PROBE_HEAD,
        "  transform.named_sequence @__kernel_config(%variant: !transform.any_op "
        "{transform.readonly}) -> !transform.any_op attributes "
        "{iree_codegen.tuning_spec_entrypoint} {",
        "    transform.yield %variant : !transform.any_op",
        "  }",
        "}",
    ]
)
"""A spec that configures no dispatch: its entry point hands the executable back as it came
(a `foreach_match` needs at least one matcher; `iree-compile` 3.13 builds the same module
with it as without a spec)."""


def probe_text(matchers: Sequence[Matcher]) -> str:
    """A spec whose matcher `i` marks every op it hits with `PROBE_MARK_i`, and configures
    nothing."""
    lines = [PROBE_HEAD]
    for index, matcher in enumerate(matchers):
        lines += _sequence(f"match_{index}", matcher.ops, "!transform.any_op", "%op")
        lines += [
            f"  transform.named_sequence @mark_{index}(%op: !transform.any_op "
            "{transform.readonly}) {",
            f'    transform.annotate %op "{PROBE_MARK}_{index}" : !transform.any_op',
            "    transform.yield",
            "  }",
        ]
    pairs = [(f"match_{i}", f"mark_{i}") for i in range(len(matchers))]
    return "\n".join([*lines, *_entry_point(pairs, chained=True), "}", ""])


def spec_text(entries: Sequence[tuple[Matcher, str]], header: Sequence[str]) -> str:
    """The tuning spec: `header` as comment lines, then one matcher per (matcher,
    compilation_info) entry, each applying its `compilation_info`; with no entry, a spec
    that configures nothing (`EMPTY_SPEC`)."""
    lines = [f"// {line}" if line else "//" for line in header]
    if not entries:
        return "\n".join([*lines, EMPTY_SPEC, ""])
    lines += [
        MODULE_HEAD,
        "  transform.named_sequence @apply_op_config(%op: !transform.any_op "
        "{transform.readonly}, %config: !transform.any_param {transform.readonly}) {",
        '    transform.annotate %op "compilation_info" = %config : '
        "!transform.any_op, !transform.any_param",
        "    transform.yield",
        "  }",
    ]
    results = "!transform.any_op, !transform.any_param"
    for matcher, info in entries:
        ops = [*matcher.ops, f"%config = transform.param.constant {info} -> !transform.any_param"]
        lines += _sequence(f"match_{matcher.export}", ops, results, "%op, %config")
    pairs = [(f"match_{m.export}", "apply_op_config") for m, _ in entries]
    return "\n".join([*lines, *_entry_point(pairs, chained=False), "}", ""])


@dataclass(frozen=True)
class Hit:
    """An op a matcher hit: the dispatch it is in, and whether it is the configured root."""

    export: str
    root: bool


def matcher_hits(
    flow_text: str, target: str, arch: str | None, flags: Sequence[str], matchers: Sequence[Matcher]
) -> list[list[Hit]]:
    """Where IREE's own matching puts each matcher on the flow-phase module (built with
    `flags`): the ops it hits, each dispatch's function in turn."""
    hits: list[list[Hit]] = [[] for _ in matchers]
    with tempfile.TemporaryDirectory() as folder, iree_context():
        probe = Path(folder) / "probe.mlir"
        probe.write_text(probe_text(matchers), encoding="utf-8")
        module, roots = configured_ops(flow_text, target, arch, flags, str(probe))

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.func" and "translation_info" in op.attributes:
                export = ir.StringAttr(op.attributes["sym_name"]).value
                for inner in _ops(op):
                    for named in inner.attributes:
                        if named.startswith(f"{PROBE_MARK}_"):
                            index = int(named.rsplit("_", 1)[1])
                            hits[index].append(Hit(export, inner == roots.get(export)))
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return hits


def _ops(function: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    return found


def _root_configs(module: ir.Module, roots: Mapping[str, ir.Operation]) -> dict[str, str]:
    """Each export's configured root op's `lowering_config`, as IREE prints it."""
    return {e: str(op.attributes["lowering_config"]) for e, op in roots.items()}


def _conflict(export: str, hit: Hit, chosen: Mapping[str, str]) -> str | None:
    """Why the matcher of `export` must not hit `hit` (None: it may)."""
    if hit.export == export:
        return None if hit.root else f"another op of {export} than its root op"
    if not hit.root:
        return f"an op of {hit.export} other than its root op"
    if chosen.get(hit.export) == chosen[export]:
        return None  # the same configuration either way
    other = chosen.get(hit.export)
    state = "IREE's own configuration" if other is None else "another configuration"
    return f"{hit.export}, which keeps {state}"


def spec_matchers(
    flow_text: str, target: str, arch: str | None, flags: Sequence[str], chosen: Mapping[str, str]
) -> tuple[list[Matcher], list[str]]:
    """The matchers of the dispatches in `chosen` (export -> `compilation_info`), each checked
    against IREE's own matching of the flow-phase module built with `flags`: it hits its
    dispatch's configured root op, and no op of another dispatch that the spec is to leave
    or configure otherwise (else refused, naming both, and left out). Also what cannot be
    matched, in words: a dispatch without a root op IREE configures, one whose sizes no
    matcher pins, and one whose configured op IREE's matching does not see (such as a
    convolution whose batch of 1 the flow phase folded away and IREE's code generation
    gives back after the spec is applied)."""
    left: list[str] = []
    with iree_context():
        _, roots = configured_ops(flow_text, target, arch, flags)
        matchers = [
            matcher_of(export, roots[export])
            if export in roots
            else Matcher(export, refused="IREE configures no root op of it in this build")
            for export in chosen
        ]
    left += [f"{m.export}: {m.refused}" for m in matchers if m.refused is not None]
    matchers = [m for m in matchers if m.refused is None]
    found = matcher_hits(flow_text, target, arch, flags, matchers)
    usable: list[Matcher] = []
    for matcher, hits in zip(matchers, found, strict=True):
        conflicts = [why for hit in hits if (why := _conflict(matcher.export, hit, chosen))]
        if conflicts:
            left.append(
                f"{matcher.export}: its matcher would also configure {conflicts[0]}; no "
                "matcher tells the two apart (the same root op, its sizes and types), so the "
                "spec leaves it at IREE's configuration"
            )
        elif Hit(matcher.export, True) in hits:
            usable.append(matcher)
        else:
            left.append(
                f"{matcher.export}: IREE applies a tuning spec before it gives its root op "
                "the form it configures (unit dimensions given back, or an op decomposed), "
                "and no matcher hits it"
            )
    return usable, left


def applied_configs(
    flow_text: str, target: str, arch: str | None, flags: Sequence[str], spec: str
) -> dict[str, str]:
    """Each export's `lowering_config` when the tuning spec text `spec` is applied to the
    flow-phase module built with `flags`."""
    with tempfile.TemporaryDirectory() as folder, iree_context():
        path = Path(folder) / "spec.mlir"
        path.write_text(spec, encoding="utf-8")
        module, roots = configured_ops(flow_text, target, arch, flags, str(path))
        return _root_configs(module, roots)


NOTHING_KEPT = "no dispatch keeps a tuned configuration"


def build_spec(
    flow_text: str,
    target: str,
    arch: str | None,
    flags: Sequence[str],
    chosen: Mapping[str, str],
    header: Sequence[str] = (),
) -> tuple[str, list[str]]:
    """The tuning spec that gives each dispatch of `chosen` its `compilation_info` and leaves
    every other dispatch of the flow-phase module (built with `flags`) as IREE configures
    it, checked by applying it (each configured root op has the chosen `lowering_config`);
    and the dispatches of `chosen` it cannot carry, with why (also in its header). Where
    `chosen` is empty (no dispatch keeps a tuned configuration) the spec configures
    nothing, as the frozen module runs; one that would carry none of `chosen` is refused,
    with why."""
    if not chosen:
        nothing = [
            f"This spec configures no dispatch: {NOTHING_KEPT}",
            "(each runs as IREE configures it, as in the frozen module).",
        ]
        return spec_text([], [*header, *nothing]), []
    matchers, left = spec_matchers(flow_text, target, arch, flags, chosen)
    if not matchers:
        raise DiagnosticError("a tuning spec would carry no dispatch: " + "; ".join(left))
    if left:
        header = [*header, "Not carried by this spec:", *(f"  {line}" for line in left)]
    text = spec_text([(m, chosen[m.export]) for m in matchers], header)
    got = applied_configs(flow_text, target, arch, flags, text)
    with iree_context():
        for matcher in matchers:
            info = chosen[matcher.export]
            printed = str(ir.Attribute.parse(info))
            if f"lowering_config = {got.get(matcher.export)}" not in printed:
                raise DiagnosticError(
                    f"the tuning spec written for {matcher.export} did not give it its "
                    f"configuration: iree-compile configured it with "
                    f"{got.get(matcher.export)}, not {info}"
                )
    return text, left


def spec_incumbents(
    own: Mapping[str, DispatchConfig], with_spec: Mapping[str, DispatchConfig]
) -> dict[str, str]:
    """The `compilation_info` a tuning spec gives each dispatch it configures: where IREE's
    configuration with the spec (`with_spec`) differs from its own (`own`)."""
    return {
        export: config.compilation_info()
        for export, config in with_spec.items()
        if export in own
        and (own[export].lowering_config, own[export].translation_info)
        != (config.lowering_config, config.translation_info)
    }


def with_incumbents(flow_text: str, incumbents: Mapping[str, str]) -> str:
    """The flow-phase module with `compilation_info = incumbents[export]` on the root op of
    each export's kernel: built so, without a candidate's own, it is the incumbent."""
    if not incumbents:
        return flow_text
    with iree_context():
        module = ir.Module.parse(flow_text)

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.func":
                name = ir.StringAttr(op.attributes["sym_name"]).value
                root = root_op(op) if name in incumbents else None
                if root is not None:
                    root.attributes["compilation_info"] = ir.Attribute.parse(incumbents[name])
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        # (A local scope would drop the module's resources: the weights of torch models.)
        return module.operation.get_asm(enable_debug_info=True)


@dataclass
class FrozenConfigs:
    """What a tuned model's spec carries: each dispatch's `compilation_info` (`chosen`), and
    what it does not carry, in words (`left`)."""

    chosen: dict[str, str]
    left: list[str]


def frozen_configs(
    tunables: Sequence[Tunable], grouped: Sequence[Tunable], incumbents: Mapping[str, str]
) -> FrozenConfigs:
    """The configuration of each tuned dispatch that the frozen module runs: the choice
    frozen (a `static` module), else the offline winner of a kept group, else the incumbent
    (IREE's own, or the `--spec-in` spec's). A dispatch frozen to several sizes' choices is
    left out; an `online` or `explicit` group's choice at run time stays behind."""
    out = FrozenConfigs(dict(incumbents), [])
    for tunable in tunables:
        kept = tunable in grouped
        names = sorted({c.variant for c in tunable.result.frozen}) or [
            tunable.winner if kept else DEFAULT.name
        ]
        if len(names) > 1:
            out.left.append(
                f"{tunable.export}: the tuning cache chose per size ({', '.join(names)}); a "
                "spec gives one configuration for all sizes, and leaves it at the incumbent"
            )
            continue
        if not tunable.result.frozen and kept and len(tunable.result.kept) > 1:
            out.left.append(
                f"{tunable.export}: the module chooses at run time among "
                f"{len(tunable.result.kept) + 1} variants (the host module's online choice); "
                f"the spec carries the offline winner, {names[0]}"
            )
        if names[0] == DEFAULT.name:
            continue
        (candidate,) = [c for c in tunable.candidates if c.name == names[0]]
        assert candidate.compilation_info is not None
        out.chosen[tunable.export] = candidate.compilation_info
    return out


def starting_configs(
    spec: str | None,
    flow_text: str,
    target: str,
    arch: str | None,
    flags: Sequence[str],
    configs: dict[str, DispatchConfig],
) -> tuple[dict[str, DispatchConfig], dict[str, str]]:
    """`--spec-in`: IREE's configurations with the tuning spec `spec` applied (those of
    the dispatches it configures are the incumbents the candidates must beat), and the
    `compilation_info` of each of those. Without a spec, `configs` as they are."""
    if spec is None:
        return configs, {}
    applied = default_configs(flow_text, target, arch, [*flags, f"{SPEC_FLAG}={spec}"])
    incumbents = spec_incumbents(configs, applied)
    return {**configs, **{e: applied[e] for e in incumbents}}, incumbents


def mark_incumbents(
    tunables: Sequence[Tunable], incumbents: Mapping[str, str], spec: str | None, notes: list[str]
) -> None:
    """The reference candidate of each dispatch the spec configured says so, with the
    spec's `compilation_info`; a note says how many dispatches it configured."""
    if spec is None:
        return
    for tunable in tunables:
        if tunable.export in incumbents:
            for result in tunable.result.candidates:
                if result.fate == REFERENCE:
                    result.detail = f"the tuning spec {spec}: {incumbents[tunable.export]}"
    configured = ", ".join(sorted(incumbents)) or "none of this build's dispatches"
    notes.append(f"the tuning spec {spec} configures {configured}; those are the incumbents")


def model_spec(
    flow_text: str,
    target: str,
    arch: str | None,
    flags: Sequence[str],
    incumbents: Mapping[str, str],
    tunables: Sequence[Tunable],
    grouped: Sequence[Tunable],
    notes: list[str],
) -> str | None:
    """`--spec-out`: the tuning spec of what the frozen module runs (`frozen_configs`),
    with a header naming the flags it goes with and what it does not carry (the report's
    notes say so too); None, with a note why, where it cannot be written."""
    frozen = frozen_configs(tunables, grouped, incumbents)
    header = [
        "IREE tuning spec written by iree-autotune tune-model: the configurations of its",
        "frozen module. It matches the dispatches of the model built with these flags:",
        "  iree-compile MODEL " + " ".join([*target_flags(target, arch), *flags]),
        f"    {SPEC_FLAG}=THIS_FILE",
        f"    {SERIAL} (iree-compile 3.13 can hang loading a spec on several threads)",
        "(other flags make other dispatches, which its matchers may not hit).",
    ]
    try:
        text, unmatched = build_spec(
            flow_text, target, arch, flags, frozen.chosen, [*header, *frozen.left]
        )
    except DiagnosticError as err:
        notes.append(f"no tuning spec written: {str(err).removeprefix('error: ')}")
        return None
    notes += [f"the tuning spec does not carry {line}" for line in [*frozen.left, *unmatched]]
    if not frozen.chosen:
        notes.append(f"the tuning spec configures no dispatch: {NOTHING_KEPT}")
    return text
