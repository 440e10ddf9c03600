"""What the runtime's subcommands share: errors as `DiagnosticError`, warnings as
`warning:` lines, the cache path, loading a module, the console for tables."""

from __future__ import annotations

import argparse
import contextlib
import functools
import sqlite3
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from autotune_contracts.errors import DiagnosticError
from autotune_runtime.cache import CacheAccessError, CacheWarning, NotACacheError, default_path
from autotune_runtime.values import InputError, one_line

DEFAULT_DEVICE = "local-task"


def _show_warning(original, message, category, filename, lineno, file=None, line=None):
    """Warnings of the runtime (the cache's, tuning's) as one `warning:` line each."""
    if issubclass(category, CacheWarning) or category.__module__.startswith("autotune_runtime"):
        print(f"warning: {message}", file=sys.stderr)
    else:
        original(message, category, filename, lineno, file, line)


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("always", CacheWarning)
        warnings.showwarning = functools.partial(_show_warning, warnings.showwarning)
        yield


def command(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run a command with cache warnings as `warning:` lines and errors as `DiagnosticError`."""

    @functools.wraps(run)
    def wrapper(args: argparse.Namespace) -> int:
        with _warnings_as_lines():
            try:
                return run(args)
            except DiagnosticError:
                raise
            except InputError as err:
                raise DiagnosticError(str(err)) from None
            except (OSError, ValueError, RuntimeError, KeyError, sqlite3.Error) as err:
                raise DiagnosticError(one_line(err)) from None

    return wrapper


def cache_path(args: argparse.Namespace) -> Path:
    return Path(args.cache) if args.cache else default_path()


def load_module(args: argparse.Namespace):
    from autotune_runtime.session import load

    path = Path(args.module)
    if not path.is_file():
        raise DiagnosticError(f"cannot read {path}: no such file")
    if is_text_file(path):
        raise DiagnosticError(
            f"{path} is text (MLIR?), not a compiled module: compile it first, "
            f"`iree-autotune compile {path} -o {path.with_suffix('.vmfb').name}`, and run the "
            ".vmfb"
        )
    try:
        return load(path, device=args.device, cache=args.cache)
    except (NotACacheError, CacheAccessError) as err:  # the cache's fault, not the module's
        raise DiagnosticError(one_line(err)) from None
    except (ValueError, RuntimeError, OSError) as err:
        raise DiagnosticError(
            f"cannot load {path} on {args.device}: {one_line(err)} (expected a compiled module, "
            "the .vmfb that `iree-autotune compile` writes)"
        ) from None


def is_text_file(path: Path) -> bool:
    """Whether a file begins as text (UTF-8 without NUL bytes), as MLIR does and a compiled
    module (a FlatBuffer or zip archive) does not."""
    try:
        with path.open("rb") as file:
            head = file.read(4096)
    except OSError:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head) - 4:  # not only a character cut at the end of the block
            return False
    return bool(head) and b"\0" not in head


def console():
    """A console for tables on standard output: as wide as the terminal, or as `COLUMNS`
    says, else (a file or a pipe) at least 120 columns."""
    from rich.console import Console

    from autotune_runtime.report import unbounded

    out = Console(highlight=False)
    if unbounded(out):
        out.width = max(out.width, 120)
    return out
