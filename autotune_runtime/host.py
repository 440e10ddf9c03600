"""The `autotune` host module: the Python side of the imports a lowered module calls."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import iree.runtime as rt
import numpy as np

from autotune_contracts import interface
from autotune_runtime.compare import warm_up
from autotune_runtime.devices import read_back
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.run_queue import Reading, StampedClock
from autotune_runtime.tuner import Tuner


def _reflected(module: rt.VmModule, key: str) -> dict[str, str]:
    """Exported function name -> its reflection value for `key`, for functions that have
    one (the lowering's metadata and entry points are found so, whatever their names)."""
    found = {}
    for name in module.function_names:
        if name.startswith("__autotune"):
            value = module.lookup_function(name).reflection.get(key)
            if value is not None:
                found[name] = value
    return found


def read_groups(module: rt.VmModule) -> dict[int, GroupInfo]:
    """The groups a compiled module declares, from its metadata function."""
    metadata = _reflected(module, interface.METADATA_KEY)
    if not metadata:
        return {}
    entries = json.loads(next(iter(metadata.values())))
    return {g.gid: g for g in map(GroupInfo.from_metadata, entries)}


def entry_point(module: rt.VmModule, role: str) -> str | None:
    """The name of the module's tuning entry point of `role` (`interface.TUNE_ENTRY` or
    `interface.INIT_ENTRY`), if it has one."""
    return next(
        (name for name, value in _reflected(module, interface.ENTRY_KEY).items() if value == role),
        None,
    )


def create_host_module(
    instance: rt.VmInstance,
    tuner: Tuner,
    device: rt.HalDevice,
    clock: Callable[[], int] = time.perf_counter_ns,
    threads: Callable[[], Reading] | None = None,
) -> rt.VmModule:
    """A VM module named `autotune` whose exports forward to `tuner`. When the module
    has groups, the host side of a validation (reading a result, comparing it) runs once
    here on a tiny buffer, so that its first-use costs stay out of the first calls.
    `clock` and `threads` (the threads' run and wait times, `run_queue.ThreadClocks`) are
    injectable: each timed run is told how long other processes held its threads up."""
    stamped = StampedClock(clock, threads)

    def key(args: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(int(a) for a in args)

    def host_array(ref) -> np.ndarray:
        return read_back(device, ref.deref(rt.HalBufferView), copy=False)

    def now_ns(_self) -> int:
        return stamped.now()

    # One handler per import kind: the workload's values come last (`*workload`), so the
    # same handler serves every arity (`select_w0`, `select_w1`, ...).
    def select(_self, gid, *workload):
        variant, committed, validate = tuner.select(int(gid), key(workload))
        return variant, int(committed), int(validate)

    def record(_self, gid, variant, elapsed_ns, *workload):
        elapsed = int(elapsed_ns)
        tuner.record(int(gid), int(variant), elapsed, key(workload), stamped.waited(elapsed))

    def decide(_self, gid, *workload):
        return tuner.decide(int(gid), key(workload))

    def decided(_self, gid, *workload):
        return tuner.decided(int(gid), key(workload))

    def check(_self, gid, variant, index, *rest):
        *workload, view = rest
        if tuner.wants_output(int(gid), key(workload), int(variant), int(index)):
            tuner.check(int(gid), key(workload), int(variant), int(index), host_array(view))

    def compare(_self, gid, variant, index, *rest):
        *workload, got, want = rest
        tuner.compare(
            int(gid), key(workload), int(variant), int(index), host_array(got), host_array(want)
        )

    if tuner.groups:
        warm_up()
        read_back(device, rt.asdevicearray(device, np.zeros(2, np.float32)))

    class _State:
        def __init__(self, iface):
            self.iface = iface

    iface = rt.PyModuleInterface(interface.HOST_MODULE, _State)
    handlers = {
        "select": select,
        "record": record,
        "decide": decide,
        "decided": decided,
        "check": check,
        "compare": compare,
    }
    for signature in interface.all_imports():
        if signature.name == "now_ns":
            fn = now_ns
        else:
            fn = handlers[signature.name.rsplit("_w", 1)[0]]
        iface.export(signature.name, signature.calling_convention, fn)
    return iface.create()
