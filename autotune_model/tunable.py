"""What one tuning run works with: its options, and each dispatch it tunes with its
candidates and their verdicts (`judge`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from autotune_contracts.policy import Policy
from autotune_model.base_builds import AUTO
from autotune_model.bench import BenchModule, Compiled, Measured, agree, paired_ratios
from autotune_model.candidates import DEFAULT, Candidate, variant_name
from autotune_model.measure import InputShape
from autotune_model.report import (
    FAILED_TO_COMPILE,
    FAILED_TO_RUN,
    KEPT,
    NOISE,
    REFERENCE,
    SLOWER,
    WRONG,
    CandidateResult,
    DispatchResult,
    FrozenChoice,
)
from autotune_model.steadiness import median_interval
from lowering.dispatch_configs import DispatchConfig


@dataclass(frozen=True)
class TuneOptions:
    """How to tune: the target, the model function and its example input shapes (needed
    when it takes dynamic sizes), the policy of the groups, how many candidates to try and
    keep, the numerical tolerance against IREE's own configuration, where built
    candidates are kept for the next run (`compile_cache`), and the device timed on (the
    one the model will run on: a variant fastest on two threads may not be on one)."""

    target: str = "llvm-cpu"
    arch: str | None = None
    function: str | None = None
    input_shapes: tuple[InputShape, ...] | None = None
    # more sets of example shapes (each as `input_shapes`) a dynamic model is tuned at too:
    # the module runs each size's winners, frozen (`pipeline.tune_at_sizes`)
    also_at: tuple[tuple[InputShape, ...], ...] = ()
    policy: str = Policy.ONLINE
    freeze: bool = False
    cache: str | None = None
    top_k: int = 2
    candidates: int = 8
    tolerance: float = 1e-3
    check_tolerance: float = 1e-2  # the whole model's results against the stock build's
    repeats: int = 15
    time_model: bool = True
    dispatch_gains: bool = True  # each kept dispatch's gain measured in the model (`gains`)
    faster_by: float = 1.03  # a candidate is kept when IREE's own takes this much longer
    combine: bool = True  # a second round: the best two changes to different lists together
    packing: bool = True  # a data-tiled build's packs and unpacks tuned too
    budget: float = 0.0  # seconds of search (build + time candidates); rounds climb while left
    # where the model is timed, the smallest dispatches, whose times alone with IREE's own
    # configuration add up to at most this share of all the tuned dispatches' time, are left
    # as IREE builds them: made twice as fast they would gain the model less than half of it
    # (0: every one is tuned)
    small_share: float = 0.05
    # a tuned model loses groups while the upper bound of its time's 95% interval over the
    # stock build's, timed side by side, is above this (`ModelTiming.upper`)
    slower_at_most: float = 1.0
    strict_timing: bool = False  # refuse to write a module timed on an unsteady machine
    base: str = AUTO  # IREE's whole-compilation options to start from (`base_builds`)
    # threads code generation is told (llvm-cpu): auto (the device's, where faster), "iree"
    # (IREE's default), or a count (`base_builds.choose_threads`)
    threads: str = AUTO
    compile_cache: bool = True  # built candidates kept by content (`compile_cache`)
    compile_cache_folder: str | None = None  # None: `compile_cache.default_folder()`
    device: str | None = None  # where candidates and the model are timed (None: the target's)
    # an IREE tuning spec whose configurations are the incumbents (`tuning_spec`)
    spec_in: str | None = None
    spec_out: bool = False  # write the frozen configurations as a tuning spec (`TunedModel.spec`)
    # the user's iree-compile flags (an object search path's included), passed on to every
    # build: candidates, option sets, the stock build (`driver.user_flags`)
    compile_args: tuple[str, ...] = ()


@dataclass
class Tunable:
    """A dispatch worth tuning: the sites that run it, IREE's config, its bench module;
    when the tuning cache to freeze decided it, its decisions and what they choose
    (`frozen`), and it is not tuned again."""

    export: str
    group: str  # `executable::export__tuned`, as a tuning cache names it
    config: DispatchConfig
    bench: BenchModule
    workload: list[int]  # the one its benchmark runs at
    candidates: list[Candidate]
    workloads_run: list[list[int]] = field(default_factory=list)
    """Every workload the model runs it at (a loop's steps: `sizes.workloads_run`; none
    given: `workload`)."""
    result: DispatchResult = field(init=False)
    finalists: list[Candidate] = field(init=False)
    frozen: list[FrozenChoice] = field(init=False, default_factory=list)  # from the cache
    decisions: list[dict] = field(init=False, default_factory=list)  # the cache's, used

    def __post_init__(self) -> None:
        self.finalists = list(self.candidates)  # the candidates of the current round
        self.workloads_run = self.workloads_run or [self.workload]
        operands = [o.text for o in self.bench.operands]
        self.result = DispatchResult(self.export, self.config.root_op, self.workload, operands)

    @property
    def kept_candidates(self) -> list[Candidate]:
        kept = set(self.result.kept)
        return [c for c in self.candidates if c.name in kept]

    @staticmethod
    def names(candidates: Sequence[Candidate]) -> set[str]:
        return {c.name for c in candidates}

    @property
    def gain_ns(self) -> float:
        """How much faster than IREE's own configuration the best kept candidate ran alone."""
        best_ns, default_ns = self.result.best_ns, self.result.default_ns
        if best_ns is None or default_ns is None:
            return 0.0
        return default_ns - best_ns

    @property
    def winner(self) -> str:
        """The candidate a `static` group of this run's tuning runs: the fastest kept one,
        else IREE's own."""
        best = self.result.best
        return best.name if best is not None and best.fate == KEPT else DEFAULT.name

    @property
    def winner_variant(self) -> str:
        """The group's variant of the winner: IREE's export, or `export__candidate`."""
        return variant_name(self.export, self.winner)

    def ungroup(self, why: str) -> None:
        """Leave the dispatch as IREE builds it: its kept candidates become slower ones."""
        self.frozen = []
        for result in self.result.candidates:
            if result.fate == KEPT:
                result.fate, result.detail = SLOWER, why


def against(run: Measured, reference: Measured) -> tuple[float, float]:
    """A candidate's time over IREE's own, compared round by round (the benchmark times
    each once per round): the median of the rounds' ratios and the upper bound of its 95%
    interval (`steadiness.median_interval`); the ratio of the medians where no round
    has both."""
    pairs = paired_ratios(run, reference)
    if not pairs:
        ratio = run.median_ns / reference.median_ns
        return ratio, ratio
    return statistics.median(pairs), median_interval(pairs)[1]


def judge(
    tunable: Tunable,
    finalists: Sequence[Candidate],
    compiled: dict[tuple[str, str], Compiled],
    measured: dict[tuple[str, str], Measured],
    options: TuneOptions,
    benchmarked: bool,
) -> None:
    """Each candidate's fate: dropped (failed, wrong), kept (top-k faster than IREE's by
    `options.faster_by`, round by round, with the 95% interval of its ratio to IREE's
    below 1: `against`), or slower. Without benchmarks, the first k that built are kept."""
    results = tunable.result.candidates
    reference: Measured | None = None
    timed: list[tuple[Measured, CandidateResult]] = []
    for candidate in finalists:
        key = (tunable.export, candidate.name)
        build = compiled[key]
        if build.vmfb is None:
            results.append(CandidateResult(candidate.name, FAILED_TO_COMPILE, detail=build.error))
            continue
        run = measured.get(key)
        if not benchmarked:
            results.append(CandidateResult(candidate.name, SLOWER))
            continue
        if run is None or run.error is not None or not run.times_ns:
            results.append(
                CandidateResult(candidate.name, FAILED_TO_RUN, detail=run.error if run else None)
            )
            continue
        if candidate.is_default:
            reference = run
            results.append(CandidateResult(candidate.name, REFERENCE, run.median_ns, ratio=1.0))
            continue
        if reference is None or not agree(run.outputs, reference.outputs, options.tolerance):
            why = (
                "IREE's own configuration gave none to compare with" if reference is None else None
            )
            results.append(CandidateResult(candidate.name, WRONG, run.median_ns, why))
            continue
        results.append(CandidateResult(candidate.name, SLOWER, run.median_ns))
        timed.append((run, results[-1]))
    if not benchmarked:
        for result in [r for r in results[1:] if r.fate == SLOWER][: options.top_k]:
            result.fate = KEPT
        return
    if reference is None:
        return
    noise, kept = (options.faster_by - 1) * 100, 0
    for run, result in sorted(timed, key=lambda t: t[0].median_ns):
        ratio, high = against(run, reference)
        result.ratio = ratio
        gain = (1.0 / ratio - 1) * 100
        if ratio * options.faster_by >= 1.0 or high >= 1.0:
            if ratio < 1.0:
                result.fate = NOISE
                result.detail = f"{gain:.1f}% faster than IREE's own: within noise " + (
                    f"(< {noise:g}%)"
                    if ratio * options.faster_by >= 1.0
                    else f"(its 95% interval reaches IREE's time: up to {high:.3f}x)"
                )
        elif kept < options.top_k:
            result.fate, kept = KEPT, kept + 1
        else:
            result.detail = (
                f"{gain:.1f}% faster than IREE's own, not among the {options.top_k} fastest"
            )
