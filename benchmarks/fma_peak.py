"""This machine's FMA peak, measured: a short loop of independent vector multiply-adds,
compiled with the system C compiler (`cc -O2 -march=native`) and called through ctypes.

The loop keeps `CHAINS` accumulators of the widest vectors the compiler targets (GCC's
vector extensions: 64 bytes with AVX-512, else 32), each updated `a = a * b + c` per
iteration, which `-ffp-contract=fast` makes one fused multiply-add per vector: enough
independent chains to cover the FMA units' latency, and no memory traffic. ctypes lets go
of the GIL during the call, so `threads` Python threads run the loop at once, one per
core. Where there is no C compiler, or it fails, there is no loop (`build` says why).

Where the compiler targets AVX-512 BF16, a second loop (`bf16_loop`) does the same with
`vdpbf16ps`: each instruction multiplies 32 pairs of bf16 and adds them into 16 f32 lanes,
two multiply-adds per lane where an FMA does one, so a bf16 matmul's peak is this loop's,
not the FMA loop's.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CHAINS = 10  # 10 accumulators + 2 constants fit AVX2's 16 vector registers
SOURCE = f"""
#ifdef __AVX512F__
#define BYTES 64
#else
#define BYTES 32
#endif
typedef float vec __attribute__((vector_size(BYTES)));
int lanes(void) {{ return BYTES / sizeof(float); }}
int chains(void) {{ return {CHAINS}; }}
float fma_loop(long iterations, float seed) {{
  vec a[{CHAINS}], b, c;
  for (int k = 0; k < BYTES / 4; k++) {{ b[k] = 0.999999f; c[k] = seed * 1e-6f; }}
  for (int j = 0; j < {CHAINS}; j++) a[j] = b * (float)(j + 1);
  for (long i = 0; i < iterations; i++) {{
#pragma GCC unroll {CHAINS}
    for (int j = 0; j < {CHAINS}; j++) a[j] = a[j] * b + c;
  }}
  float sum = 0.0f;
  for (int j = 0; j < {CHAINS}; j++)
    for (int k = 0; k < BYTES / 4; k++) sum += a[j][k];
  return sum;
}}
#ifdef __AVX512BF16__
#include <immintrin.h>
int bf16_lanes(void) {{ return 16; }}
float bf16_loop(long iterations, float seed) {{
  __m512 acc[{CHAINS}];
  __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1.0f), _mm512_set1_ps(1.0f));
  __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(seed * 1e-6f), _mm512_set1_ps(1e-6f));
  for (int j = 0; j < {CHAINS}; j++) acc[j] = _mm512_set1_ps((float)j);
  for (long i = 0; i < iterations; i++) {{
#pragma GCC unroll {CHAINS}
    for (int j = 0; j < {CHAINS}; j++) acc[j] = _mm512_dpbf16_ps(acc[j], x, y);
  }}
  float sum = 0.0f;
  for (int j = 0; j < {CHAINS}; j++) sum += _mm512_reduce_add_ps(acc[j]);
  return sum;
}}
#else
int bf16_lanes(void) {{ return 0; }}
float bf16_loop(long iterations, float seed) {{ return seed * iterations; }}
#endif
"""
FLAGS = ("-O2", "-march=native", "-ffp-contract=fast", "-shared", "-fPIC")


def build(folder: Path) -> ctypes.CDLL | str:
    """The compiled loop, or why there is none."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        return "no C compiler"
    source, library = folder / "fma_peak.c", folder / "fma_peak.so"
    source.write_text(SOURCE)
    done = subprocess.run(
        [compiler, *FLAGS, "-o", str(library), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"{Path(compiler).name} failed: {done.stderr.strip()[-300:]}"
    lib = ctypes.CDLL(str(library))
    for loop in (lib.fma_loop, lib.bf16_loop):
        loop.argtypes = [ctypes.c_long, ctypes.c_float]
        loop.restype = ctypes.c_float
    return lib


class Loop:
    """The compiled loop (`bf16`: the bf16 dot-product loop), sized to take about
    `seconds` on one thread: `run(threads)` runs it on that many threads at once, `rate` is
    GFLOP/s of such runs."""

    def __init__(self, lib: ctypes.CDLL, seconds: float, bf16: bool = False):
        self.lib = lib
        self.function = lib.bf16_loop if bf16 else lib.fma_loop
        self.iterations = 1 << 10
        while True:  # calibrate
            start = time.perf_counter()
            self.function(self.iterations, 1.0)
            if time.perf_counter() - start > seconds or self.iterations > 1 << 34:
                break
            self.iterations *= 2
        # per thread: an FMA lane does one multiply-add, a bf16 dot-product lane two
        per_lane = 4 if bf16 else 2
        lanes = lib.bf16_lanes() if bf16 else lib.lanes()
        self.flops = per_lane * lanes * lib.chains() * self.iterations

    def run(self, threads: int = 1) -> None:
        if threads == 1:
            self.function(self.iterations, 1.0)
            return
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda t: self.function(self.iterations, float(t)), range(threads)))

    def rate(self, threads: int, repeats: int) -> float:
        """The best GFLOP/s of `repeats` runs on `threads` threads."""
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter_ns()
            self.run(threads)
            best = min(best, time.perf_counter_ns() - start)
        return self.flops * threads / best


def bf16_loop(lib: ctypes.CDLL, seconds: float) -> Loop | None:
    """The bf16 dot-product loop, where the compiler targets AVX-512 BF16."""
    return Loop(lib, seconds, bf16=True) if lib.bf16_lanes() else None


def measure(loop: Loop, threads: tuple[int, ...], repeats: int = 7) -> dict:
    """Peak GFLOP/s per thread count (the best of `repeats` runs), the vector width and
    the compiler's flags."""
    return {
        "gflops": {str(n): round(loop.rate(n, repeats), 2) for n in threads},
        "lanes": loop.lib.lanes(),
        "chains": loop.lib.chains(),
        "flags": " ".join(FLAGS[:3]),
    }
