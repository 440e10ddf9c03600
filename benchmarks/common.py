"""What the cases share: the machine's description, compiling and loading, timing loops.

Every case runs on the CPU: modules are compiled for `llvm-cpu` (the host CPU) and loaded on
`local-sync` (one thread, so that 2-core machines time kernels without a task pool
competing with the timing loop), with no tuning cache (`cache=False`): every run tunes from
scratch. Timings are `time.perf_counter_ns` around one call, with the garbage collector off.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"
PLOTS = DOCS / "benchmarks"
DEVICE = "local-sync"


@dataclass
class Settings:
    """Run-wide options: `quick` shrinks every case (smoke runs), `scratch` is a temporary
    folder for compiled modules and cache exports, `deadline` bounds what B1's largest
    compile may take, `models` (None: each case's own list) the models the cases that tune
    whole models (B7, B13, B14, B15) take."""

    quick: bool
    scratch: Path
    deadline: float = float("inf")  # time.monotonic() by which the run should be done
    models: frozenset[str] | None = None
    artifacts: dict = field(default_factory=dict)

    def chosen(self, names):
        """Of a case's models (`names`, in its order), those the run takes."""
        return [n for n in names if self.models is None or n in self.models]

    def memo(self, name: str, make: Callable[[], object]):
        """`make()` once per run: cases share compiled modules and subprocess results."""
        if name not in self.artifacts:
            self.artifacts[name] = make()
        return self.artifacts[name]


@dataclass
class CaseResult:
    """One case: its headline ratio, what the ratio means, and everything measured."""

    id: str
    title: str
    ratio: float
    meaning: str
    detail: dict
    extra: dict = field(default_factory=dict)
    plot: str | None = None
    seconds: float | None = None  # the case's wall time in the run

    def as_json(self) -> dict:
        took = {} if self.seconds is None else {"seconds": self.seconds}
        return {
            "id": self.id,
            "ratio": round(self.ratio, 4),
            **took,
            **self.extra,
            "detail": self.detail,
        }


def machine_info() -> dict:
    """The machine the numbers were measured on."""
    import iree.compiler
    import iree.runtime
    import xdsl

    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        memory = round(int(first.split()[1]) / 2**20, 1)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "iree_compiler": _version(iree.compiler),
        "iree_runtime": _version(iree.runtime),
        "xdsl": _version(xdsl),
        "numpy": np.__version__,
        "target": "llvm-cpu (host CPU)",
        "device": DEVICE,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def _version(module) -> str:
    from importlib.metadata import PackageNotFoundError, version

    names = {
        "iree.compiler": "iree-base-compiler",
        "iree.runtime": "iree-base-runtime",
        "xdsl": "xdsl",
    }
    try:
        return version(names[module.__name__])
    except (KeyError, PackageNotFoundError):
        return getattr(module, "__version__", "unknown")


# --- compiling and loading ------------------------------------------------------------------


def compile_module(text: str, policy: str = "online", cache: Path | None = None) -> bytes:
    """Lower and compile for llvm-cpu (the project's `lowering.compile`)."""
    from lowering import compile

    return compile(text, target="llvm-cpu", policy=policy, cache=cache)


def freeze(settings: Settings, name: str, decisions: list[dict]) -> Path:
    """A tuning-cache export holding `decisions` (`{"group", "container", "workload",
    "variant"}`), for `compile(..., policy="static", cache=...)`."""
    path = settings.scratch / f"{name}.json"
    path.write_text(json.dumps({"decisions": decisions}))
    return path


def load_module(vmfb: bytes, **options):
    """Load on local-sync with no tuning cache."""
    from autotune_runtime import load

    return load(vmfb, device=DEVICE, cache=False, **options)


def raw_function(module, name: str):
    """The VM function itself: device arrays in, device arrays out, no numpy conversion
    (what the per-call overhead cases time)."""
    return module.context.modules[module.module.name][name]


def device_array(module, array: np.ndarray):
    """`array` uploaded once to `module`'s device, to be passed to `raw_function`s."""
    import iree.runtime as rt

    return rt.asdevicearray(module.config.device, array)


def tune_online(module, call: Callable[[], object], limit: int = 10_000) -> tuple[int, float]:
    """Call until every group called has committed; returns (calls, seconds)."""
    calls = 0
    start = time.perf_counter()
    while calls < limit:
        call()
        calls += 1
        stats = module.stats()
        if stats and all(s["decision"] is not None for s in stats):
            return calls, time.perf_counter() - start
    raise RuntimeError(f"no decision after {limit} calls")


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Time without the cyclic collector, starting from a collected heap."""
    from lowering.autotune_to_iree import cyclic_gc_paused

    gc.collect()
    with cyclic_gc_paused():
        yield


def interleaved(
    calls: list[Callable[[], object]],
    rounds: int,
    warmup: int = 10,
    prepare: list[Callable[[], object]] | None = None,
) -> list[list]:
    """Time each callable `rounds` times, interleaved (one call of each per round, the order
    rotating every round so that none always follows the same neighbour); returns the
    nanoseconds of every call, per callable. `prepare[i]`, when given, runs untimed before
    each call of `calls[i]`."""
    times: list[list[int]] = [[] for _ in calls]
    before = prepare or [_nothing] * len(calls)
    order = list(range(len(calls)))
    clock = time.perf_counter_ns
    with no_gc():
        for _ in range(warmup):
            for i, call in enumerate(calls):
                before[i]()
                call()
        for r in range(rounds):
            shift = r % len(order)
            for i in order[shift:] + order[:shift]:
                call = calls[i]
                before[i]()
                start = clock()
                call()
                times[i].append(clock() - start)
    return times


def side_by_side(calls: list[Callable[[int], object]], stream: list[int]) -> list[list[int]]:
    """Nanoseconds of each of `calls` on each element of `stream` (a workload: a size),
    every element called on all of them before the next, the order reversed every other
    element; per callable, in the order of the stream."""
    times: list[list[int]] = [[] for _ in calls]
    order = list(range(len(calls)))
    clock = time.perf_counter_ns
    with no_gc():
        for position, n in enumerate(stream):
            for i in order if position % 2 else order[::-1]:
                call = calls[i]
                start = clock()
                call(n)
                times[i].append(clock() - start)
    return times


def _nothing() -> None:
    return None


def median(values) -> float:
    return float(statistics.median(values))


def geomean(values) -> float:
    values = list(values)
    return float(np.exp(np.mean(np.log(values)))) if values else float("nan")


def probe(*args: str) -> dict:
    """`python -m benchmarks.probe ARGS` in a fresh process; its JSON report."""
    import subprocess
    import sys

    # Linux carries a process's peak RSS across fork and exec (`ru_maxrss` of a child
    # starts at its parent's), so the probe is started by a small shell that forks it:
    # its count then starts from the shell's few MiB, not from this process's.
    command = [sys.executable, "-m", "benchmarks.probe", *args]
    done = subprocess.run(
        ["/bin/sh", "-c", '"$0" "$@"; exit $?', *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"probe {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def time_in_process(
    settings: Settings, name: str, vmfb: bytes, function: str, size: int, calls: int, mode: str
) -> dict:
    """`probe time`: CALLS timed calls of `function` in a fresh process (see probe.py)."""
    path = settings.scratch / f"{name}.vmfb"
    if not path.exists():
        path.write_bytes(vmfb)
    return probe("time", str(path), function, str(size), str(calls), mode)
