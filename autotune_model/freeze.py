"""`--freeze --cache`: the decisions of a tuning cache for a model's dispatches, used as
they are (a dispatch the cache decided is not tuned again), and what the frozen module
runs for each dispatch (`report.FrozenChoice`)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

from autotune_dialect.diagnostics import DiagnosticError
from autotune_model.candidates import DEFAULT, Candidate, candidates, combined, variant_name
from autotune_model.report import CACHE, KEPT, REFERENCE, CandidateResult, FrozenChoice, TuneReport
from autotune_model.tunable import Tunable
from lowering.dispatch_configs import DispatchConfig

ALL_CANDIDATES = 10_000
"""More candidates than any configuration has: a cache's choice is found among all of
them, whatever `--candidates` the run that filled the cache had."""


def decision_group(decision: dict) -> str:
    """The group a decision names, as `executable::group` where it says the executable."""
    name = decision["group"]
    container = decision.get("container")
    return f"{container}::{name}" if container and "::" not in name else name


def group_decisions(decisions: Sequence[dict], group: str) -> list[dict]:
    """The decisions for `group` (`executable::group`; a decision may name `group` alone)."""
    alone = group.split("::")[-1]
    return [d for d in decisions if decision_group(d) in (group, alone)]


def chosen_candidate(variant: str, export: str, config: DispatchConfig) -> Candidate | None:
    """The candidate that a cache's variant (`export`, or `export__name`) stands for: IREE's
    own, a generated one, or two of them combined; None when it is none of these."""
    if variant == export:
        return DEFAULT
    name = variant.removeprefix(f"{export}__")
    if name == variant:
        return None
    every = candidates(config, ALL_CANDIDATES)
    by_name = {c.name: c for c in every}
    if name in by_name:
        return by_name[name]
    for first, second in permutations(every[1:], 2):
        if f"{first.name}_{second.name}" == name:
            return combined(config, first, second)
    return None


def resolved(
    decisions: Sequence[dict], export: str, config: DispatchConfig
) -> tuple[list[Candidate], list[FrozenChoice]] | str:
    """The candidates a dispatch's cached decisions choose (IREE's own first) and what
    they freeze (one choice per decided workload); or why they cannot be used: a variant
    that is no candidate of the dispatch."""
    chosen, frozen = [DEFAULT], []
    for decision in decisions:
        candidate = chosen_candidate(decision["variant"], export, config)
        if candidate is None:
            return (
                f"the tuning cache chooses @{decision['variant']}, which is no candidate of "
                "this dispatch; tuned again"
            )
        if candidate not in chosen:
            chosen.append(candidate)
        frozen.append(FrozenChoice(candidate.name, CACHE, list(decision["workload"])))
    return chosen, frozen


def take_cached(
    tunables: Sequence[Tunable], decisions: list[dict], cache: str, report: TuneReport
) -> None:
    """Freeze the dispatches that the tuning cache decided with its choices (they are not
    tuned again). A cache that decides none of the model's dispatches is refused."""
    named = 0
    for tunable in tunables:
        mine = group_decisions(decisions, tunable.group)
        named += len(mine)
        found = resolved(mine, tunable.export, tunable.config) if mine else None
        if isinstance(found, str):
            report.notes.append(f"{tunable.export}: {found}")
        if not isinstance(found, tuple):
            continue
        tunable.candidates, tunable.frozen = found
        tunable.decisions = mine
        tunable.result.candidates = [CandidateResult(DEFAULT.name, REFERENCE)] + [
            CandidateResult(c.name, KEPT, detail="the tuning cache's choice")
            for c in tunable.candidates[1:]
        ]
    if not named:
        groups = ", ".join(t.group for t in tunables) or "none"
        raise DiagnosticError(
            f"no decision of the tuning cache {cache} names a tuned dispatch of this model "
            f"(its groups: {groups}); freeze with the cache of this model's module, built "
            "with the same build options (`--base`, which its tune-model report names)"
        )
    if named < len(decisions):
        report.notes.append(
            f"{len(decisions) - named} decision(s) of the tuning cache {cache} name no tuned "
            "dispatch of this model and are not used"
        )


def report_decisions(report: TuneReport, at_sizes: bool = False) -> list[dict]:
    """What each dispatch of a tune-model `report` runs, as tuning-cache decisions: its
    frozen choices (a `static` module's; those of this run's tuning for the sizes it was
    tuned at where `at_sizes`, else for every size), else the fastest variant kept; none
    for a dispatch left at IREE's own configuration."""
    decisions = []
    for dispatch in report.dispatches:
        group = f"{dispatch.export}__tuned"
        chosen = [(f.variant, f.workload) for f in dispatch.frozen]
        if not chosen and dispatch.kept and dispatch.best is not None:
            chosen = [(dispatch.best.name, None)]
        for name, workload in chosen:
            sized = dispatch.workload if at_sizes and workload is None else workload
            decisions.append(
                {"group": group, "variant": variant_name(dispatch.export, name),
                 "workload": list(sized or [])}
            )  # fmt: skip
    return decisions
