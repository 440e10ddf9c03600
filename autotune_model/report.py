"""What tuning a model found: per dispatch, each candidate's fate and time; for the model,
its end-to-end time against the stock build; the wall time spent; and its summary lines.
Written as JSON next to the tuned module; shown by `report_view`."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field

from autotune_model.steadiness import (
    UNSTEADY_HELD_UP,
    UNSTEADY_SPREAD,
    Comparison,
    MachineLoad,
)

REPORT_VERSION = 1

# The fate of a candidate.
REFERENCE = "reference"  # IREE's own configuration: always a variant, first
KEPT = "kept"  # a variant of the tuned dispatch's group
SLOWER = "slower"  # correct, but not among the top-k faster than the default
NOISE = "within noise"  # faster than the default by less than the tuner trusts
FAILED_TO_COMPILE = "failed to compile"
FAILED_TO_RUN = "failed to run"
WRONG = "wrong results"
FAILED = (FAILED_TO_COMPILE, FAILED_TO_RUN, WRONG)

# Where a frozen module's choice for a dispatch came from.
CACHE = "cache"  # the tuning cache's decision (`--freeze --cache`)
TUNING = "tuning"  # this run's tuning: the offline winner


@dataclass
class CandidateResult:
    """One candidate of a dispatch: its name, what became of it, its median time, and
    its time over IREE's own configuration's, round by round in the benchmark run that
    timed both (`tunable.against`; IREE's own: 1; None where not timed against it)."""

    name: str
    fate: str
    median_ns: float | None = None
    detail: str | None = None
    ratio: float | None = None


TIED = 0.03
"""Kept candidates whose ratios to IREE's own lie within this share of the lowest one's
are not told apart: the first of them in the search's order runs (round one's before the
rounds after it). The ratios are paired round by round beside IREE's own, which a burst
on one call moves less than a median; and two tunings of one model on a busy machine
then keep the same candidate where their timings differ by noise (the Flax BERT tuned
twice beside two busy processes kept the same candidate for 60% of its dispatches, by
the lowest median, most others near-ties)."""


@dataclass
class FrozenChoice:
    """What a frozen (`static`) module runs for a dispatch: a candidate's name (`default`:
    IREE's own), where the choice came from (`CACHE` or `TUNING`), and the workload the
    cache decided it for (None: every workload)."""

    variant: str
    source: str
    workload: list[int] | None = None

    def __str__(self) -> str:
        return f"{self.variant} at {self.workload}" if self.workload else self.variant


@dataclass
class ModelGain:
    """What a kept dispatch gained in the model against what it gained alone
    (`autotune_model.gains`): per model call, the time its winner saved alone (times its
    dispatches per call), the model's time with it at IREE's own configuration less with
    every group at its winner, that difference's noise (two standard errors), the model's
    time, and a sentence on whether the promise held."""

    promised_ns: float
    gained_ns: float
    noise_ns: float
    dispatches_per_call: int
    model_ns: float
    why: str


@dataclass
class DispatchResult:
    """One tuned dispatch: its export, the sizes it was benchmarked at, its candidates."""

    export: str
    root_op: str
    workload: list[int]
    operands: list[str]  # the tensor operands' shapes, as `16x256xf32`
    candidates: list[CandidateResult] = field(default_factory=list)
    frozen: list[FrozenChoice] = field(default_factory=list)  # `static`: what runs
    model_gain: ModelGain | None = None  # measured in the model (None: not measured)
    per_call: int = 1  # how many times a call of the model runs it

    @property
    def default_ns(self) -> float | None:
        return self.candidates[0].median_ns if self.candidates else None

    @property
    def best(self) -> CandidateResult | None:
        """The fastest variant of the tuned module (IREE's own when none was kept): by the
        ratios to IREE's own, the first within `TIED` of the lowest; by the medians in a
        report that has no ratios."""
        timed = [c for c in self.candidates if c.fate in (REFERENCE, KEPT) and c.median_ns]
        if not timed:
            return None
        if any(c.ratio is None for c in timed):
            return min(timed, key=lambda c: c.median_ns)  # type: ignore[arg-type, return-value]
        lowest = min(c.ratio for c in timed)  # type: ignore[type-var]
        return next(c for c in timed if c.ratio <= lowest * (1.0 + TIED))  # type: ignore[operator]

    @property
    def best_ns(self) -> float | None:
        """The best variant's time per run, as compared with IREE's own: IREE's median
        times the best's ratio (paired round by round; the two medians, taken apart, may
        even stand the other way), its own median in a report that has no ratios."""
        best = self.best
        if best is None or not best.median_ns:
            return None
        if best.ratio is None or not self.default_ns:
            return best.median_ns
        return self.default_ns * best.ratio

    @property
    def speedup(self) -> float | None:
        best_ns = self.best_ns
        if not best_ns or not self.default_ns:
            return None
        return self.default_ns / best_ns

    @property
    def failed(self) -> int:
        return sum(1 for c in self.candidates if c.fate in FAILED)

    @property
    def kept(self) -> list[str]:
        return [c.name for c in self.candidates if c.fate == KEPT]


@dataclass
class ModelTiming:
    """End to end: median time of one call of the model, stock build and tuned module,
    measured interleaved in one run."""

    function: str
    stock_ns: float
    tuned_ns: float
    calls: int
    settle_calls: int | None = None
    """`online`: the calls the tuned module took until every group had decided for the
    sizes it saw (before the timing); None for the other policies."""
    settled: bool = True
    """Whether it did within the calls allowed (`time_model`'s `warmup_calls`)."""
    paired: float | None = None
    """The median over the rounds of the tuned call's time over the stock call's
    (`steadiness.time_rounds`); None in a report of an older version."""
    interval: list[float] | None = None
    """The confidence interval of `paired` (95%, distribution-free)."""
    held_up: float = 0.0
    """The share of calls during which another process held a core this one waited for
    (each such call was taken again, up to `steadiness.RETRIES` times)."""
    spread: float = 0.0
    """The rounds' ratios' interquartile range over their median: the noise the timing
    had to see through (the stock build's own calls drift more, but a drift falls on both
    calls of a round)."""
    runnable: int = 0
    """The most other tasks runnable on the machine seen during the timing."""
    rounds: list[float] = field(default_factory=list, repr=False)
    """Each round's ratio, for a comparison over several loads (`measure.compared`); kept
    in memory only: a report's JSON leaves them out."""

    @property
    def ratio(self) -> float:
        return self.paired if self.paired is not None else self.tuned_ns / self.stock_ns

    @property
    def upper(self) -> float:
        """The upper bound of the ratio's interval (the ratio itself without one)."""
        return self.interval[1] if self.interval else self.ratio

    @property
    def steady(self) -> bool:
        return self.held_up < UNSTEADY_HELD_UP and self.spread < UNSTEADY_SPREAD

    def steadiness(self) -> str:
        """The machine during the timing, in words."""
        state = "steady" if self.steady else "unsteady (a busy machine)"
        return (
            f"timing {state}: {self.held_up:.0%} of calls held up (their threads waited for "
            "a CPU), "
            f"spread of the rounds' ratios {self.spread:.1%}, up to {self.runnable} "
            "other runnable tasks"
        )


@dataclass
class BaseBuild:
    """IREE's whole-compilation options the tuned module is built with (`name`, its
    `flags`; `autotune_model.base_builds`), and each option set's time per call relative
    to the stock build's, measured interleaved with it: the median of its fresh loads (None:
    it did not build), and the 95% interval of that median over every load's rounds
    (`intervals`). A set is taken only when faster in every load and by the interval."""

    name: str = "stock"
    flags: list[str] = field(default_factory=list)
    ratios: dict[str, float | None] = field(default_factory=dict)
    tuned_over_stock: list[float] = field(default_factory=list)
    """Where the timing chose options other than the stock ones: the tuned module's time
    per call over the stock build's, in each of a few fresh loads, and its interval
    (`tuned_over_stock_interval`): where it may be slower, the stock build's dispatches
    are tuned instead."""
    intervals: dict[str, list[float]] = field(default_factory=dict)
    tuned_over_stock_interval: list[float] = field(default_factory=list)
    head_to_head: list[str] = field(default_factory=list)
    """Where the two fastest sets by `ratios` were close: their names, the faster first;
    they were then timed against each other (`head_to_head_loads`), and that decided."""
    head_to_head_loads: list[float] = field(default_factory=list)
    """The second's time per call over the first's, in each of a few fresh loads, and the
    interval over their rounds (`head_to_head_interval`): where both are below 1, the second
    is `name`."""
    head_to_head_interval: list[float] = field(default_factory=list)
    threads: int | None = None
    """The thread count code generation was told (`base_builds.THREADS_FLAG`, in `flags`
    too); None: IREE's default."""
    threads_tried: int | None = None
    """Where the thread count was timed (`base_builds.choose_threads`): the count tried,
    and the build told it over the build not told, in each fresh load (`threads_loads`)."""
    threads_loads: list[float] = field(default_factory=list)
    threads_interval: list[float] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The build's name in reports: the option set's, with the thread count told."""
        return self.name if self.threads is None else f"{self.name} ({self.threads} threads)"


@dataclass
class JobTimes:
    """The candidates' jobs, every round: how many candidates were compiled and how many of
    them the compile cache held (`cached`), the wall seconds of compiling them (the cache's
    look-ups included) and of benchmarking them, and the compile cache's folder (None:
    none was used)."""

    compiled: int = 0
    cached: int = 0
    compile_s: float = 0.0
    benchmark_s: float = 0.0
    compile_cache: str | None = None


@dataclass
class TuneReport:
    """Everything `tune_model` measured and decided."""

    model: str
    target: str
    arch: str | None
    policy: str
    executor: str
    dispatches: list[DispatchResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # export -> why not tuned
    notes: list[str] = field(default_factory=list)
    timing: ModelTiming | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> wall time
    # Largest resident memory while tuning (MB): this process, and the largest of the
    # processes it started (iree-compile); None where not measured.
    peak_rss_mb: dict[str, int] | None = None
    cache: str | None = None  # the tuning cache whose decisions were frozen
    base: BaseBuild = field(default_factory=BaseBuild)
    jobs: JobTimes = field(default_factory=JobTimes)
    device: str = ""  # the device candidates and the model were timed on
    machine: MachineLoad | None = None  # how busy the machine was (`steadiness`)

    def to_json(self) -> str:
        data = asdict(self)
        if data["timing"] is not None:
            del data["timing"]["rounds"]
        data["version"] = REPORT_VERSION
        return json.dumps(data, indent=2, allow_nan=False, default=str)

    @classmethod
    def from_json(cls, text: str) -> TuneReport:
        """A report written by `to_json`; ValueError names what is wrong."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"not JSON ({err.msg} at line {err.lineno})") from None
        if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
            raise ValueError(f"not a tune-model report of version {REPORT_VERSION}")
        try:
            dispatches = [
                DispatchResult(
                    d["export"],
                    d["root_op"],
                    list(d["workload"]),
                    list(d["operands"]),
                    [CandidateResult(**c) for c in d["candidates"]],
                    [FrozenChoice(**f) for f in d.get("frozen", [])],
                    ModelGain(**d["model_gain"]) if d.get("model_gain") else None,
                    int(d.get("per_call", 1)),
                )
                for d in data["dispatches"]
            ]
            timing = ModelTiming(**data["timing"]) if data.get("timing") else None
            return cls(
                data["model"],
                data["target"],
                data["arch"],
                data["policy"],
                data["executor"],
                dispatches,
                dict(data["skipped"]),
                list(data["notes"]),
                timing,
                dict(data["seconds"]),
                data.get("peak_rss_mb"),
                data.get("cache"),
                _base_build(data["base"]) if data.get("base") else BaseBuild(),
                JobTimes(**data["jobs"]) if data.get("jobs") else JobTimes(),
                str(data.get("device", "")),
                MachineLoad(**data["machine"]) if data.get("machine") else None,
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"a tune-model report with a missing or bad field ({err})") from None


def _base_build(data: dict) -> BaseBuild:
    """A report's `base`; ValueError where its timings are not numbers."""
    base = BaseBuild(**data)
    number = (int, float)
    if not isinstance(base.tuned_over_stock, list) or not all(
        isinstance(r, number) and not isinstance(r, bool) for r in base.tuned_over_stock
    ):
        raise ValueError("a tune-model report whose base.tuned_over_stock is not a list of numbers")
    if not isinstance(base.ratios, dict) or not all(
        r is None or (isinstance(r, number) and not isinstance(r, bool))
        for r in base.ratios.values()
    ):
        raise ValueError("a tune-model report whose base.ratios are not numbers")
    if not isinstance(base.head_to_head_loads, list) or not all(
        isinstance(r, number) and not isinstance(r, bool) for r in base.head_to_head_loads
    ):
        raise ValueError("a tune-model report whose base.head_to_head_loads are not numbers")
    pairs = [base.tuned_over_stock_interval, base.head_to_head_interval, base.threads_interval]
    if not isinstance(base.intervals, dict) or not all(
        _interval(i) for i in [*base.intervals.values(), *pairs] if i
    ):
        raise ValueError("a tune-model report whose base intervals are not pairs of numbers")
    if (
        not isinstance(base.head_to_head, list)
        or len(base.head_to_head) not in (0, 2)
        or not all(isinstance(name, str) for name in base.head_to_head)
    ):
        raise ValueError("a tune-model report whose base.head_to_head is not two names")
    return base


def _interval(value: object) -> bool:
    """Whether a report's `value` is an interval: two numbers, the lower first."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and value[0] <= value[1]
    )


def format_us(ns: float | None) -> str:
    return "-" if ns is None or not math.isfinite(ns) else f"{ns / 1000:.1f}"


def _end_to_end(report: TuneReport) -> list[str]:
    t = report.timing
    if t is None:
        return []
    head = f"end to end (@{t.function}, {t.calls} calls each): "
    stock = report.base.label
    if not any(d.kept for d in report.dispatches):
        return [
            head + f"no variant was kept, so the module is the {stock} build "
            f"({stock} {format_us(t.stock_ns)} us, this build {format_us(t.tuned_ns)} us: the "
            "difference is noise)",
            *_steadiness(t),
        ]
    interval = (
        f", 95% interval {t.interval[0]:.3f}-{t.interval[1]:.3f}" if t.interval is not None else ""
    )
    lines = [
        head + f"{stock} {format_us(t.stock_ns)} us, tuned {format_us(t.tuned_ns)} us, "
        f"tuned/{stock} {t.ratio:.3f} ({1 / t.ratio:.2f}x{interval})"
    ]
    if t.settle_calls is not None:
        state = "every group settled" if t.settled else "not every group had settled"
        lines.append(f"online tuning: {state} after {t.settle_calls} calls")
    return lines + _steadiness(t)


def _steadiness(t: ModelTiming) -> list[str]:
    """The machine during the timing (a timing of this version: compared round by round)."""
    return [t.steadiness()] if t.paired is not None else []


def _base(report: TuneReport) -> list[str]:
    """Which of IREE's whole-compilation options the module is built with, and how each
    one tried compared with the stock build."""
    base = report.base
    tried = [
        f"{name} {'did not build' if ratio is None else f'{ratio:.3f}x'}"
        + (
            f" ({base.intervals[name][0]:.3f}-{base.intervals[name][1]:.3f})"
            if name in base.intervals
            else ""
        )
        for name, ratio in base.ratios.items()
        if name != "stock"
    ]
    if not tried and not base.flags and base.threads_tried is None:
        return []
    flags = " ".join(base.flags) or "IREE's defaults"
    line = f"build options: {base.name} ({flags})"
    if tried:
        line += (
            "; tried against the stock build (median load and 95% interval; taken only when "
            f"faster in every load and by the interval): {', '.join(tried)}"
        )
    lines = [line]
    if base.head_to_head and base.head_to_head_loads:
        first, second = base.head_to_head
        against = _compared(base.head_to_head_loads, base.head_to_head_interval)
        lines.append(
            f"the two fastest, close, timed against each other: {second} took {against} "
            f"the time of {first}"
        )
    if base.threads_tried is not None:
        found = "it did not build"
        if base.threads_loads:
            found = f"{_compared(base.threads_loads, base.threads_interval)} the time not told"
        taken = "taken" if base.threads is not None else "not taken"
        lines.append(
            f"code generation told {base.threads_tried} threads (the device's): {found}; {taken}"
        )
    if base.tuned_over_stock and base.flags:  # (else the notes say why the stock build stands)
        against = _compared(base.tuned_over_stock, base.tuned_over_stock_interval)
        lines.append(f"the module built with them against the stock build: {against}")
    return lines


def _compared(loads: list[float], interval: list[float]) -> str:
    """Loads' ratios in words, with their interval where the report has one."""
    if interval:
        return Comparison(loads, (interval[0], interval[1])).words()
    each = ", ".join(f"{r:.3f}" for r in loads)
    return f"{statistics.median(loads):.3f}x (median of {len(loads)} fresh loads: {each})"


def _frozen(report: TuneReport) -> list[str]:
    sources = [f.source for d in report.dispatches for f in d.frozen[:1]]
    if not sources:
        return []
    cache = f" {report.cache}" if report.cache else ""
    cached = sources.count(CACHE)
    return [
        f"frozen: {cached} dispatch{'' if cached == 1 else 'es'} as the tuning cache{cache} "
        f"decided, {sources.count(TUNING)} as this run's tuning chose"
    ]


def _jobs(report: TuneReport) -> list[str]:
    """Compiling against benchmarking, and how many builds the compile cache gave."""
    jobs = report.jobs
    if not jobs.compiled:
        return []
    where = (
        f"{jobs.cached} from the compile cache {jobs.compile_cache}"
        if jobs.compile_cache
        else "no compile cache"
    )
    on = f" on {report.device}" if report.device else ""
    timed = f", benchmarked{on} in {jobs.benchmark_s:.1f} s" if jobs.benchmark_s else ""
    return [
        f"compiled {jobs.compiled} candidate{'' if jobs.compiled == 1 else 's'} in "
        f"{jobs.compile_s:.1f} s ({where}){timed}"
    ]


def _model_gains(report: TuneReport) -> list[str]:
    """Per kept dispatch measured in the model: promised alone, gained there, and why."""
    measured = [d for d in report.dispatches if d.model_gain is not None]
    if not measured:
        return []
    promised = sum(d.model_gain.promised_ns for d in measured)  # type: ignore[union-attr]
    gained = sum(d.model_gain.gained_ns for d in measured)  # type: ignore[union-attr]
    # each gain is timed on its own: their noises add as independent errors do
    noise = math.sqrt(sum(d.model_gain.noise_ns**2 for d in measured))  # type: ignore[union-attr]
    lines = [
        f"in the model: {len(measured)} tuned dispatch{'' if len(measured) == 1 else 'es'} "
        f"promised {format_us(promised)} us per call alone and gained {format_us(gained)} us "
        f"(noise +-{format_us(noise)} us)"
    ]
    for d in measured:
        lines.append(f"  {d.export}: {d.model_gain.why}")  # type: ignore[union-attr]
    return lines


SHOWN_FIRST = 5
"""How many of the dispatches that hold most of the model's time the summary names first."""


def where_the_time_is(report: TuneReport) -> list[str]:
    """The dispatches tuned that hold most of the model's time (their time alone with
    IREE's own configuration, times how often a call runs them, against the build's time
    per call where the model was timed), and what tuning did to each."""
    timed = [d for d in report.dispatches if d.default_ns]
    if not timed:
        return []
    share = {d.export: d.default_ns * d.per_call for d in timed}  # type: ignore[operator]
    total = sum(share.values())
    whole = report.timing.stock_ns if report.timing is not None else total
    ranked = sorted(timed, key=lambda d: -share[d.export])
    of_model = ""
    if report.timing is not None:
        of_model = (
            f", {100 * total / whole:.0f}% of the {report.base.label} build's time per call "
            f"({format_us(whole)} us)"
        )
    lines = [
        f"where the time is: the {len(timed)} tuned dispatch{'' if len(timed) == 1 else 'es'} "
        f"take {format_us(total)} us per call alone{of_model}; the largest:"
    ]
    for d in ranked[:SHOWN_FIRST]:
        times = f", {d.per_call} times per call" if d.per_call > 1 else ""
        lines.append(
            f"  {d.export} ({d.root_op}{times}): {100 * share[d.export] / whole:.0f}%, "
            f"{format_us(d.default_ns)} us each; {_what_tuning_did(d)}"
        )
    if report.skipped:
        lines.append(
            f"  and {len(report.skipped)} dispatch{'' if len(report.skipped) == 1 else 'es'} not "
            "tuned (why, and the time alone of those too small to pay: the 'not tuned' lines)"
        )
    return lines


def _what_tuning_did(d: DispatchResult) -> str:
    """What became of a dispatch: the variant it runs and how much faster alone, or why
    none was kept."""
    if d.frozen and all(f.source == CACHE for f in d.frozen):
        return "as the tuning cache decided"
    best, speedup = d.best, d.speedup
    if d.kept and best is not None and speedup:
        gained = ""
        if d.model_gain is not None:
            gained = f", {format_us(d.model_gain.gained_ns)} us per call in the model"
        return f"runs {best.name}, {speedup:.2f}x faster alone{gained}"
    tried = [c for c in d.candidates if c.fate != REFERENCE and c.fate not in FAILED]
    fastest = min((c for c in tried if c.median_ns), key=lambda c: c.median_ns or 0.0, default=None)
    if fastest is None or not fastest.median_ns or not d.default_ns:
        return f"IREE's own: no candidate ran ({d.failed} of {len(d.candidates) - 1} failed)"
    why = fastest.detail or fastest.fate
    return (
        f"IREE's own: the fastest candidate, {fastest.name}, ran "
        f"{d.default_ns / fastest.median_ns:.2f}x alone ({why})"
    )


def summary_lines(report: TuneReport) -> list[str]:
    """Where the model's time is, its end-to-end result, what was frozen, the time spent,
    and what was dropped or skipped."""
    lines = where_the_time_is(report) + _base(report) + _end_to_end(report)
    lines += _model_gains(report) + _frozen(report)
    if report.machine is not None:
        lines.append(report.machine.words())
    spent = ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in report.seconds.items())
    lines.append(f"tuning time: {spent}")
    lines += _jobs(report)
    if report.peak_rss_mb:
        memory = report.peak_rss_mb
        lines.append(
            f"peak memory: {memory['tuner']} MB (tuner), {memory['compiler']} MB (largest "
            "iree-compile)"
        )
    for d in report.dispatches:
        for c in d.candidates:
            if c.fate in FAILED:
                lines.append(
                    f"dropped {d.export} {c.name}: {c.fate}"
                    + (f" ({c.detail})" if c.detail else "")
                )
    for export, why in report.skipped.items():
        lines.append(f"not tuned {export}: {why}")
    return lines + report.notes
