"""The small models the `tune-model` tests tune (tests/data/flow/src: an MLP and a matmul
with a dynamic dimension), the MLP's inputs and numpy reference, and a benchmark job whose
times do not depend on the machine."""

from __future__ import annotations

import zlib

import numpy as np
from conftest import DATA

from autotune_model import TuneOptions
from autotune_model.bench import BenchmarkJob, Measured

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
