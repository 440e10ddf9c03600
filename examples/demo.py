"""`make demo`: tune a three-variant matmul on the local CPU, then build the CUDA example.

1. Lower and compile `examples/matmul_cpu.mlir` (llvm-cpu, online policy).
2. Call it on local-task until the runtime commits; print each variant's timings and the
   winner; check every result against numpy.
3. Compile `examples/vecadd_cuda.mlir` (three PTX variants) for sm_80 to a `.vmfb`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from autotune_contracts.errors import DiagnosticError
from autotune_runtime.session import load
from lowering.driver import compile

EXAMPLES = Path(__file__).parent
OUT = EXAMPLES.parent / "out"
MAX_CALLS = 200


def tune_matmul() -> None:
    source = EXAMPLES / "matmul_cpu.mlir"
    started = time.perf_counter()
    vmfb = compile(source.read_text(), target="llvm-cpu", filename=source, policy="online")
    print(f"compiled {source.name} for llvm-cpu in {time.perf_counter() - started:.1f} s")
    OUT.mkdir(exist_ok=True)
    (OUT / "matmul_cpu.vmfb").write_bytes(vmfb)

    module = load(vmfb, device="local-task", cache=False)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256), dtype=np.float32)
    b = rng.standard_normal((256, 256), dtype=np.float32)
    expected = a @ b
    calls = 0
    while not module.settled() and calls < MAX_CALLS:
        np.testing.assert_allclose(module.matmul(a, b), expected, rtol=1e-4, atol=1e-3)
        calls += 1
    np.testing.assert_allclose(module.matmul(a, b), expected, rtol=1e-4, atol=1e-3)
    if not module.settled():
        raise SystemExit(f"no decision after {MAX_CALLS} calls")

    (stats,) = module.stats()
    print(f"\nonline tuning committed after {calls} calls ({stats['explored_calls']} exploring)")
    print(f"{'variant':<12}{'samples':>8}{'median us':>12}{'min us':>10}{'spread us':>11}")
    for v in stats["variants"]:
        note = "  (eliminated)" if v["eliminated"] else ""
        print(
            f"{v['variant']:<12}{v['samples']:>8}{v['median_ns'] / 1e3:>12.1f}"
            f"{v['min_ns'] / 1e3:>10.1f}{v['spread_ns'] / 1e3:>11.1f}{note}"
        )
    print(f"winner: {stats['decision']}; every result matched numpy (rtol 1e-4)")
    module.close()


def compile_cuda() -> None:
    source = EXAMPLES / "vecadd_cuda.mlir"
    vmfb = compile(source.read_text(), target="cuda", arch="sm_80", filename=source)
    (OUT / "vecadd_cuda.vmfb").write_bytes(vmfb)
    print(
        f"\ncompiled {source.name} (3 PTX variants) for sm_80: out/vecadd_cuda.vmfb, "
        f"{len(vmfb)} bytes"
    )


def main() -> int:
    try:
        tune_matmul()
        compile_cuda()
    except DiagnosticError as err:
        print(err.render(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
