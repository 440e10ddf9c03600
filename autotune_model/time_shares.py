"""How much search a dispatch gets by its share of the tuned dispatches' time alone (IREE's
own configuration, times its dispatches per call): the smallest are left as IREE builds
them (`TuneOptions.small_share`), the next smallest try half their candidates
(`FEWER_SHARE`)."""

from __future__ import annotations

from collections.abc import Sequence

from autotune_model.tunable import Tunable

FEWER_SHARE = 0.2
"""Past the dispatches left as IREE builds them, the next smallest, whose times per call add
up (with those) to at most this share of all the tuned dispatches' time, try the first half
of their candidates only: each holds a percent or two of the time, so what the second half
could add is a fraction of a percent of the model. (MobileNetV2, five runs: every winner of
a dispatch under 3% of the time was among its first three candidates; those at the sixth
and seventh held 7-18%.)"""


def smallest(times: dict[str, float], share: float) -> set[str]:
    """The keys of the smallest `times` that add up to at most `share` of their sum."""
    total, together, small = sum(times.values()), 0.0, set()
    for key, value in sorted(times.items(), key=lambda item: item[1]):
        together += value
        if together > share * total:
            break
        small.add(key)
    return small


def why_left(per_call: dict[str, float], small: set[str], share: float) -> dict[str, str]:
    """Each of the `small` dispatches (at most `share` of the time together): why it is
    left as IREE builds it, for the report."""
    total = sum(per_call.values())
    together = sum(per_call[e] for e in small) / total
    return {
        export: (
            f"{per_call[export] / 1e3:.1f} us per call alone with IREE's own configuration: "
            f"among the smallest dispatches, which together take {together:.1%} of the "
            f"tuned dispatches' {total / 1e3:.1f} us (at most {share:.0%}, --small-share): "
            "tuning them cannot pay; left as IREE builds it"
        )
        for export in small
    }


def fewer_candidates(
    tuned: Sequence[Tunable], per_call: dict[str, float], small: set[str], candidates: int
) -> str | None:
    """The dispatches within `FEWER_SHARE` of the time (but the `small` ones, not tuned)
    keep the first half of their `candidates` (IREE's own first). Returns the note that
    names them (None: none)."""
    half = max(1, candidates // 2)
    fewer = smallest(per_call, FEWER_SHARE) - small
    narrowed = [t for t in tuned if t.export in fewer and len(t.candidates) > 1 + half]
    for tunable in narrowed:
        tunable.candidates = tunable.finalists = tunable.candidates[: 1 + half]
    if not narrowed:
        return None
    return (
        f"{len(narrowed)} dispatches among the smallest, within {FEWER_SHARE:.0%} of the "
        f"tuned dispatches' time alone, tried their first {half} candidates: "
        + ", ".join(t.export for t in narrowed)
    )
