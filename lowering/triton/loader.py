"""Python objects named on the command line: `module.path:NAME` or `path/to/file.py:NAME`.

A module path resolves from the current directory first, as `python -m module.path` does; a
file is loaded as `python path/to/file.py` runs it, with its own folder first on the import
path. Either way the current `sys.path` is restored afterwards. A name that cannot be found,
or a module that fails to import, is a `TritonImportError` with a one-line message.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from lowering.triton.signature import TritonImportError

_FILE_MODULES: dict[Path, ModuleType] = {}
"""Files already loaded, by resolved path: a kernel and its configs share one module."""


@dataclass(frozen=True)
class Reference:
    """`source:name`, where `source` is a dotted module path or a `.py` file."""

    source: str
    name: str
    text: str  # as given, for messages

    @property
    def is_file(self) -> bool:
        """Whether `source` names a file (ends in `.py` or has a path separator)."""
        return self.source.endswith(".py") or "/" in self.source or os.sep in self.source


def parse_reference(text: str, what: str) -> Reference:
    """`module.path:NAME` or `path/to/file.py:NAME`; `what` names the option in messages."""
    source, colon, name = text.strip().rpartition(":")
    if not colon or not source.strip() or not name.strip().isidentifier():
        raise TritonImportError(
            f"{what} '{text}': expected module.path:NAME or path/to/file.py:NAME"
        )
    return Reference(source.strip(), name.strip(), text)


def locate(ref: Reference) -> None:
    """Check that the module or file exists, without running it."""
    if ref.is_file:
        if not Path(ref.source).is_file():
            raise TritonImportError(f"{ref.text}: no file {ref.source}")
        return
    with _on_path(Path.cwd()):
        try:
            found = importlib.util.find_spec(ref.source)
        except ModuleNotFoundError as err:
            raise TritonImportError(_not_found(ref, err.name or ref.source)) from None
        except Exception as err:  # noqa: BLE001 - a parent package of the user's failed
            raise TritonImportError(f"cannot import {ref.source}: {_describe(err)}") from None
    if found is None:
        raise TritonImportError(_not_found(ref, ref.source))


def load(ref: Reference) -> Any:
    """The object `ref` names (its module is imported, or its file run, first)."""
    module = _load_file(Path(ref.source)) if ref.is_file else _import(ref.source)
    try:
        return getattr(module, ref.name)
    except AttributeError:
        raise TritonImportError(f"{ref.source} has no attribute '{ref.name}'") from None


def _import(name: str) -> ModuleType:
    with _on_path(Path.cwd()):
        try:
            return importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 - the user's module failed to import
            raise TritonImportError(f"cannot import {name}: {_describe(err)}") from None


def _load_file(path: Path) -> ModuleType:
    resolved = path.resolve()
    if resolved in _FILE_MODULES:
        return _FILE_MODULES[resolved]
    name = path.stem if path.stem.isidentifier() else "kernel_file"
    while name in sys.modules:
        name += "_"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise TritonImportError(f"cannot load {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # classes and dataclasses in the file look their module up
    with _on_path(resolved.parent):
        try:
            spec.loader.exec_module(module)
        except Exception as err:  # noqa: BLE001 - the user's file failed to run
            del sys.modules[name]
            raise TritonImportError(f"cannot load {path}: {_describe(err)}") from None
    _FILE_MODULES[resolved] = module
    return module


@contextlib.contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    """`folder` first on `sys.path` for the duration."""
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _not_found(ref: Reference, missing: str) -> str:
    return (
        f"{ref.text}: no module named '{missing}' in the current folder ({Path.cwd()}) or on "
        "the Python path; run from the folder that holds it, or give path/to/file.py:"
        f"{ref.name}"
    )


def _describe(err: BaseException) -> str:
    """One line: the error's type and message, and for a syntax error where it is."""
    if isinstance(err, SyntaxError) and err.filename:
        return f"SyntaxError: {err.msg} ({err.filename}:{err.lineno})"
    message = (str(err).strip().splitlines() or [""])[0]
    return f"{type(err).__name__}: {message}" if message else type(err).__name__
