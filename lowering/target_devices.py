"""One module for several targets (`--target llvm-cpu,vulkan`): iree-compile builds every
executable for each target's device, and the module runs on the first of them that the
runtime's device can run (iree-compile's `--iree-hal-target-device=local,vulkan`, a
`#hal.device.select` of the devices in that order).

Checked with iree-compile 3.13: such a module loads and runs under `iree-run-module
--device=local-task` and under `--device=vulkan`. A repeated `--iree-hal-target-device`
makes a module of two devices instead, which needs both at once ("HAL device `__device_0`
not found or unavailable" under one)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from autotune_contracts.errors import DiagnosticError

DEVICE_FLAG = "--iree-hal-target-device="


def split_targets(target: str) -> list[str]:
    """The targets of a `--target` value: `llvm-cpu,vulkan` is two, `cuda` one."""
    return target.split(",")


def joined_device_flags(flag_lists: Sequence[Sequence[str]]) -> list[str]:
    """The flags building one module for every target whose own flags are listed: one
    `--iree-hal-target-device` naming their devices in order, then the other flags."""
    devices: list[str] = []
    others: list[str] = []
    for flags in flag_lists:
        for flag in flags:
            if flag.startswith(DEVICE_FLAG):
                devices.append(flag.removeprefix(DEVICE_FLAG))
            else:
                others.append(flag)
    return [DEVICE_FLAG + ",".join(devices), *others]


def paired_archs(targets: list[str], arch: str | None) -> list[str | None]:
    """The architecture of each target: `--arch` lists one per target (`host,ampere`), or
    none is given (each target's default). A list of another length is refused."""
    if arch is None:
        return [None] * len(targets)
    archs = arch.split(",")
    if len(archs) != len(targets):
        raise DiagnosticError(
            f"--arch {arch!r} names {len(archs)} architecture(s) for {len(targets)} targets "
            f"({','.join(targets)}); give one per target, in the same order, or none"
        )
    return list(archs)


class TargetChoices:
    """What `--target` accepts: one of `targets`, or several, each once, joined by commas
    (argparse lists `targets` in its usage and refuses anything else)."""

    def __init__(self, targets: Sequence[str]):
        self.targets = tuple(targets)

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, str):
            return False
        parts = split_targets(value)
        return len(set(parts)) == len(parts) and all(p in self.targets for p in parts)

    def __iter__(self) -> Iterator[str]:
        return iter(self.targets)
