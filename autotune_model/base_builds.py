"""IREE's whole-compilation options that a tuned model starts from.

Some of IREE's choices are not a dispatch's tile sizes but options of the whole
compilation: on llvm-cpu, data tiling (matmuls over packed operands, an `mmt4d`) and IREE's
micro-kernels on top of it. These are what a speed-minded user tries first, and on a
matmul-heavy model they beat any tile size of the default pipeline. Where the model is
timed, `choose_base` builds it with each of `BASES`, times each build against the stock one
(interleaved, one run), and the fastest, when it is faster by more than the noise, is the
build that the dispatches are then tuned in: the flow phase, IREE's configurations, the
candidates and the tuned module all use its flags. A set may be chosen only when it is
faster in every one of the fresh loads it is timed in, not in their median alone, and the
confidence interval of the median over all their rounds lies below 1 too
(`steadiness.Comparison`): on the
tests' MLP, stock and data tiling are within the noise of each other on `local-task`
(loads 1.042, 0.970, 0.973 of the stock build's time on an idle machine), and a choice on
the median flipped between runs, after which the build tuned with data tiling lost to the
stock build. Among the sets that may be chosen, the median load ranks them (the slowest
of three loads ranks worse: on a dynamic-batch MLP it chose data tiling, 1.077x the time
of data tiling with micro-kernels in B7's timing). Each set is timed against the stock
build in a window of its own, and the machine drifts between windows: where the two
fastest are within `CLOSE` of each other, they are timed against each other, and the
second replaces the first only when that timing shows it faster (every load and the
interval below 1).

Data tiling is IREE's global-optimization path with early materialization
(`--iree-global-opt-data-tiling --iree-global-opt-enable-early-materialization`): its flow
phase holds the packing, the `mmt4d` and the unpacking as dispatches over plain tensors, so
the `mmt4d` dispatch is benchmarked alone and tuned like any contraction. The
dispatch-creation path (`--iree-dispatch-creation-data-tiling`) leaves a matmul over
encoded tensors in the flow phase, which no dispatch alone is built with, and a
configuration set on it (a `compilation_info`, or a tuning spec matching it) is lost when
IREE turns it into an `mmt4d` during code generation. Both build the same kernels: on a
128x768x3072 f32 matmul (local-sync, `iree-benchmark-module`, two alternations) 7.2-7.7 ms
early against 7.0-7.5 ms, 7.4-7.5 with micro-kernels against 7.3-7.5 (stock: 20 ms).

Code generation also takes the number of threads the device runs a dispatch on
(`--iree-llvmcpu-number-of-threads`, 8 by default): it sizes each dispatch's workgroups so
that there is work for that many. A device with fewer threads then runs more, smaller
workgroups than it needs, each with its own scheduling cost. `choose_threads` times the
chosen build told the device's thread count against the build not told (interleaved, in
fresh loads) and takes it only when shown faster (every load and the interval):  on a 2-core machine
(`local-task`, 3 loads, median) the stock, im2col or data-tiling builds of the corpus's
models took 0.929x (Whisper), 0.946x (MobileNetV2), 0.967x (SqueezeNet), 0.98x (BERT,
the bf16 ViT) and 1.004-1.01x (ViT, GPT-2) of their time not told; told one thread,
0.96-1.23x.

Convolutions have an option of their own: `--iree-global-opt-use-im2col-for-convs` turns
each into an `im2col` gather and a matmul over its result, which the matmul pipeline (and
data tiling) then handles. IREE's direct convolutions are slow on channel-first (NCHW)
layouts, as ONNX and PyTorch write them: on the corpus's SqueezeNet (batch 1, 64x64,
local-task) 1.0 ms against the stock build's 4.5-5.0; on its ViT (the patch embedding)
1.3-1.55 ms against 2.0-2.1, 0.92-0.96 with data tiling as well; on MobileNetV2 (depthwise)
0.73-0.74 against 0.66-0.67. The sets with it are tried only on models with a convolution
dispatch (`bases_for`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import Policy
from autotune_model.executors import LocalExecutor
from autotune_model.report import BaseBuild
from autotune_model.steadiness import Comparison
from lowering.driver import compile_lowered

if TYPE_CHECKING:
    from autotune_model.bench import Operand

STOCK = "stock"
AUTO = "auto"
"""Choose the fastest of `BASES` where the model is timed (else the stock build)."""

DATA_TILING = ("--iree-global-opt-data-tiling", "--iree-global-opt-enable-early-materialization")
UKERNELS = ("--iree-llvmcpu-enable-ukernels=all",)
IM2COL = ("--iree-global-opt-use-im2col-for-convs",)
THREADS_FLAG = "--iree-llvmcpu-number-of-threads"
IREE_THREADS = "iree"
"""`TuneOptions.threads`: IREE's default thread count (the flag not given)."""

BASES: dict[str, tuple[str, ...]] = {
    STOCK: (),
    "data-tiling": DATA_TILING,
    "data-tiling+ukernels": (*DATA_TILING, *UKERNELS),
    "im2col": IM2COL,
    "im2col+data-tiling": (*IM2COL, *DATA_TILING),
    "im2col+data-tiling+ukernels": (*IM2COL, *DATA_TILING, *UKERNELS),
}
"""The option sets tried, by name (llvm-cpu); `stock` is IREE's defaults."""

CONVOLUTION_BASES = frozenset(name for name, flags in BASES.items() if set(IM2COL) <= set(flags))
"""The sets that change only convolutions (besides what the others change)."""
DATA_TILED_BASES = frozenset(
    name for name, flags in BASES.items() if set(DATA_TILING) <= set(flags)
)
"""The sets whose contractions run as `mmt4d` over packed operands."""


def without_data_tiling(name: str) -> str:
    """The option set `name` less data tiling and micro-kernels (the stock set for the
    data-tiling ones, im2col for those with it)."""
    flags = [f for f in BASES[name] if f not in (*DATA_TILING, *UKERNELS)]
    return next(n for n, set_flags in BASES.items() if list(set_flags) == flags)


_CONVOLUTION_DISPATCH = re.compile(r"flow\.executable\.export public @\S*_conv_")


def bases_for(stock_flow: str) -> tuple[str, ...]:
    """The option sets worth trying on a model whose stock flow phase is `stock_flow`:
    all of them where a dispatch's root op is a convolution (IREE names such a dispatch
    `..._conv_...`), else those that do not only change convolutions."""
    if _CONVOLUTION_DISPATCH.search(stock_flow):
        return tuple(BASES)
    return tuple(name for name in BASES if name not in CONVOLUTION_BASES)


def choose_base(
    model: str,
    target: str,
    arch: str | None,
    input_flags: Sequence[str],
    faster_by: float,
    ratio: Callable[..., Comparison],
    stock: bytes | None = None,
    among: Sequence[str] = tuple(BASES),
) -> tuple[BaseBuild, bytes]:
    """The fastest of `BASES` for the model, and its module. `ratio(stock, other,
    resolve)` times two builds of the model against each other in a few fresh loads
    (`timed_ratio`; injectable). A set may be chosen when it beats the stock build by
    `faster_by` in each load and by the interval; the fastest of those by its median load
    is (of two within `CLOSE`, the second where timed against each other it is shown
    faster), else the stock build stays. `stock`: the stock build, where the caller has
    it already. `among`: the sets to try (the stock build is built all the same: the
    others are timed against it, and it is the one to beat only when it is among them)."""
    if stock is None:
        stock = compile_lowered(model, target, arch, extra_args=list(input_flags))
    ratios: dict[str, float | None] = {STOCK: 1.0}
    intervals: dict[str, list[float]] = {}
    eligible: dict[str, tuple[float, bytes]] = {}  # the sets that may be taken: median, build
    builds = _built(
        model, target, arch, input_flags, [n for n in BASES if n != STOCK and n in among]
    )
    for name, vmfb in builds.items():
        if vmfb is None:
            ratios[name] = None
            continue
        compared = ratio(stock, vmfb, 1.0 / faster_by)
        ratios[name] = compared.median
        intervals[name] = list(compared.interval)
        if STOCK not in among or compared.below(1.0 / faster_by):
            eligible[name] = (compared.median, vmfb)
    # the stock build is the one to beat; among the others the median load ranks
    ranked = sorted(eligible, key=lambda n: eligible[n][0])
    if not ranked:  # (or none of `among` built)
        return BaseBuild(STOCK, [], ratios, intervals=intervals), stock
    base = ranked[0]
    build = BaseBuild(base, list(BASES[base]), ratios, intervals=intervals)
    if len(ranked) > 1 and eligible[ranked[1]][0] <= CLOSE * eligible[base][0]:
        # Two sets timed against the stock build in other windows: their ratios differ
        # by the machine's drift as much as by the sets. Timed against each other:
        runner_up = ranked[1]
        build.head_to_head = [base, runner_up]
        against = ratio(eligible[base][1], eligible[runner_up][1])
        build.head_to_head_loads = against.loads
        build.head_to_head_interval = list(against.interval)
        if against.below(1.0):
            build.name, build.flags = runner_up, list(BASES[runner_up])
            base = runner_up
    return build, eligible[base][1]


def _built(
    model: str, target: str, arch: str | None, input_flags: Sequence[str], names: Sequence[str]
) -> dict[str, bytes | None]:
    """The model built with each named option set (None: IREE refused it), the builds
    run side by side on this machine's cores (before any is timed)."""

    def build(name: str) -> bytes | None:
        try:
            return compile_lowered(model, target, arch, extra_args=[*input_flags, *BASES[name]])
        except DiagnosticError:
            return None

    return dict(zip(names, LocalExecutor().run(build, list(names)), strict=True))


def bases_of_decisions(
    flow_of: Callable[[Sequence[str]], str], decisions: Sequence[dict]
) -> list[str]:
    """The option sets whose flow phase (`flow_of(flags)`) has the most of the dispatches
    that tuning-cache `decisions` name (`executable::export__tuned`), in `BASES` order;
    none when no set has any. A cache made by tuning a module built with some options
    names that build's dispatches, so freezing it picks those options again, whatever a
    new timing would say. (Option sets with the same flow phase tie: data tiling with and
    without micro-kernels.)"""
    exports = {
        d["group"].rpartition("::")[2].removesuffix("__tuned")
        for d in decisions
        if isinstance(d.get("group"), str)
    }
    counts: dict[str, int] = {}
    for name in bases_for(flow_of(())):
        flags = BASES[name]
        try:
            text = flow_of(flags)
        except DiagnosticError:
            continue
        counts[name] = sum(re.search(rf"@{re.escape(e)}\b", text) is not None for e in exports)
    most = max(counts.values(), default=0)
    return [name for name, count in counts.items() if most and count == most]


CLOSE = 1.10
"""The two fastest option sets, when the second's median ratio to the stock build is within
this factor of the first's, are then timed against each other, and that timing decides
(the tests' bf16 ViT: im2col with data tiling, with and without micro-kernels, 0.42 and
0.45 of the stock build's time, timed a minute apart; 1.013-1.020 of each other in every
load, timed together)."""

LOADS = 3
"""Fresh loads of the two builds that an option set is timed in against the stock build:
the median ratio counts (one load at tuning time measured BERT's data-tiled build at
0.89-0.93 of the stock build's time; the benchmark's timing a little later found it within
2% of it)."""
LOADS_BUDGET_S = 4.5
"""Seconds of interleaved calls over those loads; an option set's load whose interval still
holds the bound it must beat (`1 / faster_by`: the set not yet told from the stock build
there) goes on up to three times its share: on a busy machine the rounds' spread widens,
and a set that loses its interval there is not taken (the Flax BERT tuned beside 2 busy
processes took data tiling, then the stock build, where tuned idle it took data tiling
with micro-kernels, 7-9% faster re-timed idle). A load whose interval is clear of the
bound ends early, after a third of its share at least (`steadiness.time_rounds`)."""


def timed_ratio(function: str, inputs: Sequence[Operand], device: str) -> Callable[..., Comparison]:
    """Time per call of a build over the stock build's, measured interleaved, in each of
    `LOADS` fresh loads. Where `resolve` is given (the bound a decision reads: a build is
    taken only when faster than it in every load), each load goes on while its interval
    holds it (the builds not yet told apart there), and no load follows one slower than
    it (the build is not taken, whatever the others would say)."""
    from autotune_model.measure import compared, time_model  # (the runtime: only when timing)

    def ratios(stock: bytes, other: bytes, resolve: float | None = None) -> Comparison:
        timings = []
        for _ in range(LOADS):  # each a fresh load of both builds
            timing = time_model(
                stock, other, function, inputs, Policy.STATIC, device, LOADS_BUDGET_S / LOADS,
                resolve=resolve,
            )  # fmt: skip
            timings.append(timing)
            if resolve is not None and timing.ratio >= resolve:
                break
        return compared(timings)

    return ratios


def device_threads(device: str) -> int | None:
    """The threads a local CPU device runs a dispatch's workgroups on: one on
    `local-sync`, this process's CPUs on `local-task` (its workers); None for another
    device."""
    driver = device.split("://")[0]
    if driver == "local-sync":
        return 1
    if driver != "local-task":
        return None
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        return os.cpu_count() or 1


def threads_flags(threads: int | None) -> list[str]:
    """The flag telling code generation `threads` (none for IREE's default)."""
    return [] if threads is None else [f"{THREADS_FLAG}={threads}"]


def choose_threads(
    model: str,
    target: str,
    arch: str | None,
    flags: Sequence[str],
    build: bytes,
    threads: int,
    ratio: Callable[..., Comparison],
) -> tuple[Comparison | None, bytes | None]:
    """The model built with `flags` and told `threads` (`THREADS_FLAG`), timed against
    `build` (the same flags, not told) by `ratio` in a few fresh loads: (the timing, the
    build told) where it is shown faster (every load and the interval below 1), else (the
    timing, None); (None, None) where it did not build."""
    try:
        told = compile_lowered(model, target, arch, extra_args=[*flags, *threads_flags(threads)])
    except DiagnosticError:
        return None, None
    against = ratio(build, told)
    return against, told if against.below(1.0) else None
