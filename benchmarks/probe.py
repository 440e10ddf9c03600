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
- `pair FIRST.vmfb SECOND.vmfb FUNCTION SIZE CALLS`: `time ... fresh` of both modules in
  one process, side by side: both loaded, then each call made on FIRST and SECOND in turn
  (FIRST first on even calls, SECOND on odd ones), so that a slow spell of the machine
  falls on both. Reports `time`'s fields for each, under `first` and `second`.

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
    import numpy as np

    module, arg = _loaded(vmfb, size)
    tuning_calls = 0
    if mode == "committed":
        call = module.function(function)
        x = np.arange(int(size), dtype=np.float32)
        while module.groups and not module.decisions():
            call(x)
            tuning_calls += 1
    times = _timed({"only": module}, {"only": arg}, function, int(calls))["only"]
    return _report(module, times) | {"tuning_calls": tuning_calls}


def time_pair(first: str, second: str, function: str, size: str, calls: str) -> dict:
    modules, args = {}, {}
    for name, vmfb in (("first", first), ("second", second)):
        modules[name], args[name] = _loaded(vmfb, size)
    times = _timed(modules, args, function, int(calls))
    return {name: _report(module, times[name]) for name, module in modules.items()}


def _loaded(vmfb: str, size: str):
    """A module loaded for timing (local-sync, no tuning cache) and its input on the
    device."""
    import iree.runtime as rt
    import numpy as np

    from autotune_runtime import load

    module = load(vmfb, device="local-sync", cache=False)
    x = np.arange(int(size), dtype=np.float32)
    return module, rt.asdevicearray(module.config.device, x)


def _timed(modules: dict, args: dict, function: str, calls: int) -> dict[str, list[int]]:
    """Every call's nanoseconds, per module: `calls` calls of the VM function of each,
    made in turn (the order rotating call by call)."""
    import gc

    raws = {name: m.context.modules[m.module.name][function] for name, m in modules.items()}
    names = list(modules)
    clock = time.perf_counter_ns
    times: dict[str, list[int]] = {name: [] for name in names}
    gc.collect()
    gc.disable()
    for i in range(calls):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            start = clock()
            raws[name](args[name])
            times[name].append(clock() - start)
    gc.enable()
    return times


def _report(module, times: list[int]) -> dict:
    import statistics

    stats = module.stats()
    module.close()
    return {
        "median_ns": statistics.median(times),
        "sum_ns": sum(times),
        "decision": stats[0]["decision"] if stats else None,
        "explored_calls": stats[0]["explored_calls"] if stats else 0,
        "explored_medians_ns": {v["variant"]: v["median_ns"] for v in stats[0]["variants"]}
        if stats
        else {},
        "times_ns": times,
    }


def main(argv: list[str]) -> int:
    commands = {"lower": lower, "run": run, "time": time_calls, "pair": time_pair}
    if not argv or argv[0] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(commands[argv[0]](*argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
