"""One measurement in a fresh process (peak RSS is per process): `python -m benchmarks.probe`

- `lower IN.mlir OUT.mlir [POLICY]`: lower the file, write the result; report the seconds
  `lower_to_iree` took and the peak RSS.
- `run MODULE.vmfb FUNCTION SIZE CALLS`: load the module (local-sync, no cache) and call
  `FUNCTION(ones(SIZE))` CALLS times; report the peak RSS and whether tuning committed.
- `time MODULE.vmfb FUNCTION SIZE CALLS MODE`: load the module and time CALLS calls of the
  VM function on an input already on the device; MODE `committed` first calls it until
  tuning commits (untimed), `fresh` times the first CALLS calls from the load on. Reports
  the median, the sum and every call's nanoseconds, and the median of each variant's runs
  as tuning timed them.

Prints one JSON line: `peak_rss_mib` (the process's `ru_maxrss`), `baseline_rss_mib` (the
same, read after the imports and before the work), `vm_hwm_mib` (the kernel's `VmHWM`, a
cross-check), plus what the command measured.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def _rss_mib() -> float:
    """Peak RSS so far: `ru_maxrss` (KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _hwm_mib() -> float | None:
    """The kernel's own high-water mark of this address space (`VmHWM`), a cross-check
    of `ru_maxrss` that nothing inherited can inflate; None where /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def lower(source: str, target: str, policy: str = "online") -> dict:
    from lowering import lower_to_iree

    text = Path(source).read_text()
    baseline = _rss_mib()
    start = time.perf_counter()
    lowered = lower_to_iree(text, policy=policy)
    seconds = time.perf_counter() - start
    peak = _rss_mib()
    Path(target).write_text(lowered)
    return {
        "seconds": seconds,
        "baseline_rss_mib": baseline,
        "peak_rss_mib": peak,
        "vm_hwm_mib": _hwm_mib(),
    }


def run(vmfb: str, function: str, size: str, calls: str) -> dict:
    import numpy as np

    from autotune_runtime import load

    x = np.ones(int(size), np.float32)
    baseline = _rss_mib()
    module = load(vmfb, device="local-sync", cache=False)
    call = module.function(function)
    for _ in range(int(calls)):
        call(x)
    decided = bool(module.decisions())
    peak = _rss_mib()
    module.close()
    return {
        "baseline_rss_mib": baseline,
        "peak_rss_mib": peak,
        "vm_hwm_mib": _hwm_mib(),
        "decided": decided,
    }


def time_calls(vmfb: str, function: str, size: str, calls: str, mode: str) -> dict:
    import gc
    import statistics

    import iree.runtime as rt
    import numpy as np

    from autotune_runtime import load

    x = np.arange(int(size), dtype=np.float32)
    module = load(vmfb, device="local-sync", cache=False)
    tuning_calls = 0
    if mode == "committed":
        call = module.function(function)
        while module.groups and not module.decisions():
            call(x)
            tuning_calls += 1
    raw = module.context.modules[module.module.name][function]
    arg = rt.asdevicearray(module.config.device, x)
    clock = time.perf_counter_ns
    times = []
    gc.collect()
    gc.disable()
    for _ in range(int(calls)):
        start = clock()
        raw(arg)
        times.append(clock() - start)
    gc.enable()
    stats = module.stats()
    module.close()
    return {
        "median_ns": statistics.median(times),
        "sum_ns": sum(times),
        "tuning_calls": tuning_calls,
        "decision": stats[0]["decision"] if stats else None,
        "explored_calls": stats[0]["explored_calls"] if stats else 0,
        "explored_medians_ns": {v["variant"]: v["median_ns"] for v in stats[0]["variants"]}
        if stats
        else {},
        "times_ns": times,
    }


def main(argv: list[str]) -> int:
    commands = {"lower": lower, "run": run, "time": time_calls}
    if not argv or argv[0] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(commands[argv[0]](*argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
