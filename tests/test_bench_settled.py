"""A dispatch's candidates are timed until what is kept is settled: after the rounds
asked for, the timing ends early once every candidate's 99% interval of ratios to IREE's
own (round by round) lies wholly on one side of the ratio the decision reads; a candidate
whose interval holds it keeps the timing going to its budget."""

from __future__ import annotations

from test_bench_operands import ACCUMULATING

from autotune_bridge import parse_module
from autotune_model.bench import (
    BenchmarkJob,
    CompileJob,
    Measured,
    _settled,
    bench_module,
    benchmark_dispatch,
    compile_candidate,
)
from autotune_model.candidates import DEFAULT, Candidate
from autotune_model.measure import function_inputs, model_function
from autotune_model.sizes import host_values
from autotune_model.steadiness import LOOK_EVERY
from autotune_model.tuning_setup import flow_phase
from lowering.driver import target_flags

OTHER = Candidate("t8x8", "#config")
RESOLVE = 1 / 1.03


def job(resolve: float | None = RESOLVE, repeats: int = 15) -> BenchmarkJob:
    return BenchmarkJob("d", ((DEFAULT, b""), (OTHER, b"")), (), repeats=repeats, resolve=resolve)


def measured(own: list[int], other: list[int]) -> list[Measured]:
    return [Measured("d", DEFAULT, own), Measured("d", OTHER, other)]


def test_a_candidate_clearly_faster_or_slower_is_settled():
    rounds = 16
    own = [1000 + (i % 3) * 10 for i in range(rounds)]
    assert _settled(job(), measured(own, [t // 2 for t in own]), rounds)  # 2x faster
    assert _settled(job(), measured(own, own), rounds)  # as fast: never kept


def test_a_candidate_whose_interval_holds_the_bound_is_not_settled():
    rounds = 16
    own = [1000] * rounds
    near = [int(1000 * RESOLVE) + (15 if i % 2 else -15) for i in range(rounds)]
    assert not _settled(job(), measured(own, near), rounds)


def test_nothing_is_settled_before_the_rounds_asked_for_or_without_a_bound():
    own = [1000] * 40
    half = [500] * 40
    assert not _settled(job(repeats=24), measured(own[:16], half[:16]), 16)
    assert not _settled(job(resolve=None), measured(own, half), 40)
    assert not _settled(job(), measured(own[:17], half[:17]), 17)  # between two looks
    assert 17 % LOOK_EVERY


def test_the_timing_of_a_settled_dispatch_ends_at_the_first_look_after_its_rounds():
    """IREE's own configuration and a copy of it: their ratio is about 1, far above a
    bound of 0.5, so the timing ends at round 16 (the first look after 15 rounds) instead
    of running its 60 s."""
    text = flow_phase(ACCUMULATING, "llvm-cpu", None, "acc.mlir")
    module = parse_module(text)
    function = model_function(module, None)
    inputs = function_inputs(function, None)
    values = host_values(function.body, function.arguments, [o.shape for o in inputs])
    (dispatch,) = function.dispatches()
    bench = bench_module(module, dispatch, values)
    flags = (*target_flags("llvm-cpu", None), *bench.flags)
    built = compile_candidate(CompileJob("d", DEFAULT, bench, flags))
    assert built.vmfb is not None, built.error
    timed = BenchmarkJob(
        "d",
        ((DEFAULT, built.vmfb), (OTHER, built.vmfb)),
        bench.operands,
        repeats=15,
        seconds=30.0,
        resolve=0.5,
    )
    results = benchmark_dispatch(timed)
    assert [len(r.times_ns) for r in results] == [16, 16]
