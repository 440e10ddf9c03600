"""A corpus model run by its framework's own CPU runtime, for B14 (`b14_peers.py`).

Started in the frontends' interpreter (the one `tests/data/models/requirements.txt` pins,
`make frontends`), it builds the model NAME as `tests/data/models/export.py` does (the
same seed: the weights of the IREE builds), makes it a runner of RUNTIME, calls it a few
times to warm it up (`torch.compile` compiles then), says it is ready, then answers one
JSON line per command read from stdin:

    call         -> {"ns": one call's time: inputs from host arrays, results to host arrays}
    result PATH  -> {"saved": PATH} (one call's results: an .npz of result_0, result_1, ...)
    quit

    python benchmarks/peer_worker.py NAME RUNTIME THREADS INPUTS.npz

RUNTIME: `jax.jit` (a Flax model), `onnxruntime` (an ONNX one, exported as export.py
exports it), `torch` (eager, inference mode) or `torch.compile` (inductor) for a torch one.
INPUTS: the IREE build's arguments (arg_0, arg_1, ...), each cast to the element type of
the model's example argument. THREADS: the runtime's intra-op threads. Where the model
cannot be built or run by RUNTIME, the first line is {"error": "..."} and the exit code 1.
Uses the standard library, numpy and the frameworks only (not this project's packages).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

EXPORT = Path(__file__).resolve().parent.parent / "tests" / "data" / "models" / "export.py"
WARMUP_CALLS = 3

Runner = Callable[[], list[np.ndarray]]


def _export_module():
    spec = importlib.util.spec_from_file_location("corpus_export", EXPORT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_export"] = module  # (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module


def _jax_runner(frontend, inputs: list[np.ndarray], threads: int) -> Runner:
    import jax

    args = [np.asarray(x).astype(e.dtype) for x, e in zip(inputs, frontend.example, strict=True)]
    function = jax.jit(frontend.model)
    return lambda: [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(function(*args))]


def _onnx_runner(frontend, inputs: list[np.ndarray], threads: int) -> Runner:
    import onnxruntime
    import torch

    folder = tempfile.mkdtemp(prefix="b14-onnx-")
    path = str(Path(folder) / f"{frontend.onnx_stem}.onnx")
    torch.onnx.export(frontend.model, frontend.example, path, dynamo=True)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    feed = {
        name: np.asarray(x).astype(e.numpy().dtype)
        for name, x, e in zip(names, inputs, frontend.example, strict=True)
    }
    return lambda: [np.asarray(r) for r in session.run(None, feed)]


def _torch_runner(frontend, inputs: list[np.ndarray], threads: int, compiled: bool) -> Runner:
    import torch

    torch.set_num_threads(threads)
    args = [
        torch.from_numpy(np.ascontiguousarray(x)).to(e.dtype)
        for x, e in zip(inputs, frontend.example, strict=True)
    ]
    module = torch.compile(frontend.model) if compiled else frontend.model

    def run() -> list[np.ndarray]:
        with torch.inference_mode():
            out = module(*args)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return [t.detach().numpy() for t in outs]

    return run


def runner(name: str, runtime: str, threads: int, inputs: list[np.ndarray]) -> Runner:
    """Model `name` of the corpus run by `runtime` on `inputs`."""
    frontend = _export_module().MODELS[name]()
    expected = {
        "jax": ("jax.jit",),
        "onnx": ("onnxruntime",),
        "turbine": ("torch", "torch.compile"),
    }
    if runtime not in expected[frontend.kind]:
        raise ValueError(
            f"{name} is a {frontend.kind} model; its runtimes: {expected[frontend.kind]}"
        )
    if len(inputs) != len(frontend.example):
        raise ValueError(f"{name} takes {len(frontend.example)} arguments, {len(inputs)} given")
    if runtime == "jax.jit":
        return _jax_runner(frontend, inputs, threads)
    if runtime == "onnxruntime":
        return _onnx_runner(frontend, inputs, threads)
    return _torch_runner(frontend, inputs, threads, compiled=runtime == "torch.compile")


def _protocol():
    """The answers' stream: the process's stdout, which from then on is its stderr (the
    frameworks print progress to stdout, which would come between the answers)."""
    stream = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


ANSWERS = _protocol() if __name__ == "__main__" else sys.stdout


def _answer(message: dict) -> None:
    ANSWERS.write(json.dumps(message) + "\n")
    ANSWERS.flush()


def serve(run: Runner, commands) -> None:
    """Answer `call`, `result PATH` and `quit` (see the module docstring)."""
    for line in commands:
        command, _, argument = line.strip().partition(" ")
        if command == "call":
            begin = time.perf_counter_ns()
            run()
            _answer({"ns": time.perf_counter_ns() - begin})
        elif command == "result":
            # bfloat16 (which an .npz cannot hold) as float32
            results = [r.astype(np.float32) if r.dtype.kind == "V" else r for r in run()]
            np.savez(argument, **{f"result_{i}": r for i, r in enumerate(results)})
            _answer({"saved": argument})
        elif command == "quit":
            return
        else:
            _answer({"error": f"unknown command {command!r}"})


def main(argv: list[str]) -> int:
    name, runtime, threads, inputs_path = argv
    os.environ.setdefault("OMP_NUM_THREADS", threads)
    with np.load(inputs_path) as saved:
        inputs = [saved[f"arg_{i}"] for i in range(len(saved.files))]
    try:
        run = runner(name, runtime, int(threads), inputs)
        for _ in range(WARMUP_CALLS):
            run()
    except Exception as err:  # any failure of a framework: the case reports it
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        _answer({"error": f"{type(err).__name__}: {first}"})
        return 1
    _answer({"ready": True})
    serve(run, sys.stdin)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
