"""GPU check of `iree-autotune import-triton`: every imported Triton config, and the tuned group,
on a real NVIDIA GPU, against numpy; Triton's own launches of the same configs side by side.

Run from the repository root on a machine with an NVIDIA GPU (driver with CUDA 12+) and the
project's wheels (iree-base-compiler, iree-base-runtime, xdsl, numpy); triton and torch are
optional (their column is left out without them). Finishes in well under 5 minutes:

    python benchmarks/gpu/check_triton.py [--arch sm_90] [--json OUT.json] [--quick]
    python benchmarks/gpu/check_triton.py --dry-run   # compile only: no GPU needed
    python benchmarks/gpu/check_triton.py --build DIR         # here: compile, save in DIR
    python benchmarks/gpu/check_triton.py --prebuilt DIR      # there: only IREE's runtime

For each kernel of tests/data/triton (vector add, tutorial fp16 matmul, tutorial softmax) it
compiles the shipped module for the GPU's arch (sm_90 PTX on compute capability 9.0, sm_80
PTX otherwise), then for an aligned and an odd workload (the odd one takes the 16-divisible
configs' fallbacks, so it also checks the shape guards):

1. `explicit` module: `__autotune_set_...(i)` forces config i; its result must match numpy,
   and its time per call is measured (device-resident inputs; mean over a timed loop that
   ends with a read-back, median of 5 rounds);
2. `online` module: called until the runtime commits; the winner and its result are checked;
3. with triton + torch: the same configs launched by Triton (`kernel[grid](...)`), checked
   against numpy, timed per launch (same loop) and with `triton.testing.do_bench`.

Exit status 0 when every result matched numpy, 1 otherwise, 2 when no GPU was found.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "data" / "triton"


# --- the GPU -----------------------------------------------------------------------------------


def compute_capability() -> tuple[int, int] | None:
    """Device 0's compute capability from libcuda (no extra wheels), or None."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    if cuda.cuInit(0) != 0:
        return None
    device = ctypes.c_int()
    if cuda.cuDeviceGet(ctypes.byref(device), 0) != 0:
        return None
    major, minor = ctypes.c_int(), ctypes.c_int()
    cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device)  # ..._COMPUTE_CAPABILITY_MAJOR
    cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)  # ..._COMPUTE_CAPABILITY_MINOR
    return major.value, minor.value


def arch_for(capability: tuple[int, int]) -> str:
    # Triton's sm_90 PTX targets sm_90a, which runs only on 9.0; sm_80 PTX JIT-compiles forward.
    return "sm_90" if capability == (9, 0) else "sm_80"


# --- the kernels -------------------------------------------------------------------------------


@dataclass
class Case:
    kernel: str  # the file stem in tests/data/triton
    entry: str  # the module's entry function
    workloads: list[dict[str, int]]  # an aligned and an odd one
    inputs: Callable[[np.random.Generator, dict[str, int]], list[np.ndarray]]
    reference: Callable[[list[np.ndarray]], np.ndarray]
    rtol: float
    atol: float
    triton: Callable | None = None  # (module, config, inputs as torch, dims) -> (launch, out)
    results: list[dict] = field(default_factory=list)


def _vecadd_inputs(rng, d):
    return [rng.standard_normal(d["n"], dtype=np.float32) for _ in range(2)]


def _matmul_inputs(rng, d):
    a = rng.standard_normal((d["M"], d["K"]), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((d["K"], d["N"]), dtype=np.float32).astype(np.float16)
    return [a, b]


def _matmul_reference(arrays):
    a, b = arrays
    return a.astype(np.float32) @ b.astype(np.float32)


def _softmax_inputs(rng, d):
    return [rng.standard_normal((d["R"], d["C"]), dtype=np.float32)]


def _softmax_reference(arrays):
    (x,) = arrays
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def _triton_vecadd(torch, triton, config, tensors, d):
    from examples.triton.vecadd import add_kernel

    x, y = tensors
    out = torch.empty_like(x)
    block = config["kwargs"]["BLOCK_SIZE"]
    grid = (triton.cdiv(d["n"], block),)

    def launch():
        add_kernel[grid](
            x,
            y,
            out,
            d["n"],
            BLOCK_SIZE=block,
            num_warps=config["num_warps"],
            num_stages=config["num_stages"],
        )

    return launch, out


def _triton_matmul(torch, triton, config, tensors, d):
    from examples.triton.matmul import matmul_kernel

    a, b = tensors
    M, N, K = d["M"], d["N"], d["K"]
    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    kw = config["kwargs"]
    grid = (triton.cdiv(M, kw["BLOCK_SIZE_M"]) * triton.cdiv(N, kw["BLOCK_SIZE_N"]),)

    def launch():
        matmul_kernel.fn[grid](
            a,
            b,
            c,
            M,
            N,
            K,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            ACTIVATION="",
            num_warps=config["num_warps"],
            num_stages=config["num_stages"],
            **kw,
        )

    return launch, c


def _triton_softmax(torch, triton, config, tensors, d):
    from examples.triton.softmax import softmax_kernel

    (x,) = tensors
    out = torch.empty_like(x)
    R, C = d["R"], d["C"]

    def launch():
        # As the tutorial calls it: BLOCK_SIZE and the kernel's num_stages positionally.
        softmax_kernel[(R,)](
            out, x, x.stride(0), out.stride(0), R, C, 1024, 1, num_warps=config["num_warps"]
        )

    return launch, out


def cases(quick: bool) -> list[Case]:
    scale = 4 if quick else 1
    return [
        Case(
            "vecadd",
            "add_kernel",
            [{"n": (1 << 24) // scale}, {"n": (1 << 24) // scale + 3}],
            _vecadd_inputs,
            lambda arrays: arrays[0] + arrays[1],
            0.0,
            0.0,
            _triton_vecadd,
        ),
        Case(
            "matmul",
            "matmul_kernel",
            [
                {"M": 2048 // scale, "K": 2048 // scale, "N": 2048 // scale},
                {"M": 1000, "K": 1000, "N": 1000},
            ],
            _matmul_inputs,
            _matmul_reference,
            1e-2,
            1e-1,
            _triton_matmul,
        ),
        Case(
            "softmax",
            "softmax_kernel",
            [{"R": 4096 // scale, "C": 1024}, {"R": 4096 // scale, "C": 1000}],
            _softmax_inputs,
            _softmax_reference,
            1e-4,
            1e-6,
            _triton_softmax,
        ),
    ]


# --- measuring ---------------------------------------------------------------------------------


def time_per_call(
    call: Callable[[], object], sync: Callable[[object], object], budget: float
) -> float:
    """Seconds per call: a loop of calls ended by one `sync` of the last result, sized to
    about `budget` seconds; the median of 5 such rounds (after 3 warm-up calls)."""
    for _ in range(3):
        last = call()
    sync(last)
    start = time.perf_counter()
    sync(call())
    once = max(time.perf_counter() - start, 1e-6)
    n = max(3, min(1000, int(budget / 5 / once)))
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            last = call()
        sync(last)
        rounds.append((time.perf_counter() - start) / n)
    return statistics.median(rounds)


def matches(out: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> tuple[bool, float]:
    out = np.asarray(out, dtype=np.float32)
    if out.shape != ref.shape:
        return False, float("inf")
    err = float(np.max(np.abs(out - ref))) if out.size else 0.0
    return bool(np.allclose(out, ref, rtol=rtol, atol=atol)), err


def triton_side():
    """(torch, triton) when both are importable and torch sees the GPU, else None."""
    try:
        import torch
        import triton
        import triton.testing  # noqa: F401 - do_bench
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return torch, triton


# --- the check ---------------------------------------------------------------------------------


POLICIES = ("explicit", "online")


@dataclass
class Built:
    """A kernel's modules for one arch, and what running them needs to know of the import
    (so that a machine with only the IREE runtime can run them: `--prebuilt`)."""

    vmfbs: dict[str, bytes]  # by policy
    setter: str  # the explicit module's `__autotune_set_...` function
    configs: list[dict]  # per variant, in the group's order: name, Triton config values
    dims: list[str]  # the workload's dimensions, in the group's key order
    aligned: dict[str, bool]  # per workload (`_workload_key`): specialized exports run
    seconds: float  # compile time


def _workload_key(dims: dict[str, int]) -> str:
    return json.dumps(dims, sort_keys=True)


def build(case: Case, arch: str) -> Built:
    """Compile `case`'s shipped module for `arch` with each policy (needs the compiler)."""
    from lowering.driver import compile
    from lowering.triton import ImportedKernel

    kernel = ImportedKernel.load_bundle(DATA / f"{case.kernel}.{arch}.json")
    source = DATA / f"{case.kernel}.{arch}.mlir"
    started = time.perf_counter()
    vmfbs = {
        policy: compile(
            source.read_text(), target="cuda", arch=arch, filename=source, policy=policy
        )
        for policy in POLICIES
    }
    workloads = [
        w for c in (*cases(False), *cases(True)) if c.kernel == case.kernel for w in c.workloads
    ]
    return Built(
        vmfbs=vmfbs,
        setter=f"__autotune_set_{kernel.spec.name}_exe_{kernel.spec.name}",
        configs=[{"name": v.name, "config": v.config.to_json()} for v in kernel.group_variants],
        dims=list(kernel.spec.dims),
        aligned={
            _workload_key(dims): all(
                kernel.spec.arg(n).expr.evaluate(dims) % kernel.spec.divisibility == 0
                for n in kernel.spec.assumed_divisible()
            )
            for dims in workloads
        },
        seconds=time.perf_counter() - started,
    )


def save(built: Built, folder: Path, kernel: str, arch: str) -> None:
    for policy, vmfb in built.vmfbs.items():
        (folder / f"{kernel}.{arch}.{policy}.vmfb").write_bytes(vmfb)
    meta = {k: v for k, v in built.__dict__.items() if k != "vmfbs"}
    (folder / f"{kernel}.{arch}.json").write_text(json.dumps(meta, indent=1))


def load_built(folder: Path, kernel: str, arch: str) -> Built:
    meta = json.loads((folder / f"{kernel}.{arch}.json").read_text())
    vmfbs = {p: (folder / f"{kernel}.{arch}.{p}.vmfb").read_bytes() for p in POLICIES}
    return Built(vmfbs=vmfbs, **meta)


def run_case(case: Case, arch: str, budget: float, rng, side, built: Built) -> bool:
    import iree.runtime as rt

    from autotune_runtime import load

    vmfbs = built.vmfbs
    configs = built.configs
    print(f"\n== {case.kernel} ({arch}): {len(configs)} configs, compiled in {built.seconds:.1f} s")
    explicit = load(vmfbs["explicit"], device="cuda", cache=False)
    set_choice = explicit.function(built.setter)
    run_explicit = explicit.context.modules[explicit.module.name][case.entry]
    ok = True
    for dims in case.workloads:
        arrays = case.inputs(rng, dims)
        ref = case.reference(arrays)
        device_arrays = [rt.asdevicearray(explicit.config.device, a) for a in arrays]
        workload = ", ".join(f"{k}={v}" for k, v in dims.items())
        aligned = built.aligned[_workload_key(dims)]
        print(
            f"-- workload {workload}: "
            + ("16-aligned, specialized exports" if aligned else "not 16-aligned: fallbacks")
        )
        header = f"{'config':<22}{'IREE us/call':>14}{'max err':>10}"
        if side:
            header += f"{'Triton us/launch':>18}{'do_bench us':>13}{'max err':>10}"
        print(header)
        for index, v in enumerate(configs):
            set_choice(index)
            out = run_explicit(*device_arrays).to_host()
            good, err = matches(out, ref, case.rtol, case.atol)
            # IREE's entry functions are "sync": a call returns once its results are ready.
            seconds = time_per_call(
                lambda args=device_arrays: run_explicit(*args), lambda _: None, budget
            )
            row = {
                "kernel": case.kernel,
                "workload": dims,
                "config": v["name"],
                "config_values": v["config"],
                "iree_us": seconds * 1e6,
                "iree_ok": good,
                "iree_max_err": err,
            }
            line = f"{v['name']:<22}{seconds * 1e6:>14.1f}{err:>10.2g}{'' if good else ' WRONG'}"
            ok &= good
            if side and case.triton is not None:
                torch, triton = side
                tensors = [torch.from_numpy(a).cuda() for a in arrays]
                launch, result = case.triton(torch, triton, v["config"], tensors, dims)
                launch()
                torch.cuda.synchronize()
                t_good, t_err = matches(result.cpu().numpy(), ref, case.rtol, case.atol)
                t_seconds = time_per_call(
                    launch, lambda _, cuda=torch.cuda: cuda.synchronize(), budget
                )
                bench_ms = triton.testing.do_bench(launch, warmup=25, rep=100, return_mode="median")
                row.update(
                    triton_us=t_seconds * 1e6,
                    triton_do_bench_us=bench_ms * 1e3,
                    triton_ok=t_good,
                    triton_max_err=t_err,
                )
                line += f"{t_seconds * 1e6:>18.1f}{bench_ms * 1e3:>13.1f}{t_err:>10.2g}"
                line += "" if t_good else " WRONG"
            print(line)
            case.results.append(row)
        best = min((r for r in case.results if r["workload"] == dims), key=lambda r: r["iree_us"])
        print(f"fastest forced config: {best['config']} ({best['iree_us']:.1f} us/call)")
    explicit.close()

    online = load(vmfbs["online"], device="cuda", cache=False)
    run_online = online.context.modules[online.module.name][case.entry]
    for dims in case.workloads:
        arrays = case.inputs(rng, dims)
        ref = case.reference(arrays)
        device_arrays = [rt.asdevicearray(online.config.device, a) for a in arrays]
        key = [dims[d] for d in built.dims]

        def committed(key=key):
            return next((s for s in online.stats() if s["workload"] == key and s["decision"]), None)

        calls, start = 0, time.perf_counter()
        while calls < 5000 and committed() is None:
            run_online(*device_arrays)
            calls += 1
        latest = committed()
        good, err = matches(run_online(*device_arrays).to_host(), ref, case.rtol, case.atol)
        ok &= good and latest is not None
        winner = latest["decision"] if latest else None
        print(
            f"online group, {', '.join(f'{k}={v}' for k, v in dims.items())}: committed to "
            f"{winner} after {calls} calls ({time.perf_counter() - start:.2f} s); result "
            + ("matches numpy" if good else f"WRONG (max err {err:.3g})")
        )
        for v in latest["variants"] if latest else []:
            median = v.get("median_ns")
            print(
                f"  {v['variant']:<22}{v.get('samples') or 0:>4} samples, median "
                + ("-" if median is None else f"{median / 1e3:.1f} us")
                + (" (eliminated)" if v.get("eliminated") else "")
            )
        case.results.append(
            {
                "kernel": case.kernel,
                "workload": dims,
                "tuned": True,
                "winner": winner,
                "calls": calls,
                "ok": good,
                "stats": latest,
            }
        )
    online.close()
    return ok


def build_all(arch: str, folder: Path | None) -> bool:
    """Compile every module for `arch` (no GPU needed); with `folder`, save them there for
    `--prebuilt` on a machine with the GPU and only IREE's runtime."""
    for case in cases(quick=True):
        built = build(case, arch)
        sizes = ", ".join(f"{p} {len(v)} bytes" for p, v in built.vmfbs.items())
        print(f"{case.kernel} {arch}: {sizes}, in {built.seconds:.1f} s")
        if folder is not None:
            save(built, folder, case.kernel, arch)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=("sm_80", "sm_90"), help="default: from the GPU")
    parser.add_argument("--json", metavar="OUT.json", help="also write every measurement here")
    parser.add_argument("--quick", action="store_true", help="smaller workloads")
    parser.add_argument("--budget", type=float, default=0.25, help="seconds per timing (0.25)")
    parser.add_argument("--dry-run", action="store_true", help="compile only (no GPU needed)")
    parser.add_argument(
        "--build", metavar="DIR", help="compile only, and save the modules in DIR (no GPU needed)"
    )
    parser.add_argument(
        "--prebuilt", metavar="DIR", help="run the modules that --build saved (no compiler needed)"
    )
    args = parser.parse_args(argv)
    if args.dry_run or args.build:
        folder = Path(args.build) if args.build else None
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        archs = [args.arch] if args.arch else (["sm_80", "sm_90"] if folder else ["sm_80"])
        return 0 if all(build_all(arch, folder) for arch in archs) else 1
    capability = compute_capability()
    if capability is None:
        print("no NVIDIA GPU: libcuda.so.1 not found or no device", file=sys.stderr)
        return 2
    import iree.runtime as rt

    names = [d.get("name", "?") for d in rt.get_driver("cuda").query_available_devices()]
    arch = args.arch or arch_for(capability)
    side = triton_side()
    print(
        f"GPU: {names[0] if names else '?'} (compute capability {capability[0]}.{capability[1]}); "
        f"PTX for {arch}; Triton side by side: "
        + (f"yes (triton {side[1].__version__}, torch {side[0].__version__})" if side else "no")
    )
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    ok = True
    all_cases = cases(args.quick)
    for case in all_cases:
        if args.prebuilt:
            built = load_built(Path(args.prebuilt), case.kernel, arch)
        else:
            built = build(case, arch)
        ok &= run_case(case, arch, args.budget, rng, side, built)
    print(
        f"\n{'all results match numpy' if ok else 'SOME RESULTS ARE WRONG'}; "
        f"{time.perf_counter() - started:.0f} s"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "gpu": names[0] if names else None,
                    "capability": list(capability),
                    "arch": arch,
                    "ok": ok,
                    "results": [r for c in all_cases for r in c.results],
                },
                indent=1,
                default=str,
            )
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
