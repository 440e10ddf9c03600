"""Run compiled modules with tuning: the `autotune` host module, the stop rule, the cache.

`load(vmfb, device="local-task", cache=None, **options)` returns a module whose functions
are attributes; see `session.load`. The names below are imported on first use.
"""

from typing import TYPE_CHECKING

from autotune_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from autotune_contracts.stop_rule import StopRule
    from autotune_runtime.cache import CacheKey, CacheWarning, TuningCache
    from autotune_runtime.fingerprint import DeviceFingerprint, device_fingerprint
    from autotune_runtime.session import LoadedModule, load

__getattr__ = lazy_exports(
    globals(),
    {
        "CacheKey": "autotune_runtime.cache",
        "CacheWarning": "autotune_runtime.cache",
        "TuningCache": "autotune_runtime.cache",
        "DeviceFingerprint": "autotune_runtime.fingerprint",
        "device_fingerprint": "autotune_runtime.fingerprint",
        "LoadedModule": "autotune_runtime.session",
        "load": "autotune_runtime.session",
        "StopRule": "autotune_contracts.stop_rule",
    },
)

__all__ = [
    "CacheKey",
    "CacheWarning",
    "DeviceFingerprint",
    "LoadedModule",
    "StopRule",
    "TuningCache",
    "device_fingerprint",
    "load",
]
