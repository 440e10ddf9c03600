"""IREE's whole-compilation options that a tuned model starts from.

Some of IREE's choices are not a dispatch's tile sizes but options of the whole
compilation: on llvm-cpu, data tiling (`--iree-dispatch-creation-data-tiling`: matmuls
over packed operands, an `mmt4d`) and IREE's micro-kernels on top of it. These are what a
speed-minded user tries first, and on a matmul-heavy model they beat any tile size of the
default pipeline. Where the model is timed, `choose_base` builds it with each of `BASES`,
times each build against the stock one (interleaved, one run), and the fastest, when it is
faster by more than the noise, is the build that the dispatches are then tuned in: the
flow phase, IREE's configurations, the candidates and the tuned module all use its flags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import Policy
from autotune_model.report import BaseBuild
from lowering.driver import compile_lowered

if TYPE_CHECKING:
    from autotune_model.bench import Operand

STOCK = "stock"
AUTO = "auto"
"""Choose the fastest of `BASES` where the model is timed (else the stock build)."""

BASES: dict[str, tuple[str, ...]] = {
    STOCK: (),
    "data-tiling": ("--iree-dispatch-creation-data-tiling",),
    "data-tiling+ukernels": (
        "--iree-dispatch-creation-data-tiling",
        "--iree-llvmcpu-enable-ukernels=all",
    ),
}
"""The option sets tried, by name (llvm-cpu); `stock` is IREE's defaults."""


def choose_base(
    model: str,
    target: str,
    arch: str | None,
    input_flags: Sequence[str],
    faster_by: float,
    ratio: Callable[[bytes, bytes], float],
    stock: bytes | None = None,
) -> tuple[BaseBuild, bytes]:
    """The fastest of `BASES` for the model (it must beat the stock build by `faster_by`,
    else the stock build stays), and its module. `ratio(stock, other)` times two builds
    of the model against each other (`timed_ratio`; injectable). `stock`: the stock
    build, where the caller has it already."""
    if stock is None:
        stock = compile_lowered(model, target, arch, extra_args=list(input_flags))
    base, best, best_ratio = STOCK, stock, 1.0 / faster_by
    ratios: dict[str, float | None] = {STOCK: 1.0}
    for name, flags in BASES.items():
        if name == STOCK:
            continue
        try:
            vmfb = compile_lowered(model, target, arch, extra_args=[*input_flags, *flags])
        except DiagnosticError:
            ratios[name] = None
            continue
        ratios[name] = ratio(stock, vmfb)
        if ratios[name] < best_ratio:
            base, best, best_ratio = name, vmfb, ratios[name]
    return BaseBuild(base, list(BASES[base]), ratios), best


def timed_ratio(
    function: str, inputs: Sequence[Operand], device: str
) -> Callable[[bytes, bytes], float]:
    """Time per call of a build over the stock build's, measured interleaved."""
    from autotune_model.measure import time_model  # (the runtime: only when timing)

    return lambda stock, other: (
        time_model(stock, other, function, inputs, Policy.STATIC, device).ratio
    )
