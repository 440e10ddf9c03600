"""GPU check of `tune-model --target cuda`: every candidate IREE's GPU pipeline built, on a
real NVIDIA GPU, against IREE's own configuration, numpy and cuBLAS (through torch).

`tune-model` without the GPU compiles the candidates and keeps them for the run time to
choose (docs/tune_model.md); this check is where that choice meets the hardware. Two steps,
since the machine with the GPU may have only IREE's runtime (the compiler wheel is large):

    python benchmarks/gpu/check_tune_model.py --build DIR      # here: needs the compiler
    python benchmarks/gpu/check_tune_model.py --prebuilt DIR [--json OUT.json]   # there

`--build` writes, per case, the stock build (`iree-compile`'s defaults), the tuned model
with `explicit` groups holding every candidate that built, and the same with `online`
groups, plus what running them needs (`CASE.json`). `--prebuilt` then, per case:

1. runs the stock build; a matmul's result is checked against numpy (f32 accumulation),
   a model's is the reference for the others;
2. forces each group's variants in turn through the `explicit` module's setters (the other
   groups at IREE's own), checks each result and times a call (device-resident inputs; a
   loop of calls, median of 5 rounds): per variant its time against IREE's own;
3. sets every group to its fastest variant and times the model against the stock build;
4. calls the `online` module until every group has decided, checks its result, and times
   it against the stock build, the two interleaved;
5. for a matmul, with torch: cuBLAS's time for the same product (f16 inputs, f16 out;
   f32 with TF32 off), as a roof.

Exit status 0 when every result matched and every online group decided, 1 otherwise, 2
when no GPU was found.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.gpu.check_triton import (  # noqa: E402
    compute_capability,
    matches,
    time_per_call,
)

ARCH = "sm_80"
"""IREE 3.13 generates CUDA code for sm_80 (tune-model refuses sm_90); the PTX JIT-compiles
forward on newer GPUs."""


def _matmul(m: int, n: int, k: int, element: str) -> str:
    """`@main`: an M x K by K x N `linalg.matmul` of `element`s, accumulated in f32."""
    a, b, c = f"tensor<{m}x{k}x{element}>", f"tensor<{k}x{n}x{element}>", f"tensor<{m}x{n}xf32>"
    return f"""func.func @main(%a: {a}, %b: {b}) -> {c} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {c}
  %f = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}
  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs(%f : {c}) -> {c}
  return %r : {c}
}}
"""


@dataclass(frozen=True)
class Case:
    name: str
    source: Callable[[], str]
    operands: list[tuple[list[int], str]]  # shape, numpy dtype
    candidates: int  # tried per dispatch besides IREE's own (all that build are kept)
    matmul: tuple[int, int, int] | None = None  # (M, N, K): checked against numpy

    def inputs(self) -> list[np.ndarray]:
        """Uniform in [-1, 1) (integers, token ids: 0..7), one seed per operand."""
        out = []
        for seed, (shape, dtype) in enumerate(self.operands):
            rng = np.random.default_rng(seed)
            if np.dtype(dtype).kind == "f":
                out.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
            else:
                out.append(rng.integers(0, 8, shape).astype(dtype))
        return out


CASES = [
    Case(
        "matmul_f16_4096",
        lambda: _matmul(4096, 4096, 4096, "f16"),
        [([4096, 4096], "float16"), ([4096, 4096], "float16")],
        16,
        (4096, 4096, 4096),
    ),
    Case(
        "ffn_f16_4096x3072x768",
        lambda: _matmul(4096, 3072, 768, "f16"),
        [([4096, 768], "float16"), ([768, 3072], "float16")],
        16,
        (4096, 3072, 768),
    ),
    Case(
        "matmul_f32_2048",
        lambda: _matmul(2048, 2048, 2048, "f32"),
        [([2048, 2048], "float32"), ([2048, 2048], "float32")],
        16,
        (2048, 2048, 2048),
    ),
    Case(
        "bert_flax",
        lambda: (ROOT / "tests/data/models/bert_flax.mlir").read_text(),
        [([1, 64], "int32")],
        6,
    ),
]


# --- building (needs the compiler) -------------------------------------------------------------


def build(case: Case, folder: Path, target: str = "cuda", **tune) -> None:
    """Write `case`'s stock build, tuned modules and `CASE.json` into `folder`; `tune`:
    more arguments of `tune_model` (an injected benchmark, say)."""
    from autotune_model.pipeline import tune_model
    from autotune_model.tunable import TuneOptions
    from autotune_model.tuning_setup import input_type_flags
    from lowering.driver import compile_lowered

    text = case.source()
    arch = ARCH if target == "cuda" else None
    started = time.perf_counter()
    (folder / f"{case.name}.stock.vmfb").write_bytes(
        compile_lowered(text, target, arch, extra_args=input_type_flags(text))
    )
    reports = {}
    for policy in ("explicit", "online"):
        options = TuneOptions(
            target=target,
            arch=arch,
            policy=policy,
            candidates=case.candidates,
            top_k=case.candidates + 1,
            time_model=False,
            dispatch_gains=False,
        )
        tuned = tune_model(text, options, filename=case.name, quiet=True, **tune)
        (folder / f"{case.name}.{policy}.vmfb").write_bytes(tuned.vmfb)
        reports[policy] = json.loads(tuned.report.to_json())
    dispatches = reports["explicit"]["dispatches"]
    meta = {
        "name": case.name,
        "target": target,
        "arch": arch,
        "build_s": round(time.perf_counter() - started, 1),
        "dispatches": [
            {
                "export": d["export"],
                "operands": d["operands"],
                "candidates": [(c["name"], c["fate"], c["detail"]) for c in d["candidates"]],
            }
            for d in dispatches
        ],
    }
    (folder / f"{case.name}.json").write_text(json.dumps(meta, indent=1))
    built = sum(1 for d in dispatches for c in d["candidates"] if c["fate"] != "failed to compile")
    print(
        f"{case.name}: {len(dispatches)} dispatches, {built} configurations built, "
        f"in {meta['build_s']} s"
    )


# --- running (needs only IREE's runtime) -------------------------------------------------------


def _ready(_) -> None:
    """IREE's calls (and the cuBLAS call here) return once their results are ready."""


def interleaved(calls: dict[str, Callable[[], object]], rounds: int = 7, per: int = 20):
    """Median seconds per call of each callable, timed in alternating rounds."""
    times: dict[str, list[float]] = {k: [] for k in calls}
    for r in range(rounds):
        order = list(calls) if r % 2 == 0 else list(reversed(calls))
        for name in order:
            start = time.perf_counter()
            for _ in range(per):
                calls[name]()
            times[name].append((time.perf_counter() - start) / per)
    return {k: statistics.median(v) for k, v in times.items()}


def _stock(vmfb: bytes, device: str):
    import iree.runtime as rt

    config = rt.Config(device)
    context = rt.SystemContext(config=config)
    module = rt.VmModule.copy_buffer(config.vm_instance, vmfb)
    context.add_vm_module(module)
    return config, context.modules[module.name]["main"]


def _cublas(case: Case, arrays: list[np.ndarray], budget: float) -> dict | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = (torch.from_numpy(x).cuda() for x in arrays)

    def call():
        out = a @ b
        torch.cuda.synchronize()
        return out

    return {
        "us": time_per_call(call, _ready, budget) * 1e6,
        "what": f"torch {torch.__version__} a @ b",
    }


def run_case(case: Case, folder: Path, budget: float, device: str) -> tuple[bool, dict]:
    import iree.runtime as rt

    from autotune_runtime import load

    meta = json.loads((folder / f"{case.name}.json").read_text())
    arrays = case.inputs()
    config, stock = _stock((folder / f"{case.name}.stock.vmfb").read_bytes(), device)
    stock_args = [rt.asdevicearray(config.device, a) for a in arrays]
    stock_out = np.asarray(stock(*stock_args).to_host(), np.float32)
    result: dict = {"case": case.name, "build_s": meta["build_s"]}
    if case.matmul:
        reference = arrays[0].astype(np.float32) @ arrays[1].astype(np.float32)
        rtol, atol = (1e-2, 5e-2) if arrays[0].dtype == np.float16 else (1e-3, 1e-3)
        ok, err = matches(stock_out, reference, rtol, atol)
        result["stock_ok"], result["stock_max_err"] = ok, err
    else:
        reference, rtol, atol = stock_out, 1e-2, 1e-3
        ok = bool(np.isfinite(stock_out).all())
        result["stock_ok"] = ok
    stock_s = time_per_call(lambda: stock(*stock_args), _ready, budget)
    flop = 2 * np.prod(case.matmul) if case.matmul else None
    result["stock_us"] = stock_s * 1e6
    print(
        f"\n== {case.name}: stock build {stock_s * 1e6:.1f} us"
        + (f" ({flop / stock_s / 1e12:.1f} TFLOP/s)" if flop else "")
        + ("" if ok else " WRONG")
    )

    explicit = load(
        (folder / f"{case.name}.explicit.vmfb").read_bytes(), device=device, cache=False
    )
    run = explicit.context.modules[explicit.module.name]["main"]
    args = [rt.asdevicearray(explicit.config.device, a) for a in arrays]
    groups = list(explicit.groups.values())
    setters = {g.qualified_name: explicit.function(g.setter) for g in groups}
    best: dict[str, str] = {}
    result["groups"] = []
    for group in groups:
        rows = []
        for other in groups:
            setters[other.qualified_name](other.variants[other.reference])
        print(f"-- {group.qualified_name}: {len(group.variants)} variants")
        for variant in group.variants:
            setters[group.qualified_name](variant)
            good, err = matches(np.asarray(run(*args).to_host(), np.float32), reference, rtol, atol)
            seconds = time_per_call(lambda: run(*args), _ready, budget)
            rows.append({"variant": variant, "us": seconds * 1e6, "ok": good, "max_err": err})
            ok &= good
        ref_us = next(r["us"] for r in rows if r["variant"] == group.variants[group.reference])
        for r in rows:
            r["vs_iree"] = r["us"] / ref_us
            print(
                f"   {r['variant']:<24}{r['us']:>10.1f} us  x{r['vs_iree']:.3f} of IREE's"
                + (f"  {flop / r['us'] / 1e6:.1f} TFLOP/s" if flop and len(groups) == 1 else "")
                + ("" if r["ok"] else f"  WRONG (max err {r['max_err']:.3g})")
            )
        fastest = min((r for r in rows if r["ok"]), key=lambda r: r["us"])
        best[group.qualified_name] = fastest["variant"]
        result["groups"].append({"group": group.qualified_name, "variants": rows})
    for group in groups:
        setters[group.qualified_name](best[group.qualified_name])
    good, _ = matches(np.asarray(run(*args).to_host(), np.float32), reference, rtol, atol)
    ok &= good
    timed = interleaved({"stock": lambda: stock(*stock_args), "best": lambda: run(*args)})
    result["best"] = best
    result["best_over_stock"] = timed["best"] / timed["stock"]
    print(f"every group at its fastest: x{result['best_over_stock']:.3f} of the stock build")
    explicit.close()

    online = load((folder / f"{case.name}.online.vmfb").read_bytes(), device=device, cache=False)
    run_online = online.context.modules[online.module.name]["main"]
    args = [rt.asdevicearray(online.config.device, a) for a in arrays]
    calls, start = 0, time.perf_counter()

    def settled() -> bool:
        stats = online.stats()
        return bool(stats) and all(s["decision"] is not None for s in stats)

    while calls < 3000 and not settled():
        run_online(*args)
        calls += 1
    tuning_s = time.perf_counter() - start
    good, err = matches(np.asarray(run_online(*args).to_host(), np.float32), reference, rtol, atol)
    decided = settled()
    ok &= good and decided
    decisions = {f"{g}": v for (g, _), v in online.decisions().items()}
    timed = interleaved({"stock": lambda: stock(*stock_args), "online": lambda: run_online(*args)})
    result["online"] = {
        "calls_to_settle": calls,
        "settled": decided,
        "tuning_s": tuning_s,
        "decisions": decisions,
        "ok": good,
        "over_stock": timed["online"] / timed["stock"],
    }
    print(
        f"online: {'every group decided' if decided else 'NOT SETTLED'} after {calls} calls "
        f"({tuning_s:.2f} s): {decisions}; result "
        + ("matches" if good else f"WRONG (max err {err:.3g})")
        + f"; then x{result['online']['over_stock']:.3f} of the stock build"
    )
    online.close()
    if case.matmul and device == "cuda":
        cublas = _cublas(case, arrays, budget)
        if cublas:
            result["cublas"] = cublas
            print(
                f"cuBLAS ({cublas['what']}): {cublas['us']:.1f} us "
                f"({flop / cublas['us'] / 1e6:.1f} TFLOP/s)"
            )
    result["ok"] = ok
    return ok, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", metavar="DIR", help="compile the modules into DIR")
    parser.add_argument("--prebuilt", metavar="DIR", help="run the modules --build wrote")
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--json", metavar="OUT.json", help="also write every measurement here")
    parser.add_argument(
        "--target", default="cuda", help="--build: cuda (default) or llvm-cpu (to try the check)"
    )
    parser.add_argument("--device", default="cuda", help="--prebuilt: IREE device (cuda)")
    parser.add_argument("--budget", type=float, default=0.2, help="seconds per timing (0.2)")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.only or c.name in args.only.split(",")]
    if args.build:
        folder = Path(args.build)
        folder.mkdir(parents=True, exist_ok=True)
        for case in cases:
            build(case, folder, args.target)
        return 0
    if not args.prebuilt:
        parser.error("give --build DIR (here) or --prebuilt DIR (on the GPU's machine)")
    capability = compute_capability() if args.device == "cuda" else "none"
    if capability is None:
        print("no NVIDIA GPU: libcuda.so.1 not found or no device", file=sys.stderr)
        return 2
    import iree.runtime as rt

    driver = rt.get_driver(args.device.split("://")[0])
    names = [d.get("name", "?") for d in driver.query_available_devices()]
    print(f"device: {names[0] if names else '?'} (compute capability {capability})")
    ok, results = True, []
    for case in cases:
        try:
            good, result = run_case(case, Path(args.prebuilt), args.budget, args.device)
        except Exception as error:  # one case's failure must not hide the others' results
            good, result = False, {"case": case.name, "error": f"{type(error).__name__}: {error}"}
            print(f"\n== {case.name}: FAILED: {result['error']}")
        ok &= good
        results.append(result)
    print("\nall results match and every group decided" if ok else "\nSOME CHECKS FAILED")
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": names[:1], "results": results}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
