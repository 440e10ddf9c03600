"""The search over each dispatch's candidates: rounds of building (or taking from the
compile cache) and timing side by side.

Before round one, where the model is timed, IREE's own configuration of each dispatch may
be timed alone (`Search.time_own`): the smallest dispatches are then not searched
(`TuneOptions.small_share`).

Round one builds and times the candidates around IREE's configuration (`candidates`).
Round two joins the best two changes to different tile lists (`combined`). Later rounds,
while the budget lasts (`TuneOptions.budget`, seconds), climb: each dispatch whose best
candidate beats IREE's own gets the candidates one step from that best (`around`), timed
side by side with IREE's own and the kept ones; a dispatch stops when a round finds it
nothing faster. A round takes only as many candidates as the budget left is expected to
build and time (at the cost per candidate seen so far), so the search ends near the
budget, never far past it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from autotune_model.bench import BenchmarkJob, Compiled, CompileJob, Measured, candidate_text
from autotune_model.candidates import Candidate, around, combined
from autotune_model.compile_cache import CompileCache, cache_key
from autotune_model.executors import Executor
from autotune_model.progress import Progress
from autotune_model.report import KEPT, NOISE, SLOWER, JobTimes
from autotune_model.tunable import Tunable, TuneOptions, judge

OWN_SECONDS = 0.05
"""Seconds per dispatch IREE's own configuration is timed for its share of the model's time
(`Search.time_own`; the winners' timing takes `BenchmarkJob.seconds`)."""


class CandidateBuilds:
    """Builds candidates with the compile job on the executor, taking those the compile
    cache holds from it (looked up here, before any job is sent: the jobs stay plain data,
    wherever they run) and keeping each new build there as it comes; counts and times
    every round in `times`."""

    def __init__(
        self,
        compile_job: Callable[[CompileJob], Compiled],
        executor: Executor,
        progress: Progress,
        times: JobTimes,
        cache: CompileCache | None,
    ):
        self.job, self.executor, self.progress, self.times = compile_job, executor, progress, times
        self.cache = cache
        times.compile_cache = None if cache is None else str(cache.folder)

    def compile(
        self, pairs: Sequence[tuple[Tunable, Candidate]], flags: tuple[str, ...]
    ) -> dict[tuple[str, str], Compiled]:
        """Every (dispatch, candidate) built alone: (export, candidate name) -> the outcome."""
        jobs = [CompileJob(t.export, c, t.bench, (*flags, *t.bench.flags)) for t, c in pairs]
        if not jobs:
            return {}
        started = time.perf_counter()
        self.progress.phase("compile candidates", len(jobs))
        done: dict[tuple[str, str], Compiled] = {}
        keys: dict[tuple[str, str], str] = {}
        todo: list[CompileJob] = []
        for job in jobs:
            name = (job.dispatch, job.candidate.name)
            job, key, found = self._look_up(job)
            if key is not None:
                keys[name] = key
            if found is not None:
                done[name] = found
                self.progress.advance(f"{job.dispatch} {job.candidate.name} (cached)")
            else:
                todo.append(job)

        def finished(result: Compiled) -> None:
            key = keys.get((result.dispatch, result.candidate.name))
            if self.cache is not None and key is not None:
                self.cache.put(key, result.vmfb, result.error)
            self.progress.advance(f"{result.dispatch} {result.candidate.name}")

        for result in self.executor.run(self.job, todo, finished) if todo else []:
            done[(result.dispatch, result.candidate.name)] = result
        self.times.compiled += len(jobs)
        self.times.cached += len(jobs) - len(todo)
        self.times.compile_s += time.perf_counter() - started
        return {(j.dispatch, j.candidate.name): done[(j.dispatch, j.candidate.name)] for j in jobs}

    def _look_up(self, job: CompileJob) -> tuple[CompileJob, str | None, Compiled | None]:
        """The job with its candidate's text made, the text's key, and the cache's build of
        it (None: not there). A candidate whose text cannot be made goes to its job as it
        is, which says why."""
        if self.cache is None:
            return job, None, None
        start = time.perf_counter()
        try:
            job = replace(job, text=candidate_text(job.bench, job.candidate))
        except ValueError:
            return job, None, None
        key = cache_key(job.text or "", job.flags)
        entry = self.cache.get(key)
        if entry is None:
            return job, key, None
        vmfb, error = entry
        seconds = time.perf_counter() - start
        return job, key, Compiled(job.dispatch, job.candidate, vmfb, error, seconds, cached=True)


@dataclass
class Search:
    """One run's search: how candidates are built and timed, and every outcome so far,
    by (export, candidate name)."""

    flags: tuple[str, ...]
    device: str
    options: TuneOptions
    builds: CandidateBuilds
    benchmark_job: Callable[[BenchmarkJob], list[Measured]]
    compiled: dict[tuple[str, str], Compiled] = field(default_factory=dict)
    measured: dict[tuple[str, str], Measured] = field(default_factory=dict)

    def build(self, pairs: Sequence[tuple[Tunable, Candidate]]) -> None:
        """Every (dispatch, candidate) built alone (or taken from the compile cache), but
        those built already."""
        pairs = [(t, c) for t, c in pairs if (t.export, c.name) not in self.compiled]
        self.compiled.update(self.builds.compile(pairs, self.flags))

    def time(self, tunables: Sequence[Tunable]) -> None:
        """Each dispatch's built finalists timed side by side, one job per dispatch (their
        wall time counted in the builds' `times`)."""
        self._run("benchmark dispatches", [self._job(t, t.finalists) for t in tunables])

    def time_own(self, tunables: Sequence[Tunable]) -> dict[str, float]:
        """IREE's own configuration of each dispatch, built, timed alone briefly (its share
        of the model's time is what is asked, not a winner): export -> median ns per
        dispatch (those that built and ran)."""
        jobs = [self._job(t, t.candidates[:1], OWN_SECONDS) for t in tunables]
        self._run("time IREE's own configurations", jobs)
        own = [self.measured.get((t.export, t.candidates[0].name)) for t in tunables]
        return {m.dispatch: m.median_ns for m in own if m is not None and m.times_ns}

    def _job(
        self, tunable: Tunable, candidates: Sequence[Candidate], seconds: float | None = None
    ) -> BenchmarkJob | None:
        """The benchmark job of the dispatch's `candidates` that built (None: none did)."""
        built = tuple(
            (c, vmfb)
            for c in candidates
            if (vmfb := self.compiled[(tunable.export, c.name)].vmfb) is not None
        )
        if not built:
            return None
        job = BenchmarkJob(
            tunable.export,
            built,
            tunable.bench.operands,
            self.device,
            repeats=self.options.repeats,
            dispatches=tunable.bench.repeat,
            resolve=1.0 / self.options.faster_by,
        )
        return job if seconds is None else replace(job, seconds=seconds, resolve=None)

    def _run(self, phase: str, jobs: Sequence[BenchmarkJob | None]) -> None:
        """The benchmark jobs run one at a time; what they measured in `measured`."""
        started = time.perf_counter()
        todo = [j for j in jobs if j is not None]
        if not todo:
            return
        progress = self.builds.progress
        progress.phase(phase, len(todo))
        done = self.builds.executor.run(
            self.benchmark_job,
            todo,
            lambda r: progress.advance(r[0].dispatch if r else ""),
            alone=True,
            gpu=self.options.target != "llvm-cpu",
        )
        self.measured.update({(m.dispatch, m.candidate.name): m for r in done for m in r})
        self.builds.times.benchmark_s += time.perf_counter() - started

    def judge_all(self, tunables: Sequence[Tunable], benchmarked: bool) -> None:
        """Round one's verdicts."""
        for tunable in tunables:
            judge(
                tunable, tunable.candidates, self.compiled, self.measured, self.options, benchmarked
            )

    def round(self, extra: dict[str, list[Candidate]], tunables: Sequence[Tunable]) -> None:
        """A later round: each dispatch's `extra` candidates built, then timed side by
        side with IREE's own and the kept candidates so far, and judged again with them."""
        taking = [t for t in tunables if extra.get(t.export)]
        self.build([(t, c) for t in taking for c in extra[t.export]])
        for tunable in taking:
            tunable.finalists = [
                tunable.candidates[0],
                *tunable.kept_candidates,
                *extra[tunable.export],
            ]
        self.time(taking)
        for tunable in taking:
            finalists = tunable.names(tunable.finalists)
            earlier = [r for r in tunable.result.candidates if r.name not in finalists]
            tunable.result.candidates = []
            judge(tunable, tunable.finalists, self.compiled, self.measured, self.options, True)
            tunable.result.candidates += earlier  # none of them is kept
            tunable.candidates.extend(extra[tunable.export])


def combine(search: Search, tunables: Sequence[Tunable]) -> None:
    """Round two: the best two changes to different tile lists, together."""
    extra = {t.export: [c] for t in tunables if (c := _combination(t)) is not None}
    search.round(extra, tunables)


def _combination(tunable: Tunable) -> Candidate | None:
    """The best candidate of round one joined with the best one that changes other tile
    lists, when both beat IREE's own."""
    default = tunable.result.default_ns
    by_name = {c.name: c for c in tunable.candidates}
    faster = sorted(
        (r for r in tunable.result.candidates if r.fate in (KEPT, SLOWER, NOISE) and r.median_ns),
        key=lambda r: r.median_ns or 0.0,
    )
    faster = [r for r in faster if default and r.median_ns and r.median_ns < default]
    for second in faster[1:]:
        joined = combined(tunable.config, by_name[faster[0].name], by_name[second.name])
        if joined is not None and joined.name not in by_name:
            return joined
    return None


def climb(search: Search, tunables: Sequence[Tunable], spent_s: float) -> list[str]:
    """Rounds around each dispatch's best candidate while `options.budget` seconds,
    counted from round one's start (`spent_s` ago), last; what it did, for the report."""
    budget = search.options.budget
    tried = sum(len(t.candidates) for t in tunables)
    if not budget or not tried or spent_s >= budget:
        return []
    per_candidate = spent_s / tried
    left, rounds, added = budget - spent_s, 0, 0
    climbing = list(tunables)
    while climbing and left > 0:
        extra = {t.export: _fresh(t, search.options.candidates) for t in climbing}
        extra = {k: v for k, v in extra.items() if v}
        allowed = int(left / per_candidate) if per_candidate > 0 else sum(map(len, extra.values()))
        extra = _within(extra, allowed)
        if not extra:
            break
        best_before = {t.export: _best_name(t) for t in climbing}
        started = time.perf_counter()
        search.round(extra, climbing)
        spent = time.perf_counter() - started
        count = sum(map(len, extra.values()))
        left -= spent
        per_candidate = max(per_candidate, spent / count)
        rounds, added = rounds + 1, added + count
        climbing = [
            t for t in climbing if t.export in extra and _best_name(t) != best_before[t.export]
        ]
    if not rounds:
        return []
    return [
        f"searched {rounds} more round{'s' if rounds > 1 else ''} around the best candidates "
        f"({added} candidates) within the budget of {budget:g} s"
    ]


def _best_name(tunable: Tunable) -> str | None:
    best = tunable.result.best
    return best.name if best is not None and best.fate == KEPT else None


def _fresh(tunable: Tunable, limit: int) -> list[Candidate]:
    """Up to `limit` candidates around the dispatch's best kept one that no round has
    tried."""
    name = _best_name(tunable)
    if name is None:
        return []
    centre = next(c for c in tunable.candidates if c.name == name)
    seen = {c.compilation_info for c in tunable.candidates} | tunable.names(tunable.candidates)
    fresh = []
    for candidate in around(tunable.config, centre):
        if candidate.compilation_info not in seen and candidate.name not in seen:
            seen.update((candidate.compilation_info, candidate.name))
            fresh.append(candidate)
    return fresh[:limit]


def _within(extra: dict[str, list[Candidate]], allowed: int) -> dict[str, list[Candidate]]:
    """At most `allowed` candidates in all, taken one per dispatch in turn (so every
    climbing dispatch gets its likeliest ones first)."""
    out: dict[str, list[Candidate]] = {k: [] for k in extra}
    depth = 0
    while allowed > 0 and any(depth < len(v) for v in extra.values()):
        for key, values in extra.items():
            if allowed > 0 and depth < len(values):
                out[key].append(values[depth])
                allowed -= 1
        depth += 1
    return {k: v for k, v in out.items() if v}
