"""Load a compiled module with the `autotune` host module and call its functions."""

from __future__ import annotations

from pathlib import Path

import iree.runtime as rt
import numpy as np

from autotune_runtime import interface
from autotune_runtime.host import create_host_module, read_groups
from autotune_runtime.tuner import Tuner


class LoadedModule:
    """A compiled module in a context with the host module; functions are attributes
    (numpy in, numpy out)."""

    def __init__(
        self,
        vmfb: bytes | str | Path,
        device: str = "local-sync",
        tuner_class: type[Tuner] = Tuner,
        **tuner_options,
    ):
        self.config = rt.Config(device)
        if isinstance(vmfb, str | Path):
            self.module = rt.VmModule.mmap(self.config.vm_instance, str(vmfb))
        else:
            self.module = rt.VmModule.copy_buffer(self.config.vm_instance, vmfb)
        self.groups = read_groups(self.module)
        self.tuner = tuner_class(self.groups, **tuner_options)
        self.host = create_host_module(self.config.vm_instance, self.tuner)
        self.context = rt.SystemContext(vm_modules=[self.host, self.module], config=self.config)
        self._functions = self.context.modules[self.module.name]

    def __getattr__(self, name: str):
        if name.startswith("_") and not name.startswith("__autotune"):
            raise AttributeError(name)
        function = self._functions[name]

        def call(*args):
            result = function(*args)
            return _to_numpy(result)

        return call

    def tune(self) -> None:
        """Run the module's `__autotune` entry point (explicit policy)."""
        self._functions[interface.TUNE_FUNCTION]()

    def decisions(self) -> dict[tuple[str, tuple[int, ...]], str]:
        """Committed choices: (group, workload key) -> variant name."""
        out = {}
        for (gid, key), state in self.tuner.states.items():
            if state.decision is not None:
                group = self.groups[gid]
                out[(group.qualified_name, key)] = group.variants[state.decision]
        return out

    def close(self) -> None:
        """Release the context and modules."""
        self._functions = None
        self.context = None
        self.host = None
        self.module = None


def _to_numpy(result):
    if isinstance(result, tuple):
        return tuple(_to_numpy(r) for r in result)
    if hasattr(result, "to_host"):
        return np.asarray(result.to_host())
    return result


def load(vmfb: bytes | str | Path, device: str = "local-sync", **options) -> LoadedModule:
    """Load a compiled module with tuning active."""
    return LoadedModule(vmfb, device, **options)
