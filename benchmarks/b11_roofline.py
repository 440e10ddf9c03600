"""B11 roofline: matmuls and convolutions against this machine's measured FMA peak and
OpenBLAS.

Five one-op linalg models (`func.func @main`, the op on its operands; a convolution's
input arrives padded): f32 matmuls 128x768x3072 (BERT's feed-forward layer, M x K x N)
and 512x512x512, a bf16 matmul 512x512x512 (f32 results), a 3x3 convolution 1x56x56x64 ->
64 channels and a depthwise 3x3 convolution 1x56x56x96, both NHWC, stride 1, padding 1.
Each is built for llvm-cpu with each of IREE's option sets (`autotune_model.base_builds`:
stock, data tiling, data tiling with micro-kernels; "best flags" is the fastest of them
here), by `tune_model(..., freeze=True)` (what `tune-model --freeze --device local-sync`
writes: it picks its option set and tunes on the device the builds are timed on; tuned on
`local-task`, its two threads, the BERT matmul kept data tiling and took 1.09x OpenBLAS's
time on one thread where the stock options tuned took 0.99x), and by `tune_model` from the
stock options (`base="stock"`: tile sizes tuned in IREE's default pipeline, which data
tiling's dispatches are not). All builds run on `local-sync` (one thread), on inputs held
on the device, and numpy on the same inputs with its BLAS held to the same thread count:
the f32 matmuls are OpenBLAS's sgemm, the bf16 one too on the inputs as f32 (numpy has no
bf16 matmul), the convolution an im2col (its copy timed too) and one sgemm, the depthwise
one 9 shifted multiply-adds (no BLAS). Every build and numpy are timed side by side,
interleaved rounds (`common.interleaved`), medians.

The peak: a short FMA loop compiled with the C compiler (`benchmarks.fma_peak`), run on
one thread (the device's) and on every core at the start, and again on one thread before
and after every row's rounds, so that a spell of load on this shared machine cannot make
the peak lower than what a build reached; the peak is the best of all these runs, and
with no C compiler it is "not measured". Each row has per build its time, GFLOP/s and
percent of the one-thread peak. A bf16 row's peak, where the compiler targets AVX-512 BF16,
is the bf16 dot-product loop's (`fma_peak.bf16_loop`, twice the multiply-adds of an FMA per
lane; the best of its runs at the start and after the rows); on a CPU without bf16
arithmetic its FMAs are f32 FMAs and the FMA loop's peak is its. Ratio: the worst tuned /
OpenBLAS time over the f32 matmuls (goal <= 1.25).
`--quick`: smaller sizes, 1 s of rounds per row instead of 6, and tune-model with 2
candidates and no timing of whole builds (so it keeps the stock options: one tuned build).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from autotune_contracts.errors import DiagnosticError
from autotune_model import TuneOptions, tune_model
from autotune_model.base_builds import BASES, STOCK
from autotune_model.bench import Operand
from benchmarks import fma_peak
from benchmarks.blas_threads import blas_threads
from benchmarks.common import (
    DEVICE,
    ROOT,
    CaseResult,
    Settings,
    device_array,
    interleaved,
    load_module,
    median,
    raw_function,
)
from lowering.driver import compile_lowered

GOAL = 1.25
THREADS = 1 if DEVICE == "local-sync" else (os.cpu_count() or 1)
TUNED, TUNED_STOCK, NUMPY = "tuned", "tuned (stock flags)", "numpy"
BUILDS = (*BASES, TUNED, TUNED_STOCK, NUMPY)
MEANING = "time, tuned build / numpy's OpenBLAS (worst of the f32 matmuls, one thread)"
_CONV = "{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}"


@dataclass(frozen=True)
class Op:
    """A one-op model: its kind (matmul, conv, depthwise), input element type and sizes."""

    kind: str
    element: str
    dims: tuple[int, ...]

    @property
    def name(self) -> str:
        if self.kind == "matmul":
            return f"matmul {'x'.join(map(str, self.dims))} {self.element}"
        size, channels = self.dims[:2]
        image = f"1x{size}x{size}x{channels}"
        if self.kind == "conv":
            return f"conv 3x3 {image} -> {self.dims[2]} {self.element}"
        return f"depthwise 3x3 {image} {self.element}"

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        """The two inputs' shapes and the result's."""
        if self.kind == "matmul":
            m, k, n = self.dims
            return [(m, k), (k, n), (m, n)]
        size, channels = self.dims[:2]
        padded = (1, size + 2, size + 2, channels)
        if self.kind == "conv":
            out = self.dims[2]
            return [padded, (3, 3, channels, out), (1, size, size, out)]
        return [padded, (3, 3, channels), (1, size, size, channels)]

    @property
    def flops(self) -> int:
        """2 per multiply-add: each result element sums K, 9 x channels or 9 products."""
        out = int(np.prod(self.shapes[2]))
        per_element = {"matmul": self.dims[1], "conv": 9 * self.dims[1], "depthwise": 9}
        return 2 * out * per_element[self.kind]

    @property
    def text(self) -> str:
        a, b, c = (
            f"tensor<{'x'.join(map(str, s))}x{e}>"
            for s, e in zip(self.shapes, (self.element, self.element, "f32"), strict=True)
        )
        op = {
            "matmul": "linalg.matmul",
            "conv": f"linalg.conv_2d_nhwc_hwcf {_CONV}",
            "depthwise": f"linalg.depthwise_conv_2d_nhwc_hwc {_CONV}",
        }[self.kind]
        return (
            f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
            "  %zero = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {c}\n"
            f"  %f = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
            f"  %r = {op} ins(%a, %b : {a}, {b}) outs(%f : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n"
        )

    def inputs(self) -> list[np.ndarray]:
        dtype = "bfloat16" if self.element == "bf16" else "float32"
        return [Operand(s, dtype).array(seed) for seed, s in enumerate(self.shapes[:2])]


def ops(quick: bool) -> list[Op]:
    if quick:
        return [
            Op("matmul", "f32", (64, 128, 256)),
            Op("matmul", "f32", (128, 128, 128)),
            Op("matmul", "bf16", (128, 128, 128)),
            Op("conv", "f32", (16, 16, 16)),
            Op("depthwise", "f32", (16, 32)),
        ]
    return [
        Op("matmul", "f32", (128, 768, 3072)),
        Op("matmul", "f32", (512, 512, 512)),
        Op("matmul", "bf16", (512, 512, 512)),
        Op("conv", "f32", (56, 64, 64)),
        Op("depthwise", "f32", (56, 96)),
    ]


def reference(op: Op, inputs: list[np.ndarray]) -> tuple[Callable[[], np.ndarray], str]:
    """numpy's computation of `op` (inputs as f32) and what it is."""
    a, b = (np.ascontiguousarray(x, dtype=np.float32) for x in inputs)
    if op.kind == "matmul":
        what = "OpenBLAS sgemm" + (" on the inputs as f32 (no bf16 matmul)" * (op.element != "f32"))
        return (lambda: a @ b), what
    size = op.shapes[2][1]
    if op.kind == "conv":
        weights = b.reshape(-1, b.shape[-1])  # (kh, kw, ci) x co

        def im2col() -> np.ndarray:
            windows = np.lib.stride_tricks.sliding_window_view(a[0], (3, 3), axis=(0, 1))
            columns = windows.transpose(0, 1, 3, 4, 2).reshape(size * size, -1)
            return (columns @ weights).reshape(op.shapes[2])

        return im2col, "im2col (copy timed) + OpenBLAS sgemm"

    def shifted() -> np.ndarray:
        out = a[:, :size, :size] * b[0, 0]
        for i in range(3):
            for j in range(3):
                if i or j:
                    out += a[:, i : i + size, j : j + size] * b[i, j]
        return out

    return shifted, "9 shifted multiply-adds in numpy (no BLAS)"


# --- numpy timed apart, where its BLAS's threads cannot be set here -----------------------


def numpy_apart(quick: bool, rounds: int) -> dict[str, float]:
    """Median ms of numpy's reference per op, timed in a subprocess whose BLAS reads its
    thread count from the environment."""
    env = dict(os.environ)
    env.update({k: str(THREADS) for k in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
    env["OMP_NUM_THREADS"] = str(THREADS)
    command = [sys.executable, "-m", "benchmarks.b11_roofline", str(int(quick)), str(rounds)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _numpy_main(quick: bool, rounds: int) -> None:
    times = {}
    for op in ops(quick):
        call, _ = reference(op, op.inputs())
        times[op.name] = median(interleaved([call], rounds, warmup=2)[0]) / 1e6
    print(json.dumps(times))


# --- the case -----------------------------------------------------------------------------


def _builds(op: Op, options: TuneOptions) -> tuple[dict[str, bytes | str], dict]:
    """Each build's module (or why there is none), and what tuning reported."""
    builds: dict[str, bytes | str] = {}
    for name, flags in BASES.items():
        try:
            builds[name] = compile_lowered(op.text, "llvm-cpu", extra_args=list(flags))
        except DiagnosticError as err:
            builds[name] = f"failed to build: {str(err).splitlines()[0][:200]}"
    tunings = [(TUNED, options), (TUNED_STOCK, replace(options, base=STOCK))]
    if not options.time_model:  # tune-model then starts from the stock options anyway
        builds[TUNED_STOCK] = "not built: the same as tuned here (no timing, stock options)"
        tunings.pop()
    tuning = {}
    for label, tune_options in tunings:
        started = time.perf_counter()
        try:
            tuned = tune_model(op.text, tune_options, filename=op.name, quiet=True)
        except DiagnosticError as err:
            builds[label] = f"tune-model failed: {str(err).splitlines()[0][:200]}"
            continue
        builds[label] = tuned.vmfb
        report = tuned.report
        tuning[label] = {
            "base": report.base.label,
            "wall_s": round(time.perf_counter() - started, 1),
            "tuned": [d.best.name for d in report.dispatches if d.kept and d.best],
            "skipped": list(report.skipped.values()),
        }
    return builds, tuning


def _agrees(got, want: np.ndarray, element: str) -> bool:
    got = np.asarray(got.to_host(), dtype=np.float32)
    scale = float(np.max(np.abs(want))) or 1.0
    return bool(np.max(np.abs(got - want)) <= (2e-2 if element == "bf16" else 1e-3) * scale)


def _row(op: Op, options: TuneOptions, budget_s: float, loop, numpy_here: bool) -> dict:
    """Every build of `op` and numpy (`numpy_here`) timed interleaved: median ms of each
    (None: not timed here), or why there is no build; the FMA loop's GFLOP/s before and
    after the rounds."""
    builds, tuning = _builds(op, options)
    inputs = op.inputs()
    reference_call, what = reference(op, inputs)
    want = reference_call()
    calls, names, modules, agrees = [], [], [], {}
    for name in BUILDS[:-1]:
        if isinstance(builds[name], str):
            continue
        module = load_module(builds[name])
        modules.append(module)
        args = [device_array(module, x) for x in inputs]
        function = raw_function(module, "main")
        agrees[name] = _agrees(function(*args), want, op.element)
        calls.append(lambda f=function, args=args: f(*args))
        names.append(name)
    if numpy_here:
        calls.append(reference_call)
        names.append(NUMPY)
    # The loop runs before and after the row's rounds, not between its calls: a call that
    # follows 2 ms of FMAs runs slower (the rounds keep each call's neighbour).
    before = None if loop is None else loop.rate(THREADS, repeats=5)
    once = [median(t) for t in interleaved(calls, rounds=1, warmup=1)]
    rounds = max(5, min(200, int(budget_s * 1e9 / max(sum(once), 1))))
    times = dict(zip(names, interleaved(calls, rounds, warmup=2), strict=True))
    del calls, modules
    cells: dict[str, dict] = {}
    for name in BUILDS:
        if name in times or name == NUMPY:
            cells[name] = {"ms": round(median(times[name]) / 1e6, 4) if name in times else None}
        else:
            cells[name] = {"error": builds[name]}
        cells[name].update(tuning.get(name, {}))
    cells[NUMPY]["what"] = what
    timed = [n for n in BASES if cells[n].get("ms")]
    row = {
        "op": op.name,
        "kind": op.kind,
        "element": op.element,
        "gflop": round(op.flops / 1e9, 4),
        "builds": cells,
        "best_flags": min(timed, key=lambda n: cells[n]["ms"]) if timed else None,
        "rounds": rounds,
        "agrees": agrees,
    }
    if loop is not None:  # the machine's level about the row's rounds
        after = loop.rate(THREADS, repeats=5)
        row["fma_loop_gflops"] = [round(before, 2), round(after, 2)]
    return row


def _fill(row: dict, peak: float | None) -> None:
    """GFLOP/s and percent of `peak` (the row's: the bf16 loop's for a bf16 row where it
    was measured, else the FMA loop's) for each timed build; the row's ratios."""
    for cell in row["builds"].values():
        if cell.get("ms"):
            cell["gflops"] = round(row["gflop"] / cell["ms"] * 1e3, 2)
            cell["percent_of_peak"] = (
                None if peak is None else round(100 * cell["gflops"] / peak, 1)
            )
    for key, (a, b) in {
        "tuned_over_numpy": (TUNED, NUMPY),
        "tuned_over_best_flags": (TUNED, row["best_flags"]),
        "tuned_stock_over_numpy": (TUNED_STOCK, NUMPY),
    }.items():
        x, y = row["builds"].get(a, {}).get("ms"), row["builds"].get(b or "", {}).get("ms")
        row[key] = round(x / y, 4) if x and y else None


def run(settings: Settings) -> CaseResult:
    quick = settings.quick
    options = TuneOptions(freeze=True, candidates=8, device=DEVICE)
    if quick:  # a smoke run: fewer candidates, no timing of whole builds inside tune-model
        options = replace(options, candidates=2, combine=False, time_model=False)
    budget = 1.0 if quick else 6.0
    lib = fma_peak.build(settings.scratch)
    loop = None if isinstance(lib, str) else fma_peak.Loop(lib, 2e-3)
    bf16_loop = None if isinstance(lib, str) else fma_peak.bf16_loop(lib, 2e-3)
    bf16_rates = [] if bf16_loop is None else [bf16_loop.rate(THREADS, repeats=7)]
    if loop is None:
        peak = {"error": lib}
    else:
        cores = os.cpu_count() or 1
        peak = fma_peak.measure(loop, tuple(sorted({1, THREADS, cores})))
    rows = []
    with blas_threads(THREADS) as how:
        for op in ops(quick):
            rows.append(_row(op, options, budget, loop, how is not None))
            cells = rows[-1]["builds"].items()
            shown = ", ".join(f"{n} {c['ms']:.3f}" if c.get("ms") else f"{n} -" for n, c in cells)
            print(f"  B11 {op.name} (ms): {shown}", flush=True)
    if how is None:  # numpy's threads could not be set here: timed apart
        apart = numpy_apart(quick, max(5, min(r["rounds"] for r in rows)))
        for row in rows:
            row["builds"][NUMPY]["ms"] = round(apart[row["op"]], 4)
    peak_gflops = None
    if loop is not None:  # the best the loop ran: at the start, before or after a row
        peak_gflops = max(
            [peak["gflops"][str(THREADS)], *(max(r["fma_loop_gflops"]) for r in rows)]
        )
    if bf16_loop is not None:
        bf16_rates.append(bf16_loop.rate(THREADS, repeats=7))
    bf16_peak = round(max(bf16_rates), 2) if bf16_rates else None
    for row in rows:
        _fill(row, bf16_peak if row["element"] == "bf16" and bf16_peak else peak_gflops)
    f32 = [r for r in rows if r["kind"] == "matmul" and r["element"] == "f32"]
    ratios = [r["tuned_over_numpy"] for r in f32 if r["tuned_over_numpy"] is not None]
    ratio = max(ratios) if ratios else float("nan")
    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text().split() if cpuinfo.exists() else []
    detail = {
        "rows": rows,
        "peak": peak,
        "peak_gflops": peak_gflops,
        "bf16_peak_gflops": bf16_peak,
        "bf16_loop_gflops": [round(r, 2) for r in bf16_rates],
        "threads": THREADS,
        "device": DEVICE,
        "numpy_threads_set_by": how or f"a subprocess with OPENBLAS_NUM_THREADS={THREADS}",
        "numpy_interleaved": how is not None,
        "bf16_arithmetic": any(f in flags for f in ("avx512_bf16", "amx_bf16")),
        "candidates_per_dispatch": options.candidates,
        "timing_s_per_row": budget,
        "goal": GOAL,
        "worst": max(f32, key=lambda r: r["tuned_over_numpy"] or 0)["op"] if ratios else None,
        "met": bool(ratios) and ratio <= GOAL,
    }
    return CaseResult(
        id="B11",
        title="roofline",
        ratio=ratio,
        meaning=MEANING,
        detail=detail,
    )


if __name__ == "__main__":  # numpy timed apart (`numpy_apart`)
    _numpy_main(bool(int(sys.argv[1])), int(sys.argv[2]))
