"""Package attributes imported on first use (PEP 562), so that a command line that needs
one part of the project does not pay for importing all of it."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` (its `globals()`) that imports `exports[name]`
    (a module name) the first time `name` is read, and keeps the value."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        package[name] = value
        return value

    return __getattr__
