"""Online tuning on a machine doing other work: no variant is dropped on a cold run alone,
a run held up by other processes (its threads waited for a CPU) decides nothing, and a
real module tuned beside busy processes (`benchmarks.load.BusyLoad`) chooses as on the idle
machine. Decisions only: no timed assertion."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from autotune_model.report import KEPT, REFERENCE, TIED, CandidateResult, DispatchResult
from autotune_model.steadiness import RETRIES, call_left_alone, median_interval, time_rounds
from autotune_runtime import StopRule, load
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.run_queue import (
    DISTURBED_FLOOR_NS,
    StampedClock,
    disturbed,
    held_up,
    thread_clocks,
)
from autotune_runtime.stats import VariantStats, next_or_winner
from autotune_runtime.tuner import Tuner
from benchmarks.load import BusyLoad, runnable_processes
from lowering.driver import compile
from tests.conftest import ROOT

NAMES = ("slow", "fast", "middle")
WARM_NS = (900_000.0, 300_000.0, 500_000.0)


def one_group(**params) -> dict[int, GroupInfo]:
    return {0: GroupInfo(0, "g", None, NAMES, "online", params=params)}


def tune(tuner: Tuner, run) -> tuple[str, list[VariantStats]]:
    """Call the group until it commits; `run(variant, nth run of it)` gives (elapsed, wait)."""
    for _ in range(10_000):
        variant, committed, _ = tuner.select(0, ())
        if committed:
            return NAMES[variant], tuner.states[(0, ())].variants
        stats = tuner.states[(0, ())].variants[variant]
        elapsed, waited = run(variant, stats.runs)
        tuner.record(0, variant, elapsed, (), waited)
    raise AssertionError("no decision")


def test_a_variant_is_never_dropped_on_its_cold_run_alone():
    """The fastest variant's warm-up run lands in a burst (10x): before, it was dropped
    early with 0 timed samples and the slowest variant won."""
    variants = [VariantStats() for _ in NAMES]
    rule = StopRule(warmup=1, min_samples=3)
    for _ in range(1000):
        nxt, winner = next_or_winner(rule, variants)
        if winner is not None:
            break
        v = variants[nxt]
        cold_burst = nxt == 1 and v.runs == 0
        v.add(WARM_NS[nxt] * (10.0 if cold_burst else 1.0), rule.warmup)
        assert all(s.samples or not s.eliminated for s in variants)
    assert NAMES[winner] == "fast"
    assert all(s.samples for s in variants)  # each was timed before it was judged


def test_a_burst_on_one_variants_runs_does_not_decide():
    """Every timed run of the fastest variant but its last lands in a burst that its
    threads' wait for a CPU shows: those runs are discounted, and it still wins. The same
    times without the wait (a plain clock) eliminate it."""

    def bursty(shown: bool):
        def run(variant: int, nth: int) -> tuple[float, float]:
            if variant == 1 and 1 <= nth <= 4:
                return WARM_NS[1] * 8, (WARM_NS[1] * 7 if shown else 0.0)
            return WARM_NS[variant], 1_000.0

        return run

    winner, stats = tune(Tuner(one_group()), bursty(shown=True))
    assert winner == "fast"
    assert stats[1].discounted == 4 and len(stats[1].samples) >= 3
    assert max(stats[1].samples) == WARM_NS[1]  # none of the burst's runs is a sample
    plain, plain_stats = tune(Tuner(one_group()), bursty(shown=False))
    assert plain != "fast" and plain_stats[1].eliminated


def test_held_up_runs_that_no_wait_shows_do_not_eliminate_the_fastest():
    """Two of the fastest variant's first three timed runs take 2.5x and no wait for a CPU
    shows it (other work held them up unseen: another machine's on the same host, or the
    memory the busy processes share). Its median is then above the middle variant's, but
    its fast runs are not: it is not eliminated on that, sampling goes on, and it wins."""

    def unseen(variant: int, nth: int) -> tuple[float, float]:
        if variant == 1 and nth in (1, 2):
            return WARM_NS[1] * 2.5, 0.0
        return WARM_NS[variant], 1_000.0

    winner, stats = tune(Tuner(one_group()), unseen)
    assert winner == "fast", [(s.samples, s.eliminated) for s in stats]
    assert max(stats[1].samples) == WARM_NS[1] * 2.5  # the held-up runs were samples


def test_one_held_up_run_that_no_wait_shows_does_not_drop_the_fastest():
    """The fastest variant's first timed run takes 10x (over `early_drop` times the
    reference's) and no wait for a CPU shows it (as on a CI runner, where this dropped the
    fastest of three variants 8x apart): its cold run was fast, so it is not dropped on
    that one run, and it wins. Where its cold run was as slow (two runs held up), the two
    are the `early_drop_samples` runs that drop it; with 3, a third slow run does."""

    def unseen(slow_runs: tuple[int, ...]):
        def run(variant: int, nth: int) -> tuple[float, float]:
            if variant == 1 and nth in slow_runs:
                return WARM_NS[1] * 10, 0.0
            return WARM_NS[variant], 1_000.0

        return run

    winner, stats = tune(Tuner(one_group()), unseen((1,)))
    assert winner == "fast" and WARM_NS[1] * 10 in stats[1].samples
    two, two_stats = tune(Tuner(one_group()), unseen((0, 1)))
    assert two != "fast" and two_stats[1].eliminated and two_stats[1].runs == 2
    three = Tuner(one_group(), rule=StopRule(early_drop_samples=3))
    winner, stats = tune(three, unseen((0, 1)))
    assert winner == "fast" and len(stats[1].samples) >= 2
    three = Tuner(one_group(), rule=StopRule(early_drop_samples=3))
    winner, stats = tune(three, unseen((0, 1, 2)))
    assert winner != "fast" and stats[1].eliminated and stats[1].runs == 3


def test_a_variant_with_one_run_as_fast_as_the_leaders_fastest_is_not_eliminated():
    """Four of the fastest variant's five samples held up unseen put its median above a
    variant 1.3x slower, outside the interval: its fastest sample (242 us, the other's
    fastest 317) keeps it, and sampling goes on (before: its lower quartile, its second
    fastest run, was compared, and it was eliminated; beside two busy processes in 1 of
    10 fresh loads of the tutorial's matmul)."""
    rule = StopRule(early_drop=math.inf)
    fastest, slower = VariantStats(), VariantStats()
    for sample in (242e3, 340e3, 345e3, 350e3, 352e3):
        fastest.add(sample, warmup=0)
    for sample in (317e3, 320e3, 322e3):
        slower.add(sample, warmup=0)
    following, winner = next_or_winner(rule, [slower, fastest])
    assert winner is None and not fastest.eliminated and following is not None
    assert not slower.eliminated


def test_near_tie_candidates_leave_the_first_one_kept_running():
    """Of kept candidates whose ratios to IREE's own differ by less than `TIED`, the first
    in the search's order runs, whichever measured lower this time (two tunings on a busy
    machine disagreed on near-ties); a candidate faster beyond it wins; a report written
    without ratios picks by the medians as before."""

    def dispatch(*kept: tuple[str, float, float]) -> DispatchResult:
        result = DispatchResult("e", "linalg.matmul", [64], [])
        result.candidates = [CandidateResult("default", REFERENCE, 1000.0, ratio=1.0)] + [
            CandidateResult(name, KEPT, median, ratio=ratio) for name, median, ratio in kept
        ]
        return result

    near = 0.80 * (1.0 - TIED / 2)
    assert dispatch(("t8", 800.0, 0.80), ("t16", 780.0, near)).best.name == "t8"
    far = 0.80 * (1.0 - 2 * TIED)
    assert dispatch(("t8", 800.0, 0.80), ("t16", 760.0, far)).best.name == "t16"
    old = dispatch(("t8", 800.0, 0.80), ("t16", 780.0, near))
    for candidate in old.candidates:
        candidate.ratio = None
    assert old.best.name == "t16"


def test_tuning_at_load_makes_a_held_up_run_again():
    """`init` loops until the commit as `explicit` does: runs of `fast` that another
    process held up (5x their time) are discounted and made again, and `fast` wins
    (before, when `init` ran each variant a fixed number of times, every run was a sample
    there, and beside two busy processes the tutorial's matmul chose as idle in 7 of 10
    loads)."""
    tuner = Tuner({0: GroupInfo(0, "g", None, NAMES, "init", keys=((),))}, rule=StopRule())

    def run(variant: int, nth: int) -> tuple[float, float]:
        if variant == 1 and 1 <= nth <= 3:  # its first three timed runs held up
            return 5 * WARM_NS[1], 4 * WARM_NS[1]
        return WARM_NS[variant], 0.0

    winner, stats = tune(tuner, run)
    assert winner == "fast"
    assert stats[1].discounted == 3
    assert max(stats[1].samples) == WARM_NS[1]


def test_a_machine_that_is_never_quiet_still_ends_tuning():
    """Every run disturbed: each variant discounts `max_samples` runs, then takes them as
    they come, and tuning commits."""
    rule = StopRule(max_samples=6)
    tuner = Tuner(one_group(), rule=rule)
    winner, stats = tune(tuner, lambda v, n: (WARM_NS[v], WARM_NS[v]))
    assert winner == "fast"
    assert all(s.discounted <= rule.max_samples for s in stats)
    assert stats[1].discounted == rule.max_samples and stats[1].samples


def test_what_counts_as_disturbed():
    assert not disturbed(300_000, DISTURBED_FLOOR_NS)  # a wake-up's few microseconds
    assert not disturbed(3_000_000, 400_000)  # a model's call waking its workers
    assert not disturbed(80_000, 50_000)  # a short dispatch whose workers were asleep
    assert disturbed(300_000, 150_000)
    assert disturbed(50_000, DISTURBED_FLOOR_NS + 1)


def test_the_stamped_clock_gives_each_timed_run_its_wait():
    ticks = iter([100, 250, 400, 1000])
    waits = iter([(0, 5), (0, 5), (0, 70), (0, 900)])
    clock = StampedClock(lambda: next(ticks), lambda: next(waits))
    t0 = clock.now()
    t1 = clock.now()
    assert clock.waited(t1 - t0) == 0
    t2 = clock.now()
    assert clock.waited(t2 - t1) == 65
    t3 = clock.now()
    assert clock.waited(t3 - t0) == 895  # across readings in between
    assert clock.waited(12345) == 0  # no reading that long before: nothing known


def _spin(seconds: float) -> None:
    import time

    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_wait_for_the_process_own_threads_is_no_disturbance():
    """Three threads on two cores wait for each other while the cores run them all; the
    same wait while the threads ran for half the cores' time left them to others."""
    elapsed = 1_000_000
    own = held_up(elapsed, (0, 0), (int(1.9 * elapsed), 800_000), cores=2)
    others = held_up(elapsed, (0, 0), (int(0.9 * elapsed), 800_000), cores=2)
    assert own == 0 and others == 800_000


@pytest.mark.skipif(
    not thread_clocks().available,
    reason="the kernel gives no per-thread scheduler statistics here (/proc/self/task/*/schedstat)",
)
def test_the_run_queue_wait_grows_when_other_processes_hold_the_cores():
    clocks = thread_clocks()
    before = clocks.read()[1]
    _spin(0.3)
    idle = clocks.read()[1] - before
    with BusyLoad(2 * (os.cpu_count() or 1)):
        before = clocks.read()[1]
        _spin(0.3)
        busy = clocks.read()[1] - before
    assert busy > 10 * max(idle, 1_000_000) or busy > 50_000_000, (idle, busy)


def test_the_load_harness_starts_and_stops_its_processes():
    with BusyLoad(2) as load_:
        assert load_.running == 2
        assert runnable_processes() >= 2
    assert load_.running == 0
    with pytest.raises(ValueError, match="processes must be >= 0"):
        BusyLoad(-1)


@pytest.fixture(scope="module")
def tutorial_matmul() -> bytes:
    """The tutorial's matmul: three tile sizes of a 256x256 matmul, 1.6-2.7x apart."""
    source = ROOT / "examples" / "matmul_cpu.mlir"
    return compile(source.read_text(), target="llvm-cpu", filename=source, policy="online")


def _online_choice(vmfb: bytes, **rule) -> tuple[str, list[dict]]:
    """The decision of a fresh load tuning online (`rule`: stop-rule options), and each
    variant's statistics."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2))
    with load(vmfb, "local-task", cache=False, **rule) as module:
        for _ in range(500):
            module.matmul(a, b)
            if module.decisions():
                break
        (state,) = module.stats()
    return state["decision"], state["variants"]


CLOSE = 0.15
"""Variants whose fastest idle runs are within this share of the fastest's are as good a
choice as it: their order is the machine's (on this 2-core VM the tutorial's tile sizes
are 1.5x and 2.6x apart, on another CPU the two larger may be close), which noise under
load may decide."""


def test_online_tuning_beside_busy_processes_chooses_as_on_the_idle_machine(tutorial_matmul):
    """The variant fastest on the idle machine (by its fastest of ten timed runs each), or
    one within `CLOSE` of it, is chosen beside two busy processes in 3 loads of 4, and
    nothing is judged without a timed sample."""
    every_variant_ten_times = {"min_samples": 10, "max_samples": 10, "early_drop": math.inf}
    _, idle_variants = _online_choice(tutorial_matmul, **every_variant_ten_times)
    assert all(v["samples"] == 10 for v in idle_variants), idle_variants
    fastest_ns = min(v["min_ns"] for v in idle_variants)
    good = {v["variant"] for v in idle_variants if v["min_ns"] <= fastest_ns * (1 + CLOSE)}
    slowest = max(idle_variants, key=lambda v: v["min_ns"])["variant"]
    assert slowest not in good, idle_variants  # the variants are apart on any machine
    with BusyLoad(2):
        choices = [_online_choice(tutorial_matmul) for _ in range(4)]
    for _, variants in choices:
        assert all(v["samples"] > 0 for v in variants), variants
    # one load of four may choose otherwise: beside two busy processes and a test run the
    # slowest was chosen in about 1 load of 25 here (held-up runs that no wait shows)
    assert sum(choice in good for choice, _ in choices) >= 3, (idle_variants, choices)


class FakeMachine:
    """A clock that calls advance by their cost, and a run-queue wait that grows by a
    burst on the calls listed in `bursts` (their numbers, from 0)."""

    def __init__(self, bursts: set[int]):
        self.now = 0
        self.waited = 0
        self.calls = 0
        self.bursts = bursts

    def clock(self) -> int:
        return self.now

    def threads(self) -> tuple[int, int]:
        return 0, self.waited

    def caller(self, cost_ns: int):
        def call() -> None:
            burst = self.calls in self.bursts
            self.now += cost_ns * (10 if burst else 1)
            self.waited += cost_ns * 9 if burst else 0
            self.calls += 1

        return call


def test_a_side_by_side_timing_takes_a_held_up_call_again_and_compares_round_by_round():
    machine = FakeMachine(bursts={3, 4, 9})
    rounds = time_rounds(
        machine.caller(1_000_000),
        machine.caller(800_000),
        budget_s=0.0,
        min_rounds=8,
        clock=machine.clock,
        threads=machine.threads,
    )
    assert len(rounds.ratios) == 8
    assert rounds.ratios == [0.8] * 8  # the bursts were taken again, none is a time
    assert rounds.held_up == 3 and rounds.calls == 16 + 3
    assert rounds.interval == (0.8, 0.8)
    assert rounds.disturbed_share == 3 / 19


def test_a_call_held_up_every_time_is_timed_after_the_retries():
    machine = FakeMachine(bursts=set(range(100)))
    elapsed, held_up = call_left_alone(machine.caller(100_000), machine.threads, machine.clock)
    assert held_up == RETRIES + 1 and machine.calls == RETRIES + 1
    assert elapsed == 1_000_000


def test_the_interval_of_a_median_holds_the_middle_and_leaves_out_bursts():
    ratios = [0.9] * 20 + [3.0, 5.0]  # two rounds where one call landed in a burst
    low, high = median_interval(ratios)
    assert low == high == 0.9
    spread = [0.80 + 0.01 * i for i in range(21)]  # 0.80 ... 1.00, median 0.90
    low, high = median_interval(spread)
    assert 0.80 < low < 0.90 < high < 1.00
    assert median_interval([1.2]) == (1.2, 1.2)


def test_loading_modules_again_and_again_opens_no_more_files(tutorial_matmul):
    """The threads' clocks are read through one set of open files per process, however
    many modules are loaded (each with its own workers) and timings taken: a file per
    live thread, not two a load (the process's other files, and threads that other
    libraries start meanwhile, are not this module's to count)."""
    a = np.ones((256, 256), np.float32)

    def clock_files() -> int:
        targets = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                targets.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                continue
        return sum(target.endswith("/schedstat") for target in targets)

    for _ in range(40):
        with load(tutorial_matmul, "local-task", cache=False) as module:
            module.matmul(a, a)
        time_rounds(lambda: None, lambda: None, budget_s=0.0, min_rounds=2)
    # (threads that ended since the last listing keep theirs until a read fails: a few)
    assert 0 < clock_files() <= len(os.listdir("/proc/self/task")) + 4


def test_a_timing_for_a_bound_ends_once_its_interval_is_clear_of_it():
    """0.8x against a bound of 1/1.03: clear of it, so the timing ends at the first look
    after a third of its budget (1.8 ms a round: 186 rounds, looked at every 8) instead of
    the whole budget's 556 rounds; ratios of 0.7 and 0.9 in turn hold a bound of 0.8, and
    the timing goes on to three times its budget."""

    def rounds_for(other_ns: tuple[int, ...], resolve: float | None) -> int:
        machine = FakeMachine(bursts=set())
        turns = iter(range(10**6))

        def other() -> None:
            machine.caller(other_ns[next(turns) % len(other_ns)])()

        timed = time_rounds(
            machine.caller(1_000_000),
            other,
            budget_s=1.0,
            min_rounds=8,
            resolve=resolve,
            clock=machine.clock,
            threads=machine.threads,
        )
        return len(timed.ratios)

    assert rounds_for((800_000,), None) == 556  # the budget: 556 rounds of 1.8 ms
    assert rounds_for((800_000,), 1 / 1.03) == 192  # 186 rounds, then the next look
    assert rounds_for((700_000, 900_000), 0.8) == 1667  # three times the budget
