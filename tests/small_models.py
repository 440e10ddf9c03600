"""The small models the `tune-model` tests tune (tests/data/flow/src: an MLP and a matmul
with a dynamic dimension), the MLP's inputs and numpy reference, and benchmark jobs whose
times do not depend on the machine."""

from __future__ import annotations

import zlib
from dataclasses import replace

import numpy as np
from conftest import DATA

from autotune_model import TuneOptions
from autotune_model.bench import BenchmarkJob, Measured, benchmark_dispatch
from autotune_model.report import TuneReport, summary_lines, where_the_time_is
from autotune_runtime.session import load

SRC = DATA / "flow" / "src"
MLP = (SRC / "mlp.mlir").read_text()
DYNAMIC = (SRC / "dynamic.mlir").read_text()
MLP_SHAPES = [(16, 256), (256, 512), (512,), (512, 128), (128,)]
SMALL = TuneOptions(candidates=3, top_k=1, time_model=False, combine=False)


def mlp_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.standard_normal(s).astype(np.float32) for s in MLP_SHAPES]


def mlp_reference(args: list[np.ndarray]) -> np.ndarray:
    x, w1, b1, w2, b2 = args
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def assert_close(got: np.ndarray, want: np.ndarray) -> None:
    """Equal up to float reassociation: within 1e-5 of the largest magnitude."""
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


def assert_computes_the_mlp(vmfb: bytes) -> None:
    """The module's `mlp` gives numpy's result (on `local-sync`)."""
    args = mlp_inputs()
    with load(vmfb, device="local-sync", cache=False) as module:
        assert_close(module.function("mlp")(*args), mlp_reference(args))


def fake_time(dispatch: str, name: str) -> int:
    """A deterministic 'time' for a candidate; `t*` candidates beat IREE's own."""
    base = 1000 + zlib.crc32(f"{dispatch}/{name}".encode()) % 100
    return base // 2 if name.startswith("t") else base


def fake_benchmark(job: BenchmarkJob) -> list[Measured]:
    """Times that do not depend on the machine, outputs that all agree."""
    return [
        Measured(job.dispatch, candidate, [fake_time(job.dispatch, candidate.name)], [])
        for candidate, _ in job.candidates
    ]


def candidates_ranked_by_order(job: BenchmarkJob) -> list[Measured]:
    """The real benchmark, one quick round (real outputs); candidate k reported (1 + k/10)
    times faster than IREE's own, so that every candidate that built is kept."""
    measured = benchmark_dispatch(replace(job, repeats=1, seconds=0.0, warmup=0))
    for k, result in enumerate(measured):
        if result.error is None:
            result.times_ns = [int(1e6 / (1 + 0.1 * k))]
    return measured


def _blob(array: np.ndarray) -> str:
    """A `dense_resource` blob of f32 values, as MLIR writes it (4-byte alignment, then
    the bytes)."""
    return "0x04000000" + array.astype(np.float32).tobytes().hex().upper()


BIASED_WEIGHT = (np.arange(64 * 8, dtype=np.float32).reshape(64, 8) % 7 - 3) / 8
BIAS = np.arange(8, dtype=np.float32) / 4 - 1
BIASED = f"""func.func @biased(%x: tensor<4x64xf32>) -> tensor<4x8xf32> {{
  %w = arith.constant dense_resource<weight_64x8> : tensor<64x8xf32>
  %b = arith.constant dense_resource<bias_8> : tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.matmul ins(%x, %w : tensor<4x64xf32>, tensor<64x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}} ins(%r, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {{
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }} -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}}

{{-#
  dialect_resources: {{
    builtin: {{
      weight_64x8: "{_blob(BIASED_WEIGHT)}",
      bias_8: "{_blob(BIAS)}"
    }}
  }}
#-}}
"""
"""A matmul plus bias whose weights are `dense_resource` blobs, as iree-turbine writes
them: IREE hoists the weight into a global and moves the small bias into the dispatch's
kernel."""


# IREE's attention op (what torch's scaled_dot_product_attention becomes), its result
# transposed after it in the same dispatch.
ATTENTION = """func.func @attention(%q: tensor<2x64x32xf32>, %k: tensor<64x2x32xf32>, %v: tensor<2x64x32xf32>) -> tensor<64x2x32xf32> {
  %scale = arith.constant 0.125 : f32
  %empty = tensor.empty() : tensor<2x64x32xf32>
  %a = iree_linalg_ext.attention <indexing_maps = [affine_map<(b, m, n, k1, k2) -> (b, m, k1)>, affine_map<(b, m, n, k1, k2) -> (k2, b, k1)>, affine_map<(b, m, n, k1, k2) -> (b, k2, n)>, affine_map<(b, m, n, k1, k2) -> ()>, affine_map<(b, m, n, k1, k2) -> (b, m, n)>]>
      ins(%q, %k, %v, %scale : tensor<2x64x32xf32>, tensor<64x2x32xf32>, tensor<2x64x32xf32>, f32) outs(%empty : tensor<2x64x32xf32>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<2x64x32xf32>
  %t = tensor.empty() : tensor<64x2x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<2x64x32xf32>) outs(%t : tensor<64x2x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x2x32xf32>
  return %y : tensor<64x2x32xf32>
}
"""


# A 1-D convolution over channels-first data (torch's `nn.Conv1d`, as in Whisper's audio
# encoder): IREE vectorizes its output width only.
CONV1D = """func.func @conv1d(%x: tensor<1x32x66xf32>, %w: tensor<64x32x3xf32>) -> tensor<1x64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  %y = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>}
      ins(%x, %w : tensor<1x32x66xf32>, tensor<64x32x3xf32>) outs(%init : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  return %y : tensor<1x64x64xf32>
}
"""


def conv1d_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """numpy's `CONV1D`: y[0, f, i] = sum over c, k of x[0, c, i + k] * w[f, c, k]."""
    width = x.shape[2] - w.shape[2] + 1
    windows = np.stack([x[0, :, k : k + width] for k in range(w.shape[2])], axis=-1)
    return np.einsum("cik,fck->fi", windows, w)[None]


def attention_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query, keys and values for `ATTENTION`."""
    rng = np.random.default_rng(3)
    q, v = (rng.standard_normal((2, 64, 32)).astype(np.float32) for _ in range(2))
    return q, rng.standard_normal((64, 2, 32)).astype(np.float32), v


def attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """numpy's `ATTENTION`: softmax(q k^T / 8) v per batch, its result transposed."""
    scores = np.einsum("bmk,nbk->bmn", q, k) * 0.125
    p = np.exp(scores - scores.max(axis=2, keepdims=True))
    return np.einsum("bmn,bnd->bmd", p / p.sum(axis=2, keepdims=True), v).transpose(1, 0, 2)


def after_where_the_time_is(report: TuneReport) -> list[str]:
    """A report's summary lines after its first ones, where the model's time is."""
    return summary_lines(report)[len(where_the_time_is(report)) :]
