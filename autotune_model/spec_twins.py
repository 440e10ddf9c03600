"""Twin dispatches of a frozen model whose tuning spec is asked for (`--spec-out`): one
configuration for each set of dispatches that no matcher tells apart.

A tuning spec matches a dispatch by its configured root op (`tuning_spec.matcher_of`: the
op, its sizes and types), not by the work fused after it, so two dispatches with the same
root op get the same configuration from a spec: the Flax BERT's query and key projections,
one 64x128x128 matmul each. Tuned apart, they keep different candidates on timings within
each other's noise, and the spec can carry neither. Where the spec is asked for, the
twins run one candidate: of those each twin kept (or IREE's own), the one whose times
alone sum the least over the twins.
"""

from __future__ import annotations

from collections.abc import Sequence

from autotune_dialect.iree_ir import iree_context
from autotune_model.candidates import DEFAULT
from autotune_model.report import KEPT, REFERENCE, SLOWER
from autotune_model.tunable import Tunable
from autotune_model.tuning_spec import configured_ops, matcher_of


def twin_sets(
    flow_text: str, target: str, arch: str | None, flags: Sequence[str], exports: Sequence[str]
) -> list[list[str]]:
    """The sets of two or more of `exports` whose configured root ops have one matcher."""
    by_matcher: dict[tuple[str, ...], list[str]] = {}
    with iree_context():
        _, roots = configured_ops(flow_text, target, arch, flags)
        for export in exports:
            if export in roots:
                matcher = matcher_of(export, roots[export])
                if matcher.refused is None:
                    by_matcher.setdefault(matcher.ops, []).append(export)
    return [twins for twins in by_matcher.values() if len(twins) > 1]


def common_candidate(twins: Sequence[Tunable]) -> str:
    """Of the candidates every twin kept (IREE's own always), the one whose median times
    alone sum the least over the twins."""
    times: list[dict[str, float]] = [
        {
            c.name: c.median_ns
            for c in t.result.candidates
            if c.fate in (REFERENCE, KEPT) and c.median_ns is not None
        }
        for t in twins
    ]
    common = set.intersection(*(set(t) for t in times)) or {DEFAULT.name}
    return min(sorted(common), key=lambda name: sum(t.get(name, 0.0) for t in times))


def agree_twins(
    tunables: Sequence[Tunable], sets: Sequence[Sequence[str]], notes: list[str]
) -> None:
    """Each set of twins runs one candidate (`common_candidate`): the others they kept
    become slower ones, with why; a note names each set whose choices changed."""
    by_export = {t.export: t for t in tunables}
    for names in sets:
        twins = [by_export[n] for n in names if n in by_export and not by_export[n].frozen]
        if len(twins) < 2 or len({t.winner for t in twins}) == 1:
            continue
        chosen = common_candidate(twins)
        why = f"one configuration for the twins {', '.join(t.export for t in twins)} (--spec-out)"
        for twin in twins:
            for result in twin.result.candidates:
                if result.fate == KEPT and result.name != chosen:
                    result.fate, result.detail = SLOWER, why
        notes.append(
            f"{', '.join(t.export for t in twins)}: the same root op, sizes and types, which a "
            f"tuning spec cannot tell apart; all run {chosen} (the least time alone summed "
            "over them)"
        )
