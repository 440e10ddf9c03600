"""Load a compiled module with the `autotune` host module and call its functions."""

from __future__ import annotations

from pathlib import Path

import iree.runtime as rt
import numpy as np

from autotune_runtime import interface
from autotune_runtime.cache import TuningCache
from autotune_runtime.fingerprint import DeviceFingerprint, device_fingerprint
from autotune_runtime.host import create_host_module, entry_point, read_groups
from autotune_runtime.stats import StopRule
from autotune_runtime.tuner import Tuner

CacheArg = TuningCache | str | Path | bool | None


def open_cache(cache: CacheArg) -> TuningCache | None:
    """`None`/`True`: the default cache file; a path: that file; `False`: no cache."""
    if cache is False:
        return None
    if isinstance(cache, TuningCache):
        return cache
    return TuningCache(None if cache in (None, True) else cache)  # type: ignore[arg-type]


class LoadedModule:
    """A compiled module in a context with the host module. Its functions are attributes
    (numpy in, numpy out); `decisions()` and `stats()` show what tuning measured and chose."""

    def __init__(
        self,
        vmfb: bytes | str | Path,
        device: str = "local-task",
        cache: CacheArg = None,
        fingerprint: DeviceFingerprint | None = None,
        tuner_class: type[Tuner] = Tuner,
        **rule_options,
    ):
        self.device = device
        self.config = rt.Config(device)
        if isinstance(vmfb, str | Path):
            self.module = rt.VmModule.mmap(self.config.vm_instance, str(vmfb))
        else:
            self.module = rt.VmModule.copy_buffer(self.config.vm_instance, vmfb)
        self.groups = read_groups(self.module)
        self.cache = open_cache(cache) if self.groups else None
        self.fingerprint = fingerprint or device_fingerprint(device)
        unknown = set(rule_options) - {"warmup", "min_samples", "max_samples", "confidence"}
        if unknown:
            raise TypeError(f"unknown load option(s): {', '.join(sorted(unknown))}")
        rule = StopRule().with_overrides(rule_options)
        self.tuner = tuner_class(self.groups, rule, self.cache, self.fingerprint)
        self.host = create_host_module(self.config.vm_instance, self.tuner, self.config.device)
        self.context = rt.SystemContext(vm_modules=[self.host, self.module], config=self.config)
        self._functions = self.context.modules[self.module.name]
        self.tune_function = entry_point(self.module, interface.TUNE_ENTRY)
        init = entry_point(self.module, interface.INIT_ENTRY)
        if init is not None:
            self._invoke(self._functions[init], ())  # `init` groups

    @property
    def function_names(self) -> list[str]:
        return list(self.module.function_names)

    def function(self, name: str):
        """A callable for an exported function (numpy arrays and scalars in and out)."""
        if name not in self.module.function_names:
            raise KeyError(
                f"no function '{name}' in the module; it has: "
                + ", ".join(n for n in self.module.function_names if not n.startswith("__"))
            )
        function = self._functions[name]

        def call(*args):
            return _to_numpy(self._invoke(function, args))

        return call

    def _invoke(self, function, args):
        """Call; when a variant under exploration fails, exclude it and call again."""
        while True:
            try:
                return function(*args)
            except RuntimeError as err:
                if self.tuner.fail_in_flight(str(err).strip().splitlines()[0]) is None:
                    raise

    def __getattr__(self, name: str):
        if name.startswith("_") and not name.startswith("__autotune"):
            raise AttributeError(name)
        try:
            return self.function(name)
        except KeyError as err:
            raise AttributeError(str(err)) from None

    def tune(self) -> None:
        """Run the module's `__autotune` entry point (groups with the explicit policy)."""
        if self.tune_function is None:
            raise KeyError("the module has no __autotune entry point (no explicit groups)")
        self._invoke(self._functions[self.tune_function], ())

    def decisions(self) -> dict[tuple[str, tuple[int, ...]], str]:
        """Committed choices: (group, workload key) -> variant name."""
        out = {}
        for (gid, key), state in self.tuner.states.items():
            if state.decision is not None:
                group = self.groups[gid]
                out[(group.qualified_name, key)] = group.variants[state.decision]
        return out

    def stats(self) -> list[dict]:
        """Per (group, workload key): per-variant statistics, decision, exploration calls."""
        out = []
        for (gid, key), state in self.tuner.states.items():
            group = self.groups[gid]
            out.append(
                {
                    "group": group.qualified_name,
                    "workload": list(key),
                    "policy": group.policy,
                    "decision": None if state.decision is None else group.variants[state.decision],
                    "from_cache": state.from_cache,
                    "explored_calls": state.explored_calls,
                    "variants": [
                        {"variant": name, **{k: v for k, v in s.items() if k != "variant"}}
                        for name, s in zip(group.variants, state.summaries(), strict=True)
                    ],
                }
            )
        return out

    def close(self) -> None:
        """Release the context and modules (and the cache connection)."""
        self._functions = None
        self.context = None
        self.host = None
        self.module = None
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    def __enter__(self) -> LoadedModule:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _to_numpy(result):
    if isinstance(result, tuple):
        return tuple(_to_numpy(r) for r in result)
    if hasattr(result, "to_host"):
        return np.asarray(result.to_host())
    return result


def load(
    vmfb: bytes | str | Path,
    device: str = "local-task",
    cache: CacheArg = None,
    **options,
) -> LoadedModule:
    """Load a compiled module with tuning active.

    `cache`: None for the default tuning cache (`$IREE_AUTOTUNE_CACHE`, else the XDG cache
    dir), a path, a `TuningCache`, or False for none. `options`: stop-rule parameters
    (`warmup`, `min_samples`, `max_samples`, `confidence`), `fingerprint` (a
    `DeviceFingerprint` to use instead of the device's own) and `tuner_class`.
    """
    return LoadedModule(vmfb, device, cache, **options)
