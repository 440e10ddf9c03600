"""Load a compiled module with the `autotune` host module and call its functions."""

from __future__ import annotations

import functools
import re
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

import iree.runtime as rt
import numpy as np

from autotune_contracts import interface
from autotune_contracts.policy import Policy
from autotune_contracts.stop_rule import RULE_OPTIONS, StopRule
from autotune_contracts.workloads import Key
from autotune_runtime.cache import ENV_VAR, TuningCache
from autotune_runtime.devices import CACHING_ALLOCATOR, open_device, read_back
from autotune_runtime.fingerprint import DeviceFingerprint, device_fingerprint
from autotune_runtime.host import create_host_module, entry_point, read_groups
from autotune_runtime.interrupts import raised_in_host
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.tuner import Tuner, TuningWarning
from autotune_runtime.values import ValueType, check_tensor_argument, one_line, signature

CacheArg = TuningCache | str | Path | bool | None


def open_cache(cache: CacheArg) -> TuningCache | None:
    """`None`/`True`: the default cache file; a path: that file; `False`: no cache."""
    if cache is False:
        return None
    if isinstance(cache, TuningCache):
        return cache
    return TuningCache(None if cache in (None, True) else cache)  # type: ignore[arg-type]


def cache_line(cache: TuningCache | None, has_groups: bool) -> str:
    """What `load(..., verbose=True)` says of the tuning cache a module uses."""
    if cache is None:
        return "iree-autotune: no tuning cache (" + (
            "cache=False)" if has_groups else "the module has no groups)"
        )
    if cache.owned:
        return (
            f"iree-autotune: tuning cache {cache.path} (the default: shared by every module "
            f"and process loaded without cache=; ${ENV_VAR} or cache=PATH chooses another, "
            "cache=False none)"
        )
    return f"iree-autotune: tuning cache {cache.path}"


class LoadedModule:
    """A compiled module in a context with the host module. Its functions are attributes
    (numpy in, numpy out); `decisions()` and `stats()` show what tuning measured and chose,
    `settled()` whether the online groups reached have all decided; `cache_path` is the
    tuning cache file (None without one)."""

    def __init__(
        self,
        vmfb: bytes | str | Path,
        device: str = "local-task",
        cache: CacheArg = None,
        fingerprint: DeviceFingerprint | None = None,
        tuner_class: type[Tuner] = Tuner,
        warm_start: bool = True,
        allocator: str | None = CACHING_ALLOCATOR,
        verbose: bool = False,
        **rule_options,
    ):
        self.device = device
        self.config = rt.Config(device=open_device(device, allocator))
        self.module = vm_module(self.config.vm_instance, vmfb)
        self.groups = read_groups(self.module)
        self.cache = open_cache(cache) if self.groups else None
        self.cache_path = None if self.cache is None else self.cache.path
        if verbose:
            sys.stderr.write(cache_line(self.cache, bool(self.groups)) + "\n")
        self.fingerprint = fingerprint or device_fingerprint(device)
        unknown = set(rule_options) - set(RULE_OPTIONS)
        if unknown:
            raise TypeError(f"unknown load option(s): {', '.join(sorted(unknown))}")
        rule = StopRule().with_overrides(rule_options)
        self.tuner = tuner_class(
            self.groups, rule, self.cache, self.fingerprint, warm_start=warm_start
        )
        self.host = create_host_module(self.config.vm_instance, self.tuner, self.config.device)
        self.context = rt.SystemContext(vm_modules=[self.host, self.module], config=self.config)
        self._functions = self.context.modules[self.module.name]
        self.tune_function = entry_point(self.module, interface.TUNE_ENTRY)
        init = entry_point(self.module, interface.INIT_ENTRY)
        try:
            if init is not None:
                self._invoke(self._functions[init], ())  # `init` groups
            if self.tune_function is not None and self.cache is not None:
                self._restore_explicit()
        except BaseException:  # an interrupt, a failing call: the cache file is let go
            self.close()
            raise

    def _restore_explicit(self) -> None:
        """Store the tuning cache's decisions of `explicit` groups: `__autotune` runs with
        the host answering from the cache only (nothing is measured; a key the cache does
        not hold keeps running the reference)."""
        self.tuner.restoring = True
        try:
            self._invoke(self._functions[self.tune_function], ())
        finally:
            self.tuner.restoring = False

    @property
    def function_names(self) -> list[str]:
        return list(self.module.function_names)

    def function(self, name: str):
        """A callable for an exported function (numpy arrays and scalars in and out).

        Scalar arguments are converted to the function's parameter types (a Python `2`
        for an `f32` is 2.0); an argument that does not fit (2.5 for an `i32`, a wrong
        count) is a `TypeError`. Results are numpy arrays that own their data: they stay
        valid after `close()`."""
        self._check_open()
        if name not in self.module.function_names:
            raise KeyError(
                f"no function '{name}' in the module; it has: "
                + ", ".join(n for n in self.module.function_names if not n.startswith("__"))
            )
        function = self._functions[name]
        if name == self.tune_function:
            return self.tune
        for group in self.groups.values():
            if name == group.setter:
                return functools.partial(self._set_variant, group)
            if name == group.getter:
                return functools.partial(self._get_variant, group)
        kinds = parameter_kinds(self.module.lookup_function(name))
        types = signature(self.module, name)

        def call(*args):
            self._check_open()
            converted = convert_arguments(name, kinds, args, types and types[0])
            return _to_numpy(self._invoke(function, converted), self.config.device)

        return call

    def _check_open(self) -> None:
        if self.context is None:
            raise RuntimeError("the module is closed; load it again to call its functions")

    def _invoke(self, function, args):
        """Call; when a variant under exploration fails, exclude it and call again. An
        interrupt that ended a host callback (where Ctrl-C lands while the VM runs) is
        raised as itself: it is no variant's failure, and the run it ended is dropped."""
        while True:
            try:
                return function(*args)
            except RuntimeError as err:
                interrupt = raised_in_host(err)
                if interrupt is not None:
                    self.tuner.in_flight = None
                    raise interrupt from None
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
        """Run the module's `__autotune` entry point (groups with the explicit policy).

        Every key of the explicit groups gets its decision: the one committed earlier or
        found in the tuning cache, else one measured now. Choices set by hand are
        replaced. A dynamic group without `workloads` has no key to tune: a
        `TuningWarning` says so."""
        self._check_open()
        if self.tune_function is None:
            raise KeyError("the module has no __autotune entry point (no explicit groups)")
        for group in self.groups.values():
            if group.policy == Policy.EXPLICIT and not group.keys and group.workload_arity > 0:
                warnings.warn(
                    f"group {group.qualified_name} has dynamic shapes and no `workloads`: "
                    "0 workload keys were tuned and its calls run the reference variant "
                    f"{group.variants[group.reference]}; give the sizes to tune for on the "
                    f"group (`workloads = [[...], ...]`, {group.workload_arity} value(s) "
                    "each, docs/dialect.md)",
                    TuningWarning,
                    stacklevel=2,
                )
        self.tuner.manual = {
            (gid, key): variant
            for (gid, key), variant in self.tuner.manual.items()
            if self.groups[gid].policy != Policy.EXPLICIT
        }
        self._invoke(self._functions[self.tune_function], ())

    def _set_variant(self, group: GroupInfo, variant: int | str) -> None:
        """An explicit group's setter: every key of the group runs `variant` (an index
        or a name) until `tune()` stores its decisions."""
        self._check_open()
        index = group.variant_index(variant)
        if not group.keys:
            raise ValueError(
                f"group {group.qualified_name} has no workload keys to set a variant for "
                "(dynamic shapes and no `workloads`): its calls run the reference variant "
                f"{group.variants[group.reference]}"
            )
        assert group.setter is not None
        self._invoke(self._functions[group.setter], (index,))
        self.tuner.set_choice(group.gid, index)

    def _get_variant(
        self, group: GroupInfo, workload: Iterable[int] | int | None = None
    ) -> int | dict[Key, int]:
        """An explicit group's getter: the variant index its calls run, -1 for the
        reference before tuning. A group tuned at several workload keys gives a dict
        key -> index, unless `workload` names one key."""
        self._check_open()
        if workload is not None:
            key = tuple(int(w) for w in ([workload] if isinstance(workload, int) else workload))
            if key not in group.keys:
                known = ", ".join(str(list(k)) for k in group.keys) or "none"
                raise ValueError(
                    f"group {group.qualified_name} has no workload {list(key)} "
                    f"(its workloads: {known})"
                )
            return self.tuner.choice(group.gid, key)[0]
        if len(group.keys) <= 1:
            assert group.getter is not None
            return int(self._invoke(self._functions[group.getter], ()))
        return {key: self.tuner.choice(group.gid, key)[0] for key in group.keys}

    def decisions(self) -> dict[tuple[str, tuple[int, ...]], str]:
        """What each (group, workload key) runs: committed choices (tuned or from the
        tuning cache) and choices set by hand -> variant name."""
        out = {}
        for (gid, key), state in self.tuner.states.items():
            if state.decision is not None:
                group = self.groups[gid]
                out[(group.qualified_name, key)] = group.variants[state.decision]
        for (gid, key), variant in self.tuner.manual.items():
            group = self.groups[gid]
            out[(group.qualified_name, key)] = group.variants[variant]
        return out

    def settled(self) -> bool:
        """Whether online tuning is done for what the calls so far reached: a call reached
        an online group, and every workload key that an online group has seen has its
        decision. `decisions()` is not empty as soon as one key is decided, while the
        other groups may still explore; loop on `while not module.settled()` instead. A
        module without online groups is settled (`explicit` groups are tuned by `tune()`);
        a group that no call has reached does not count."""
        online = [
            state.decision is not None
            for (gid, _), state in self.tuner.states.items()
            if self.groups[gid].policy == Policy.ONLINE
        ]
        if not online:
            return all(g.policy != Policy.ONLINE for g in self.groups.values())
        return all(online)

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
                    "adopted": state.adopted,
                    "tie": state.tie,
                    "explored_calls": state.explored_calls,
                    "warm_start": None
                    if state.prior is None
                    else {
                        "from": list(state.prior.neighbour),
                        "variant": group.variants[state.prior.winner],
                        "contenders": [group.variants[i] for i in state.prior.contenders],
                        "confirmed": not state.confirmation_failed,
                    },
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
        self.config.device.allocator.trim()  # the buffers its calls left for reuse
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    def __enter__(self) -> LoadedModule:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _to_numpy(result, device: rt.HalDevice):
    """Results as numpy values that own their memory (a device array's host view would
    point into buffers that `close()` releases), read back as the device allows
    (`devices.read_back`)."""
    if isinstance(result, tuple):
        return tuple(_to_numpy(r, device) for r in result)
    if isinstance(result, rt.DeviceArray):
        return read_back(device, result)
    return result


_CCONV = re.compile(r"\(0([^_)]*)_")
_SCALAR_NAMES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}


def parameter_kinds(function: rt.VmFunction) -> str | None:
    """The VM calling convention of a function's parameters (`i` i32, `I` i64, `f` f32,
    `F` f64, `r` ref), read from its description; None if it is not shown."""
    match = _CCONV.search(repr(function))
    if match is None:
        return None
    kinds = match.group(1)
    return "" if kinds == "v" else kinds


def convert_arguments(
    name: str, kinds: str | None, args: tuple, types: list[ValueType] | None = None
) -> tuple:
    """Arguments converted to a function's parameter kinds (`parameter_kinds`); those of
    tensor parameters checked against the declared `types` (`check_tensor_argument`)."""
    if kinds is None:
        return args
    if len(args) != len(kinds):
        raise TypeError(f"{name} takes {len(kinds)} arguments, got {len(args)}")
    out = []
    for index, (kind, arg) in enumerate(zip(kinds, args, strict=True)):
        scalar = _SCALAR_NAMES.get(kind)
        if scalar is None:
            if types is not None and len(types) == len(args):
                check_tensor_argument(name, index, arg, types[index])
            out.append(arg)
            continue
        if isinstance(arg, np.ndarray) and arg.ndim == 0:
            arg = arg.item()
        if not isinstance(arg, int | float | np.integer | np.floating) or isinstance(arg, bool):
            raise TypeError(
                f"argument {index} of {name} is a scalar ({scalar}); got {type(arg).__name__}"
            )
        if kind in "iI" and float(arg) != int(arg):
            raise TypeError(f"argument {index} of {name} is an integer ({scalar}); got {arg}")
        # IREE packs a Python float as a float and an int as an integer (numpy scalars
        # are not packed as values at all), whatever the parameter is: convert first.
        out.append(int(arg) if kind in "iI" else float(arg))
    return tuple(out)


def vm_module(instance: rt.VmInstance, vmfb: bytes | str | Path) -> rt.VmModule:
    """The VM module of a compiled module (its path or its bytes); one that IREE cannot
    read is a `ValueError` that says so (IREE's own names only its FlatBuffer)."""
    try:
        if isinstance(vmfb, str | Path):
            return rt.VmModule.mmap(instance, str(vmfb))
        return rt.VmModule.copy_buffer(instance, vmfb)
    except (ValueError, RuntimeError) as err:
        what = f"{vmfb} is" if isinstance(vmfb, str | Path) else f"the {len(vmfb)} bytes are"
        raise ValueError(f"{what} not a compiled IREE module (.vmfb): {one_line(err)}") from None


def load(
    vmfb: bytes | str | Path,
    device: str = "local-task",
    cache: CacheArg = None,
    **options,
) -> LoadedModule:
    """Load a compiled module with tuning active.

    `cache`: None for the default tuning cache (`$IREE_AUTOTUNE_CACHE`, else the XDG cache
    dir; shared by every module and process that uses it), a path, a `TuningCache`, or
    False for none; the module's `cache_path` is the file used. `verbose`: print which
    cache is used to stderr. `options`: the stop rule's parameters that a load option may
    set (`autotune_contracts.stop_rule.RULE_OPTIONS`: `warmup`, `min_samples`,
    `max_samples`, `confidence`, `early_drop`, `indifference`, `tie_band`, ...),
    `warm_start`
    (False: every new workload key is tuned from scratch), `fingerprint` (a
    `DeviceFingerprint` to use instead of the device's own), `tuner_class` and
    `allocator` (IREE's allocator spec; default `devices.CACHING_ALLOCATOR`, which keeps
    freed result buffers for the next call; None for the device's own allocator alone).
    """
    return LoadedModule(vmfb, device, cache, **options)
