"""B2 steady-state overhead: a committed online module against the static build of its winner.

A 4096-element add (3 variants, `kernels.add_module`), where a call is a few microseconds
and any per-call cost of the selection shows most. The online module is tuned until it
commits; its winner is frozen into a static build (`compile(policy="static", cache=...)`,
no imports, no globals); both results are checked. Then, in this process, the two VM
functions are called alternately, call by call, with the input already on the device
(`common.interleaved`). Ratio: median online call time / median static call time (1.0: no
overhead).

Cross-check: each build is also timed in its own fresh process (`probe.py time`), the
processes alternating, several times. Those per-process medians move between two levels
from one process to the next (about 9 and 15 µs on this machine, whichever build runs), so
their pair ratios spread widely; they are in the detail. `leak_kib_per_call` is the growth
of this process's RSS per interleaved call (a leaked result buffer would show as ~16 KiB).

The same in-process comparison is repeated at three kernel sizes on `local-sync` and on
`local-task` (IREE's task pool), so that the overhead shows in absolute nanoseconds and as a
ratio where the kernel is tiny and where it dominates (`by_device_and_size`).

Many decided sizes (`many_sizes`): a group over `tensor<?xf32>` (its key the length) with a
decision at each of 40 lengths (1000 to 1039 elements) in its tuning cache, every length
called once, then a shuffled stream over them, each call made on the online module and on
the static build of the same variant in alternating order: medians. Each call finds its
length's choice in its site's table of committed keys (with a table of the last 4 keys,
1.30x the static build's time here: nine calls in ten asked the host).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmarks.common import (
    DEVICE,
    CaseResult,
    Settings,
    compile_module,
    device_array,
    interleaved,
    load_module,
    median,
    raw_function,
    side_by_side,
    time_in_process,
    tune_online,
)
from benchmarks.kernels import add_module, many_groups_module
from benchmarks.online_setup import decision_rows, device_calls, static_build

SIZE = 4096
VARIANTS = 3
SIZES = (1024, 16384, 262144)
DEVICES = ("local-sync", "local-task")
MANY_SIZES = range(1000, 1040)


def _rss_kib() -> int:
    try:
        status = open("/proc/self/status").read()
    except OSError:
        return 0
    return int(status.split("VmRSS:")[1].split()[0])


@dataclass
class TunedPair:
    """The add module online, tuned until committed, and the static build of its winner,
    both loaded and checked."""

    online: object
    static: object
    online_vmfb: bytes
    static_vmfb: bytes
    winner: str
    tuning_calls: int

    def close(self) -> None:
        self.online.close()
        self.static.close()


def tuned_pair(settings: Settings, size: int, device: str) -> TunedPair:
    """The online add module of `size` elements tuned on `device` until it commits, and the
    static build of its winner (both builds compiled once per run)."""
    from autotune_runtime import load

    text = add_module(size, VARIANTS)
    online_vmfb = settings.memo(f"b2_online_{size}", lambda: compile_module(text, "online"))
    online = load(online_vmfb, device=device, cache=False)
    x = np.arange(size, dtype=np.float32)
    tuning_calls, _ = tune_online(online, lambda: online.run(x))
    decisions = online.decisions()
    ((_, winner),) = decisions.items()
    static_vmfb = settings.memo(
        f"b2_static_{size}_{winner}",
        lambda: static_build(settings, f"b2_{size}_{winner}", text, decision_rows(decisions)),
    )
    static = load(static_vmfb, device=device, cache=False)
    for module in (online, static):
        np.testing.assert_array_equal(module.run(x), x + 1)
    return TunedPair(online, static, online_vmfb, static_vmfb, winner, tuning_calls)


def overhead(settings: Settings, size: int, device: str, calls: int) -> dict:
    """A committed online module against the static build of its winner, interleaved call
    by call on `device`, at `size` elements."""
    pair = tuned_pair(settings, size, device)
    x = np.arange(size, dtype=np.float32)
    times = interleaved(device_calls((pair.online, pair.static), "run", x), calls, warmup=50)
    pair.close()
    on, st = median(times[0]), median(times[1])
    return {
        "device": device,
        "size": size,
        "online_median_us": round(on / 1e3, 3),
        "static_median_us": round(st / 1e3, 3),
        "overhead_ns": round(on - st, 1),
        "ratio": round(on / st, 4),
        "tuning_calls": pair.tuning_calls,
    }


def many_sizes(settings: Settings, rounds: int) -> dict:
    """Decided calls over `MANY_SIZES` lengths: the online module on a tuning cache that
    holds a decision at each, against the static build of that variant (see the module
    docstring)."""
    import time

    from autotune_runtime import load
    from autotune_runtime.cache import Entry

    text = many_groups_module(1, VARIANTS, MANY_SIZES[0], dynamic=True)
    sizes = list(MANY_SIZES)
    rows = [{"group": "e0::add", "workload": [n], "variant": "g0_v0"} for n in sizes]
    path = settings.scratch / "b2_many.sqlite"
    path.unlink(missing_ok=True)
    online = load(compile_module(text, "online"), device=DEVICE, cache=path)
    (gid,) = online.groups
    for n in sizes:
        online.cache.put(Entry(online.tuner.cache_key(gid, (n,)), "g0_v0", {}, {}, time.time()))
    static = load_module(static_build(settings, "b2_many", text, rows))
    modules = (online, static)
    functions = [raw_function(m, "run0") for m in modules]
    args = [{n: device_array(m, np.ones(n, np.float32)) for n in sizes} for m in modules]
    for n in sizes:
        for function, arg in zip(functions, args, strict=True):
            function(arg[n])
    stream = [int(n) for n in np.random.default_rng(0).permutation(sizes * rounds)]
    times = side_by_side(
        [lambda n, f=f, a=a: f(a[n]) for f, a in zip(functions, args, strict=True)], stream
    )
    asked = sum(s["explored_calls"] for s in online.stats())
    for module in modules:
        module.close()
    on, st = median(times[0]), median(times[1])
    return {
        "lengths": len(sizes),
        "calls": len(stream),
        "online_median_us": round(on / 1e3, 3),
        "static_median_us": round(st / 1e3, 3),
        "ratio": round(on / st, 4),
        "explored_calls": asked,
    }


def run(settings: Settings) -> CaseResult:
    calls = 1000 if settings.quick else 5000
    pairs = 2 if settings.quick else 5
    pair = tuned_pair(settings, SIZE, DEVICE)
    online_vmfb, static_vmfb = pair.online_vmfb, pair.static_vmfb
    winner, tuning_calls = pair.winner, pair.tuning_calls

    # The same comparison inside this process, interleaved call by call.
    x = np.arange(SIZE, dtype=np.float32)
    same_calls = device_calls((pair.online, pair.static), "run", x)
    rss_before = _rss_kib()
    same = interleaved(same_calls, calls, warmup=100)
    leak = (_rss_kib() - rss_before) / (calls + 100)
    pair.close()

    runs = []
    for pair in range(pairs):
        order = ["online", "static"] if pair % 2 == 0 else ["static", "online"]
        measured = {}
        for name in order:
            vmfb = online_vmfb if name == "online" else static_vmfb
            measured[name] = time_in_process(
                settings, f"b2_{name}", vmfb, "run", SIZE, calls, "committed"
            )
        runs.append(measured)
    ratios = [r["online"]["median_ns"] / r["static"]["median_ns"] for r in runs]
    grid = [
        overhead(settings, size, device, calls // 5 if settings.quick else 2000)
        for device in DEVICES
        for size in SIZES
    ]
    many = many_sizes(settings, 10 if settings.quick else 50)
    on, st = median(same[0]), median(same[1])
    ratio = on / st
    q = lambda t, p: round(float(np.percentile(t, p)) / 1e3, 3)  # noqa: E731
    detail = {
        "kernel": f"add, {SIZE} x f32, {VARIANTS} variants",
        "winner": winner,
        "tuning_calls": tuning_calls,
        "interleaved_calls": calls,
        "online_median_us": round(on / 1e3, 3),
        "static_median_us": round(st / 1e3, 3),
        "overhead_ns": round(on - st, 1),
        "online_p10_p90_us": [q(same[0], 10), q(same[0], 90)],
        "static_p10_p90_us": [q(same[1], 10), q(same[1], 90)],
        "leak_kib_per_call": round(leak, 2),
        "processes_each": pairs,
        "calls_per_process": calls,
        "process_pair_ratios": [round(r, 4) for r in ratios],
        "process_pair_median_ratio": round(median(ratios), 4),
        "by_device_and_size": grid,
        "many_sizes": many,
    }
    print(
        f"  B2 online {on / 1e3:.2f} us vs static {st / 1e3:.2f} us per call ({calls} calls "
        f"each, interleaved; separate processes: pair ratios "
        f"{', '.join(f'{r:.2f}' for r in ratios)}; RSS growth {leak:.2f} KiB per call; "
        f"{many['lengths']} decided lengths: {many['ratio']:.3f})",
        flush=True,
    )
    return CaseResult(
        id="B2",
        title="steady-state overhead",
        ratio=ratio,
        meaning="per-call time of a committed online module / the static build of its winner",
        detail=detail,
    )
