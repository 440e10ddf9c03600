"""What each tuned dispatch gains in the model, against what it gained alone.

The offline benchmark times a dispatch alone; what the model gains from it is measured on
a build of the tuned model whose groups are `explicit` (their choices set from the host):
the model is called with every group at its winner, and with one group at a time back at
IREE's own configuration, the configurations in turn (the order reversed every round), so
that each group's gain in the model is the median difference between its call and the
all-winners call of the same round.
Each kept dispatch's record (`ModelGain`) holds the gain promised (its time saved alone,
times its dispatches per call), the gain measured, the noise of that measurement, and a
sentence that says whether the promise held and, where it did not, what differs. A group
whose winner the model runs slower than IREE's own configuration, by more than the noise,
is left out of the module (`pipeline.tune_model`).
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from autotune_model.bench import Operand
from autotune_model.report import ModelGain
from autotune_model.steadiness import call_left_alone
from autotune_runtime.run_queue import Reading, thread_clocks
from autotune_runtime.stats import median_error

HELD = 0.5
"""A dispatch whose gain in the model is at least this share of its gain alone kept its
promise."""


@dataclass(frozen=True)
class Planned:
    """A kept dispatch to measure: its group, its winner and IREE's own variant (the group's
    variant names), its time alone at each, and how many times a model call dispatches it."""

    group: str
    winner: str
    reference: str
    default_ns: float
    best_ns: float
    dispatches_per_call: int
    working_set_bytes: int

    @property
    def promised_ns(self) -> float:
        return (self.default_ns - self.best_ns) * self.dispatches_per_call


def ablation_times(
    call: Callable[[], object],
    set_variant: Callable[[str, str], None],
    plan: Sequence[Planned],
    budget_s: float,
    min_rounds: int = 10,
    clock: Callable[[], int] = time.perf_counter_ns,
    threads: Callable[[], Reading] | None = None,
) -> dict[str | None, list[int]]:
    """Per configuration (None: every group at its winner; a group's name: that group at
    IREE's own, the others at their winners), the times of the calls made in it. Every
    round calls each configuration once, in an order reversed every other round, until
    `min_rounds` rounds and `budget_s` seconds have passed. A call held up by another
    process is made again (`steadiness.call_left_alone`; `threads`: the threads' clocks)."""
    threads = threads or thread_clocks().read
    for p in plan:
        set_variant(p.group, p.winner)
    by_group = {p.group: p for p in plan}
    configurations: list[str | None] = [None, *by_group]
    times: dict[str | None, list[int]] = {c: [] for c in configurations}
    reverted: str | None = None
    start = clock()
    rounds = 0
    while rounds < min_rounds or clock() - start < budget_s * 1e9:
        order = configurations if rounds % 2 == 0 else configurations[::-1]
        for configuration in order:
            if configuration != reverted:
                if reverted is not None:
                    set_variant(reverted, by_group[reverted].winner)
                if configuration is not None:
                    set_variant(configuration, by_group[configuration].reference)
                reverted = configuration
            elapsed, _ = call_left_alone(call, threads, clock)
            times[configuration].append(elapsed)
        rounds += 1
    if reverted is not None:
        set_variant(reverted, by_group[reverted].winner)
    return times


def standard_error(samples: Sequence[float]) -> float:
    """Of the median, from the median absolute deviation (normal data)."""
    if len(samples) < 2:
        return math.inf
    middle = statistics.median(samples)
    return median_error(statistics.median(abs(s - middle) for s in samples), len(samples))


def gains(plan: Sequence[Planned], times: dict[str | None, list[int]]) -> dict[str, ModelGain]:
    """Each planned group's record from the ablation's times."""
    base = times[None]
    base_median = statistics.median(base)
    out = {}
    for p in plan:
        # paired by round: a slow spell of the machine falls on both calls of a pair
        differences = [t - b for t, b in zip(times[p.group], base, strict=True)]
        gained = statistics.median(differences)
        noise = 2.0 * standard_error(differences)
        out[p.group] = ModelGain(
            promised_ns=p.promised_ns,
            gained_ns=gained,
            noise_ns=noise,
            dispatches_per_call=p.dispatches_per_call,
            model_ns=base_median,
            why=explain(p, gained, noise, base_median),
        )
    return out


def _us(ns: float) -> str:
    return f"{ns / 1000:.1f} us"


def explain(p: Planned, gained: float, noise: float, model_ns: float) -> str:
    """Whether the dispatch's promise held in the model, in words, with the numbers."""
    promised = p.promised_ns
    alone = (
        f"alone it ran {_us(p.default_ns)} -> {_us(p.best_ns)}"
        + (f", {p.dispatches_per_call} dispatches per call" if p.dispatches_per_call > 1 else "")
        + f": {_us(promised)} per call promised"
    )
    measured = f"the model gained {_us(gained)} (noise +-{_us(noise)})"
    if promised <= noise:
        return (
            f"{alone}, {promised / model_ns:.1%} of the model's {_us(model_ns)}: below "
            f"what timing the whole model resolves; {measured}"
        )
    if gained >= HELD * promised:
        return f"held: {alone}; {measured}, {gained / promised:.0%} of it"
    share = "lost" if gained <= noise else f"only {gained / promised:.0%} of it kept"
    slower = (
        "; the model is slower with it than with IREE's own, so it is left as IREE builds it"
        if gained < -noise
        else ""
    )
    return f"{share}: {alone}; {measured}{slower}. {_what_differs(p)}"


def _what_differs(p: Planned) -> str:
    """What differs between the dispatch alone and in the model."""
    kib = p.working_set_bytes / 1024
    level = next((name for name, size in _cache_sizes() if p.working_set_bytes <= size), None)
    where = f" (within this CPU's {level} cache)" if level else ""
    return (
        "Alone, the benchmark runs it again and again on the same operands "
        f"({kib:.0f} KiB{where}); in the model they arrive from the dispatches before it"
    )


@functools.cache
def _cache_sizes() -> list[tuple[str, int]]:
    """This CPU's data cache levels, smallest first: (name, bytes) from sysfs (empty
    where unreadable)."""
    from pathlib import Path

    found = {}
    for entry in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            kind = (entry / "type").read_text().strip()
            level = int((entry / "level").read_text())
            size = (entry / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind not in ("Data", "Unified") or not size[:-1].isdigit():
            continue
        scale = {"K": 1024, "M": 1024**2}.get(size[-1], 1)
        found[f"L{level}"] = int(size[:-1]) * scale
    return sorted(found.items(), key=lambda item: item[1])


def dispatch_gains(
    vmfb: bytes,
    function: str,
    inputs: Sequence[Operand],
    plan: Sequence[Planned],
    device: str,
    budget_s: float = 3.0,
) -> dict[str, ModelGain]:
    """Measure each planned group's gain in the model: `vmfb` is the tuned model built
    with `explicit` groups (see the module docstring)."""
    import iree.runtime as rt

    from autotune_runtime.session import load

    host_args = [operand.array(seed) for seed, operand in enumerate(inputs)]
    with load(vmfb, device=device, cache=False) as module:
        args = [rt.asdevicearray(module.config.device, a) for a in host_args]
        run = module.context.modules[module.module.name][function]
        setters = {g.qualified_name: module.function(g.setter) for g in module.groups.values()}
        run(*args)
        times = ablation_times(
            functools.partial(run, *args),
            lambda g, v, set_by=setters: set_by[g](v),
            plan,
            budget_s,
        )
    return gains(plan, times)
