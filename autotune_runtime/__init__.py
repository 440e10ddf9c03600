"""Run compiled modules with tuning: the `autotune` host module, the stop rule, the cache.

`load(vmfb, device="local-task", cache=None, **options)` returns a module whose functions
are attributes; see `session.load`.
"""

from autotune_runtime.cache import CacheKey, CacheWarning, TuningCache
from autotune_runtime.fingerprint import DeviceFingerprint, device_fingerprint
from autotune_runtime.session import LoadedModule, load
from autotune_runtime.stats import StopRule

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
