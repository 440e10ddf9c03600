"""Device fingerprint: what makes tuning results of one device valid on another."""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict, dataclass
from pathlib import Path

import iree.runtime as rt
from iree.runtime.version import VERSION as RUNTIME_VERSION


@dataclass(frozen=True)
class DeviceFingerprint:
    """The parts of the device that a tuning decision depends on.

    `driver` (local-task, local-sync, cuda, ...), `name` (the driver's device name, e.g.
    the GPU model), `arch` (CUDA: the driver's device description, which carries the
    compute capability; CPU: the processor model) and `runtime_version` (IREE runtime).
    Left out on purpose: the device ordinal and UUID (identical devices share decisions)
    and the host name.
    """

    driver: str
    name: str
    arch: str
    runtime_version: str

    def digest(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def describe(self) -> str:
        return f"{self.driver}:{self.name} ({self.arch}, IREE runtime {self.runtime_version})"


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def device_fingerprint(device: str) -> DeviceFingerprint:
    """Fingerprint of the first device of a driver URI such as `local-task` or `cuda`."""
    driver_name = device.split("://", 1)[0].split(":", 1)[0]
    name, arch = "default", _cpu_model()
    if not driver_name.startswith("local"):
        driver = rt.get_driver(driver_name)
        devices = driver.query_available_devices()
        if devices:
            name = str(devices[0].get("name", "default"))
            info = driver.dump_device_info(devices[0]["device_id"]) or ""
            arch = hashlib.sha256(info.encode()).hexdigest()[:16] if info else name
    return DeviceFingerprint(driver_name, name, arch, RUNTIME_VERSION)
