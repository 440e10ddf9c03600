"""B8 warm start: a stream of calls over many sizes of one dynamic group.

One function group (`kernels.crossing_module`: three variants whose costs are `fixed +
rounds * n` in different proportions, so that the best variant changes with the length n in
two places) is called on 40 distinct lengths from 1 Ki to 256 Ki elements (log-spaced), 50
calls each, in one random order. Three fresh loads of the same online module run that
stream, in rotating order, several times:

- `warm`: default online tuning, each new length starting from the nearest decided one;
- `scratch`: the same with `warm_start=False` (every length tuned from nothing);
- `oracle`: a tuning cache holding each length's best variant, so every call runs it.

Two streams: `shuffled` (every call in random order, so that every length starts before any
is decided: the headline) and `phased` (the lengths in random order, each one's 50 calls in a
row, as a serving load whose shapes change in phases).

The three modules run the stream side by side: each call of the stream is made on all three,
in rotating order, before the next, so that a slow spell of the machine falls on every mode
alike (timed one stream after another, the same build measured 1.04x to 1.59x the oracle
between runs a minute apart; side by side, within 0.01-0.04).

Each length's best variant is found first, by interleaved calls of the three static builds
(one per variant). What a decided size's call costs: the online module on the oracle's
cache and the static build of each size's best variant, the shuffled stream's calls made
on both in alternating order (`decided_over_static`: every call of a decided size finds
its choice in its site's table of committed keys, however many sizes there are).
Times are the sums of the per-call times (`perf_counter_ns` around the VM
call, the input already on the device). Ratio: median over the repetitions of warm / oracle
total time on the shuffled stream; the other ratios are in the detail.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import (
    DEVICE,
    CaseResult,
    Settings,
    compile_module,
    device_array,
    interleaved,
    median,
    no_gc,
    raw_function,
    side_by_side,
)
from benchmarks.kernels import CROSSING_VARIANTS, crossing_module

LENGTHS = 40
CALLS = 50
SMALLEST, LARGEST = 1024, 262144


def lengths(count: int) -> list[int]:
    return sorted({int(round(n)) for n in np.geomspace(SMALLEST, LARGEST, count)})


def _load(vmfb: bytes, cache, **options):
    from autotune_runtime import load

    return load(vmfb, device=DEVICE, cache=cache, **options)


def static_builds() -> dict[str, bytes]:
    """A static build of each variant."""
    return {
        v: compile_module(crossing_module(f'{{policy = "static", choice = @{v}}}'), "static")
        for v in CROSSING_VARIANTS
    }


def best_per_length(builds: dict[str, bytes], sizes: list[int], inputs: dict, rounds: int) -> dict:
    """Median call time of every variant at every length (static builds, interleaved)."""
    modules = {v: _load(b, False) for v, b in builds.items()}
    medians = {}
    for n in sizes:
        calls = []
        for module in modules.values():
            function, arg = raw_function(module, "run"), device_array(module, inputs[n])
            calls.append(lambda f=function, a=arg: f(a))
        times = interleaved(calls, rounds, warmup=2)
        medians[n] = {v: median(t) for v, t in zip(modules, times, strict=True)}
    for module in modules.values():
        module.close()
    return medians


def oracle_cache(settings: Settings, vmfb: bytes, best: dict[int, str]):
    """A tuning cache file that holds `best[n]` as the decision at every length."""
    from autotune_runtime.cache import Entry

    path = settings.scratch / "b8_oracle.sqlite"
    path.unlink(missing_ok=True)
    module = _load(vmfb, path)
    (gid,) = module.groups
    for n, variant in best.items():
        module.cache.put(Entry(module.tuner.cache_key(gid, (n,)), variant, {}, {}, time.time()))
    module.close()
    return path


def run_streams(modules: dict, stream: list[int], inputs: dict, reference: str) -> dict:
    """Total time of the calls of `stream` on each of `modules` (fresh), made side by side
    (each call on every module, in rotating order), and what tuning did in each: with the
    time over `reference`'s median call at the same size, of the calls that explored and
    of the others (`excess_ms`)."""
    names = list(modules)
    functions = {name: raw_function(m, "run") for name, m in modules.items()}
    args = {name: {n: device_array(m, x) for n, x in inputs.items()} for name, m in modules.items()}
    clock = time.perf_counter_ns
    calls = {name: [] for name in names}
    with no_gc():
        for i, n in enumerate(stream):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                before = _explored(modules[name], n)
                start = clock()
                functions[name](args[name][n])
                elapsed = clock() - start
                calls[name].append((n, elapsed, _explored(modules[name], n) > before))
    typical = {
        n: median(t for m, t, _ in calls[reference] if m == n) for n in dict.fromkeys(stream)
    }
    return {name: _outcome(modules[name], calls[name], typical, inputs) for name in names}


def _explored(module, n: int) -> int:
    state = module.tuner.states.get((0, (n,)))
    return state.explored_calls if state is not None else 0


def _outcome(module, calls: list, typical: dict, inputs: dict) -> dict:
    """A module's total time over a stream, and what its tuning did."""
    stats = module.stats()
    for n in (min(inputs), max(inputs)):
        np.testing.assert_allclose(module.run(inputs[n]), inputs[n], rtol=1e-3)
    warm = [s["warm_start"] for s in stats if s["warm_start"]]
    excess = {"exploring": 0.0, "other": 0.0}
    for n, elapsed, explored in calls:
        excess["exploring" if explored else "other"] += (elapsed - typical[n]) / 1e6
    return {
        "total_ns": sum(t for _, t, _ in calls),
        "explored_calls": sum(s["explored_calls"] for s in stats),
        "excess_ms": {k: round(v, 2) for k, v in excess.items()},
        "warm_started": len(warm),
        "confirmations_failed": sum(not w["confirmed"] for w in warm),
        "decisions": {s["workload"][0]: s["decision"] for s in stats},
    }


def decided_over_static(
    online: bytes, oracle, builds: dict[str, bytes], stream: list[int], inputs: dict, best: dict
) -> dict:
    """What calls of decided sizes cost: the online module on the oracle's cache (every
    size called once first) and the static build of each size's best variant, each call
    of `stream` made on both in alternating order; total ms of each and their ratio."""
    decided = _load(online, oracle)
    statics = {v: _load(b, False) for v, b in builds.items()}
    calls = {"decided": raw_function(decided, "run")}
    calls |= {v: raw_function(m, "run") for v, m in statics.items()}
    args = {"decided": {n: device_array(decided, x) for n, x in inputs.items()}}
    args |= {v: {n: device_array(m, x) for n, x in inputs.items()} for v, m in statics.items()}
    for n in inputs:
        calls["decided"](args["decided"][n])
        calls[best[n]](args[best[n]][n])
    on_decided, on_static = (
        sum(t)
        for t in side_by_side(
            [
                lambda n: calls["decided"](args["decided"][n]),
                lambda n: calls[best[n]](args[best[n]][n]),
            ],
            stream,
        )
    )
    for module in (decided, *statics.values()):
        module.close()
    return {
        "decided_ms": round(on_decided / 1e6, 2),
        "static_ms": round(on_static / 1e6, 2),
        "ratio": round(on_decided / on_static, 4),
    }


def run(settings: Settings) -> CaseResult:
    count, calls, repeats = (12, 20, 1) if settings.quick else (LENGTHS, CALLS, 3)
    sizes = lengths(count)
    rng = np.random.default_rng(0)
    inputs = {n: (rng.random(n, dtype=np.float32) + 0.5) for n in sizes}
    builds = static_builds()
    medians = best_per_length(builds, sizes, inputs, 5 if settings.quick else 15)
    best = {n: min(m, key=m.__getitem__) for n, m in medians.items()}
    changes = sum(best[a] != best[b] for a, b in zip(sizes, sizes[1:], strict=False))

    online = compile_module(crossing_module(), "online")
    oracle = oracle_cache(settings, online, best)
    order = [int(n) for n in rng.permutation(sizes)]
    streams = {
        # every call in random order: all lengths start before any is decided
        "shuffled": [int(n) for n in rng.permutation([n for n in sizes for _ in range(calls)])],
        # lengths in random order, each one's calls in a row (phases of a serving load)
        "phased": [n for n in order for _ in range(calls)],
    }
    modes = {
        "warm": lambda: _load(online, False),
        "scratch": lambda: _load(online, False, warm_start=False),
        "oracle": lambda: _load(online, oracle),
    }
    measured_streams = {}
    for stream_name, stream in streams.items():
        runs = []
        for repeat in range(repeats):
            names = list(modes)
            names = names[repeat % 3 :] + names[: repeat % 3]
            modules = {name: modes[name]() for name in names}
            runs.append(run_streams(modules, stream, inputs, "oracle"))
            for module in modules.values():
                module.close()
        measured_streams[stream_name] = runs
    runs = measured_streams["shuffled"]
    decided = decided_over_static(online, oracle, builds, streams["shuffled"], inputs, best)
    ratios = {
        stream: {
            mode: round(median(r[mode]["total_ns"] / r["oracle"]["total_ns"] for r in rs), 4)
            for mode in ("warm", "scratch")
        }
        for stream, rs in measured_streams.items()
    }
    warm_ratio, scratch_ratio = ratios["shuffled"]["warm"], ratios["shuffled"]["scratch"]
    first = runs[0]
    wrong = {
        mode: sum(first[mode]["decisions"].get(n) != best[n] for n in sizes)
        for mode in ("warm", "scratch")
    }
    # what running each slower variant once at every size costs, over the oracle: the
    # least any tuner without prior knowledge of a size pays
    oracle_us = sum(calls * min(medians[n].values()) for n in sizes)
    once_us = sum(t - min(medians[n].values()) for n in sizes for t in medians[n].values())
    detail = {
        "lengths": sizes,
        "floor_each_slower_variant_once": round(1 + once_us / oracle_us, 4),
        "calls_per_length": calls,
        "repeats": repeats,
        "best": {str(n): best[n] for n in sizes},
        "best_changes": changes,
        "median_us": {str(n): {v: round(t / 1e3, 2) for v, t in medians[n].items()} for n in sizes},
        "over_oracle": ratios,
        "runs": {
            stream: [
                {
                    mode: {k: v for k, v in r[mode].items() if k != "decisions"}
                    | {"total_ms": round(r[mode]["total_ns"] / 1e6, 2)}
                    for mode in modes
                }
                for r in rs
            ]
            for stream, rs in measured_streams.items()
        },
        "decisions_not_the_best": wrong,
        "decided_over_static": decided,
    }
    print(
        f"  B8 {len(sizes)} lengths x {calls} calls, shuffled: warm start {warm_ratio:.3f}, "
        f"from scratch {scratch_ratio:.3f} of the oracle; phased: warm start "
        f"{ratios['phased']['warm']:.3f}, from scratch {ratios['phased']['scratch']:.3f}; "
        f"best variant changes {changes} times; decided / static {decided['ratio']:.3f}",
        flush=True,
    )
    return CaseResult(
        id="B8",
        title="warm start over sizes",
        ratio=warm_ratio,
        meaning="total time of a random stream over 40 sizes with warm start / with each "
        "size's best variant always",
        detail=detail,
    )
