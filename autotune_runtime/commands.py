"""`iree-autotune run | tune | report | cache`: the runtime side of the command line.

`add_runtime_commands(sub)` registers the subcommands on the `iree-autotune` parser (see
`lowering/cli.py`). Every failure is raised as a `DiagnosticError`, which the console
script prints as one `error: ...` line (exit status 1); a `CacheWarning` is printed as a
`warning: ...` line and the command goes on.

Inputs follow `iree-run-module`: `2x3xf32=1 2 3 4 5 6`, `4xf32=0` (one value fills the
tensor), `f32=1.5` (a scalar), `i32=3`, `@file.npy`, and `4xf32=@raw.bin` (raw bytes).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import re
import sqlite3
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autotune_dialect.diagnostics import DiagnosticError
from autotune_runtime import interface
from autotune_runtime.cache import EXPORT_FORMAT, SCHEMA_VERSION, CacheWarning, default_path

DEFAULT_DEVICE = "local-task"
PRINT_MAX_ELEMENTS = 1024

# --- element types -------------------------------------------------------------------

DTYPES: dict[str, np.dtype] = {
    name: np.dtype(dtype)
    for name, dtype in {
        "f16": np.float16,
        "f32": np.float32,
        "f64": np.float64,
        "i1": np.bool_,
        "i8": np.int8,
        "i16": np.int16,
        "i32": np.int32,
        "i64": np.int64,
        "si8": np.int8,
        "si16": np.int16,
        "si32": np.int32,
        "si64": np.int64,
        "u8": np.uint8,
        "u16": np.uint16,
        "u32": np.uint32,
        "u64": np.uint64,
        "ui8": np.uint8,
        "ui16": np.uint16,
        "ui32": np.uint32,
        "ui64": np.uint64,
    }.items()
}


def element_name(dtype: np.dtype) -> str:
    """The MLIR element type that `iree-run-module` prints for a numpy dtype."""
    if dtype == np.bool_:
        return "i1"
    if dtype.kind == "f":
        return f"f{dtype.itemsize * 8}"
    if dtype.kind == "i":
        return f"i{dtype.itemsize * 8}"
    if dtype.kind == "u":
        return f"ui{dtype.itemsize * 8}"
    return str(dtype)


def _kind_bits(element: str) -> tuple[str, int] | None:
    """('f'|'bf'|'i', bits) of an MLIR element type; signedness is ignored."""
    match = re.fullmatch(r"(bf|f|si|ui|i)(\d+)", element)
    if match is None:
        return None
    kind = "i" if match.group(1) in ("si", "ui", "i") else match.group(1)
    return kind, int(match.group(2))


def _dtype_kind_bits(dtype: np.dtype) -> tuple[str, int]:
    if dtype == np.bool_:
        return "i", 1
    return ("f" if dtype.kind == "f" else "i"), dtype.itemsize * 8


# --- inputs ----------------------------------------------------------------------------


class InputError(ValueError):
    """An `--input` that cannot be read; the message says why."""


@dataclass(frozen=True)
class Input:
    spec: str
    value: np.ndarray


def parse_input(spec: str) -> np.ndarray:
    """One `--input` as a numpy array (rank 0 for a scalar)."""
    if spec.startswith("@"):
        return _load_npy(spec[1:])
    if "=" not in spec:
        raise InputError("expected SHAPExTYPE=VALUES (e.g. 4xf32=1 2 3 4) or @FILE.npy")
    type_text, values = spec.split("=", 1)
    shape, dtype = _parse_type(type_text.strip())
    _check_size(shape, dtype)
    if values.strip().startswith("@"):
        return _load_raw(values.strip()[1:], shape, dtype)
    tokens = [t for t in re.split(r"[\s,\[\]]+", values) if t]
    count = math.prod(shape)
    if not tokens:
        if count == 0:
            return np.zeros(shape, dtype)
        raise InputError("no values given")
    elements = [_parse_element(t, dtype, type_text.split("x")[-1]) for t in tokens]
    if len(tokens) not in (1, count):
        raise InputError(
            f"{len(tokens)} values given for shape {_shape_text(shape)}, which has {count} "
            "(give all, or one to fill it)"
        )
    array = np.array(elements, dtype=dtype)
    return np.full(shape, array[0], dtype) if len(tokens) == 1 else array.reshape(shape)


def _check_size(shape: tuple[int, ...], dtype: np.dtype) -> None:
    """Refuse an input larger than this machine's memory before allocating it."""
    size = math.prod(shape) * np.dtype(dtype).itemsize
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    if size > memory:
        raise InputError(
            f"shape {_shape_text(shape)} needs {size / 2**30:.1f} GiB, more than this "
            f"machine's memory ({memory / 2**30:.1f} GiB)"
        )


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


def _parse_type(text: str) -> tuple[tuple[int, ...], np.dtype]:
    parts = text.split("x")
    element = parts[-1]
    if element not in DTYPES:
        known = "f16 f32 f64 i1 i8 i16 i32 i64 u8 u16 u32 u64"
        raise InputError(f"unknown element type '{element}' (known: {known})")
    shape = []
    for dim in parts[:-1]:
        if not dim.isdigit():
            raise InputError(f"bad dimension '{dim}' in '{text}' (expected e.g. 2x3xf32)")
        shape.append(int(dim))
    return tuple(shape), DTYPES[element]


def _parse_element(token: str, dtype: np.dtype, element: str):
    try:
        if dtype == np.bool_:
            lowered = token.lower()
            if lowered in ("0", "false"):
                return False
            if lowered in ("1", "true"):
                return True
            raise ValueError
        if dtype.kind == "f":
            return float(token)
        value = int(token)
    except ValueError:
        raise InputError(f"cannot read '{token}' as {element}") from None
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise InputError(f"{value} is out of range for {element} [{info.min}, {info.max}]")
    return value


def _load_npy(path: str) -> np.ndarray:
    try:
        value = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read {path} as a .npy file ({_one_line(err)})") from None
    if not isinstance(value, np.ndarray):
        if hasattr(value, "close"):
            value.close()
        raise InputError(f"{path} is not a .npy file (an .npz archive holds several arrays)")
    if value.dtype not in set(DTYPES.values()):
        raise InputError(f"{path} holds {value.dtype} values, which IREE cannot take")
    return value


def _load_raw(path: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror}") from None
    expected = math.prod(shape) * dtype.itemsize
    if len(data) != expected:
        raise InputError(
            f"{path} has {len(data)} bytes; shape {_shape_text(shape)} needs {expected}"
        )
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


# --- function signatures -----------------------------------------------------------------


@dataclass(frozen=True)
class ValueType:
    """An argument or result type from the function's `iree.abi.declaration`."""

    text: str

    @property
    def tensor(self) -> tuple[tuple[int | None, ...], str] | None:
        """(dims with None for dynamic, element type) of a ranked tensor type."""
        match = re.fullmatch(r"tensor<([^>]*)>", self.text)
        if match is None:
            return None
        parts = match.group(1).split("x")
        dims = tuple(None if d == "?" else int(d) for d in parts[:-1] if d == "?" or d.isdigit())
        if len(dims) != len(parts) - 1:
            return None
        return dims, parts[-1]

    @property
    def scalar(self) -> str | None:
        """The element type of a primitive (non-tensor) value, e.g. `i32`."""
        return self.text if _kind_bits(self.text) is not None else None


def _split_top_level(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
        elif char == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        out.append(text[start:])
    return [part.strip() for part in out]


def _value_types(text: str) -> list[ValueType]:
    types = []
    for part in _split_top_level(text):
        _, _, type_text = part.partition(":")
        types.append(ValueType(type_text.strip().split(" {", 1)[0].strip()))
    return types


def signature(vm_module, name: str) -> tuple[list[ValueType], list[ValueType]] | None:
    """Argument and result types of an exported function, when the module declares them."""
    try:
        reflection = vm_module.lookup_function(name).reflection
    except Exception:  # noqa: BLE001 - a missing reflection only costs the checks
        return None
    declaration = reflection.get("iree.abi.declaration", "")
    match = re.search(r"@[\w.$-]+\((.*?)\)\s*(?:->\s*(.*))?$", declaration)
    if match is None:
        return None
    results = (match.group(2) or "").strip()
    if results.startswith("(") and results.endswith(")"):
        results = results[1:-1]
    return _value_types(match.group(1)), _value_types(results)


def check_arguments(function: str, inputs: list[Input], types: list[ValueType] | None) -> list:
    """The call arguments: arrays for tensors, Python scalars for primitive values.
    Counts, shapes and element types are checked against the declaration when there is one."""
    if types is None:
        return [item.value for item in inputs]
    if len(inputs) != len(types):
        expected = ", ".join(t.text for t in types) or "nothing"
        raise DiagnosticError(
            f"@{function} takes {len(types)} argument(s) ({expected}) but "
            f"{len(inputs)} --input were given"
        )
    args = []
    for index, (item, declared) in enumerate(zip(inputs, types, strict=True)):
        where = f"--input {item.spec!r} (argument {index})"
        value = item.value
        given = "x".join([*(str(d) for d in value.shape), element_name(value.dtype)])
        if declared.scalar is not None:
            if value.ndim != 0:
                raise DiagnosticError(
                    f"{where}: @{function} expects a {declared.text}, not {given}"
                )
            _check_element(where, function, value.dtype, declared.scalar)
            args.append(value.item())
            continue
        tensor = declared.tensor
        if tensor is not None:
            dims, element = tensor
            fits = len(dims) == value.ndim and all(
                d is None or d == s for d, s in zip(dims, value.shape, strict=True)
            )
            if not fits:
                raise DiagnosticError(f"{where}: @{function} expects {declared.text}, not {given}")
            _check_element(where, function, value.dtype, element)
        args.append(value)
    return args


def _check_element(where: str, function: str, dtype: np.dtype, element: str) -> None:
    wanted = _kind_bits(element)
    if wanted is not None and wanted != _dtype_kind_bits(dtype):
        raise DiagnosticError(
            f"{where}: @{function} expects {element} elements, not {element_name(dtype)}"
        )


# --- printing results -----------------------------------------------------------------------


def format_element(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "1" if value else "0"
    if isinstance(value, float | np.floating):
        number = float(value)
        if not math.isfinite(number):
            return "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")
        if number != 0 and not 1e-4 <= abs(number) < 1e16:
            return np.format_float_scientific(value, trim="-")
        return np.format_float_positional(value, trim="-")
    return str(value)


def _nested(array: np.ndarray) -> str:
    if array.ndim == 1:
        return " ".join(format_element(v) for v in array)
    return "".join(f"[{_nested(sub)}]" for sub in array)


def format_value(value, declared: ValueType | None = None) -> str:
    """A result as `iree-run-module` prints it: `2x3xf32=[1 2 3][4 5 6]`, `i32=3`."""
    if isinstance(value, np.ndarray):
        element = element_name(value.dtype)
        if declared is not None and declared.tensor is not None:
            element = declared.tensor[1]
        head = "x".join([*(str(d) for d in value.shape), element])
        if value.ndim == 0:
            return f"{head}={format_element(value.item())}"
        if value.size > PRINT_MAX_ELEMENTS:
            flat = value.reshape(-1)[:PRINT_MAX_ELEMENTS]
            return f"{head}=" + " ".join(format_element(v) for v in flat) + " ..."
        return f"{head}={_nested(value)}"
    if isinstance(value, np.generic):
        return f"{element_name(value.dtype)}={format_element(value)}"
    if isinstance(value, bool | int | float):
        text = format_element(value)
        if declared is not None and declared.scalar is not None:
            return f"{declared.scalar}={text}"
        return text
    return repr(value)


# --- plumbing ----------------------------------------------------------------------------------


def _one_line(err: BaseException) -> str:
    """An exception's message on one line, without IREE's source locations and call stack."""
    text = str(err).strip()
    first = text.splitlines()[0].strip() if text else type(err).__name__
    first = re.sub(r"^Error [\w\s]+?: ", "", first)
    first = re.sub(r"[\w./-]+\.(?:c|cc|cpp|h):\d+: (?:[A-Z_]+; ?)?", "", first)
    first = first.split("; while ", 1)[0].strip(" ;")
    return first or type(err).__name__


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


def _command(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
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
                raise DiagnosticError(_one_line(err)) from None

    return wrapper


def _cache_path(args: argparse.Namespace) -> Path:
    return Path(args.cache) if args.cache else default_path()


def _load(args: argparse.Namespace):
    from autotune_runtime.session import load

    path = Path(args.module)
    if not path.is_file():
        raise DiagnosticError(f"cannot read {path}: no such file")
    try:
        return load(path, device=args.device, cache=args.cache)
    except (ValueError, RuntimeError, OSError) as err:
        raise DiagnosticError(f"cannot load {path} on {args.device}: {_one_line(err)}") from None


def _write_atomic(path: str, text: str) -> None:
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise DiagnosticError(f"cannot write {path}: {err.strerror}") from None
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(tmp, target)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise DiagnosticError(f"cannot write {path}: {err.strerror}") from None


def _workload(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


# --- run ------------------------------------------------------------------------------------


@_command
def cmd_run(args: argparse.Namespace) -> int:
    if args.repeat < 1:
        raise DiagnosticError(f"--repeat must be at least 1, got {args.repeat}")
    inputs = []
    for spec in args.input:
        try:
            inputs.append(Input(spec, parse_input(spec)))
        except InputError as err:
            raise DiagnosticError(f"--input {spec!r}: {err}") from None
    module = _load(args)
    try:
        public = [n for n in module.function_names if not n.startswith("__")]
        name = args.function
        if name is None:
            if len(public) != 1:
                raise DiagnosticError(
                    "--function is required; the module exports: " + (", ".join(public) or "none")
                )
            name = public[0]
        if name not in module.function_names:
            raise DiagnosticError(
                f"no function '{name}' in {args.module}; it exports: "
                + (", ".join(public) or "none")
            )
        types = signature(module.module, name)
        call_args = check_arguments(name, inputs, None if types is None else types[0])
        function = module.function(name)
        for call in range(1, args.repeat + 1):
            try:
                results = function(*call_args)
            except (ValueError, RuntimeError) as err:
                raise DiagnosticError(f"calling @{name} failed: {_one_line(err)}") from None
            print(f"EXEC @{name}" + (f" [{call}/{args.repeat}]" if args.repeat > 1 else ""))
            if results is None:
                results = ()
            elif not isinstance(results, tuple):
                results = (results,)
            declared = types[1] if types is not None else []
            for i, result in enumerate(results):
                value_type = declared[i] if i < len(declared) else None
                print(f"result[{i}]: {format_value(result, value_type)}")
        _print_group_summary(module)
    finally:
        module.close()
    return 0


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"


def _print_group_summary(module) -> None:
    if not module.groups:
        return
    seen = set()
    for item in module.stats():
        seen.add(item["group"])
        where = f"{item['group']} workload {_workload(item['workload'])}"
        if item["decision"] is None:
            state = f"exploring ({_calls(item['explored_calls'])})"
        elif item["from_cache"]:
            state = f"{item['decision']} (from cache)"
        else:
            state = f"{item['decision']} (decided after {_calls(item['explored_calls'])})"
        print(f"autotune: {where}: {state}")
    for group in module.groups.values():
        if group.qualified_name not in seen:
            print(f"autotune: {group.qualified_name}: not called")


# --- tune -----------------------------------------------------------------------------------


@_command
def cmd_tune(args: argparse.Namespace) -> int:
    from rich.console import Console

    from autotune_runtime.report import decision_table, panels_from_stats

    module = _load(args)
    try:
        if module.tune_function is None:
            what = "groups tune online as they run" if module.groups else "it has no groups"
            raise DiagnosticError(
                f"{args.module} has no {interface.TUNE_FUNCTION} entry point (no group with the "
                f"explicit policy; {what})"
            )
        status = Console(stderr=True)
        start = time.perf_counter()
        with status.status(f"tuning {Path(args.module).name} on {args.device} ..."):
            try:
                module.tune()
            except (ValueError, RuntimeError) as err:
                raise DiagnosticError(f"tuning failed: {_one_line(err)}") from None
        elapsed = time.perf_counter() - start
        panels = panels_from_stats(module.stats())
        cache = module.cache
        stored = cache is not None and cache.persistent
        where = f"; decisions stored in {cache.path}" if stored else "; decisions not stored"
        print(f"tuned {len(panels)} group/workload key(s) in {elapsed:.2f} s{where}")
        if panels:
            _console().print(decision_table(panels))
    finally:
        module.close()
    return 0


def _console():
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 120)
    return console


# --- report ---------------------------------------------------------------------------------


@_command
def cmd_report(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache
    from autotune_runtime.report import panels_from_entries, variant_table, write_plot

    if args.tuning is not None:
        from autotune_model.report import show_report

        return show_report(args.tuning, args.plot)
    path = _cache_path(args)
    if not path.exists():
        print(f"no tuning decisions: {path} does not exist" + _no_plot(args))
        return 0
    cache = TuningCache(path)
    try:
        panels = panels_from_entries(cache.entries())
    finally:
        cache.close()
    if not panels:
        print(f"no tuning decisions in {path}" + _no_plot(args))
        return 0
    console = _console()
    for panel in panels:
        console.print(variant_table(panel))
    if args.plot:
        try:
            write_plot(panels, args.plot)
        except OSError as err:
            raise DiagnosticError(f"cannot write {args.plot}: {err.strerror or err}") from None
        print(f"plot written to {args.plot}")
    return 0


def _no_plot(args: argparse.Namespace) -> str:
    return " (no plot written)" if args.plot else ""


# --- cache ----------------------------------------------------------------------------------


@_command
def cmd_cache_export(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache

    path = _cache_path(args)
    if path.exists():
        cache = TuningCache(path)
        try:
            data = cache.export()
        finally:
            cache.close()
    else:
        data = {"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, "decisions": []}
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    count = len(data["decisions"])
    if args.file == "-":
        sys.stdout.write(text)
        print(f"exported {count} decision(s) from {path}", file=sys.stderr)
    else:
        _write_atomic(args.file, text)
        print(f"exported {count} decision(s) from {path} to {args.file}")
    return 0


@_command
def cmd_cache_import(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache

    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    except OSError as err:
        raise DiagnosticError(f"cannot read {args.file}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise DiagnosticError(f"{args.file} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DiagnosticError(f"{args.file} is not JSON ({err})") from None
    path = _cache_path(args)
    cache = TuningCache(path)
    try:
        count = cache.import_(data)  # all or nothing
        total = sum(1 for _ in cache.entries())
    except ValueError as err:
        raise DiagnosticError(f"{args.file}: {err}") from None
    finally:
        cache.close()
    print(f"read {count} decision(s) from {args.file} into {path} (now {total} in the cache)")
    return 0


@_command
def cmd_cache_clear(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache

    path = _cache_path(args)
    if not path.exists():
        print(f"removed 0 decisions ({path} does not exist)")
        return 0
    cache = TuningCache(path)
    try:
        count = cache.clear()
    finally:
        cache.close()
    print(f"removed {count} decision(s) from {path}")
    return 0


# --- registration -----------------------------------------------------------------------------


def add_runtime_commands(sub) -> None:
    """Add `run`, `tune`, `report` and `cache` to the `iree-autotune` subcommands."""

    def cache_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--cache",
            metavar="PATH",
            help="tuning cache file (default: $IREE_AUTOTUNE_CACHE, else "
            "$XDG_CACHE_HOME/iree-autotune/tuning.sqlite3)",
        )

    def module_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("module", metavar="MODULE.vmfb")
        p.add_argument(
            "--device", default=DEFAULT_DEVICE, help=f"IREE device (default: {DEFAULT_DEVICE})"
        )
        cache_option(p)

    run = sub.add_parser("run", help="call a function of a compiled module, with tuning")
    module_options(run)
    run.add_argument(
        "--function", metavar="NAME", help="function to call (optional if there is only one)"
    )
    run.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="SPEC",
        help="an argument, as iree-run-module takes it: 2x3xf32=1 2 3 4 5 6, 4xf32=0, "
        "f32=1.5, i32=3, @file.npy (repeat for each argument)",
    )
    run.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="call the function N times (default 1)"
    )
    run.set_defaults(run=cmd_run)

    tune = sub.add_parser("tune", help="run a module's __autotune entry point and show decisions")
    module_options(tune)
    tune.set_defaults(run=cmd_tune)

    report = sub.add_parser(
        "report",
        help="per-variant timings of the decisions in the cache, or a tune-model report",
    )
    report.add_argument(
        "tuning", nargs="?", metavar="TUNED.tune.json", help="a report of tune-model to show"
    )
    cache_option(report)
    report.add_argument("--plot", metavar="FILE.png", help="also write a bar chart")
    report.set_defaults(run=cmd_report)

    cache = sub.add_parser("cache", help="export, import or clear the tuning cache")
    actions = cache.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="write every decision as JSON")
    export.add_argument("file", metavar="FILE.json", help="output file ('-': stdout)")
    cache_option(export)
    export.set_defaults(run=cmd_cache_export)
    import_ = actions.add_parser("import", help="add the decisions of an export")
    import_.add_argument("file", metavar="FILE.json", help="input file ('-': stdin)")
    cache_option(import_)
    import_.set_defaults(run=cmd_cache_import)
    clear = actions.add_parser("clear", help="delete every decision")
    cache_option(clear)
    clear.set_defaults(run=cmd_cache_clear)
