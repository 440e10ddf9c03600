"""Function arguments and results in the text form of `iree-run-module`.

Inputs: `2x3xf32=1 2 3 4 5 6`, `4xf32=0` (one value fills the tensor), `f32=1.5` (a
scalar), `i32=3`, `@file.npy`, and `4xf32=@raw.bin` (raw bytes); they are checked against
the function's declared argument types. Results print as `2x3xf32=[1 2 3][4 5 6]`.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autotune_contracts.errors import DiagnosticError

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
        raise InputError(f"cannot read {path} as a .npy file ({one_line(err)})") from None
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


def check_tensor_argument(function: str, index: int, arg: object, declared: ValueType) -> None:
    """Refuse a value for a tensor parameter that is not an array of its type, naming the
    argument and the declared type: a `TypeError` for a scalar, a list or another element
    type, a `ValueError` for another shape (IREE itself says `FAILED_PRECONDITION` or `ref
    type mismatch`). Other objects (an IREE device array) are left to IREE."""
    tensor = declared.tensor
    if tensor is None:
        return
    where = f"argument {index} of {function} is a {declared.text}"
    if not isinstance(arg, np.ndarray):
        if arg is None or isinstance(
            arg, bool | int | float | complex | str | bytes | list | tuple
        ):
            shown = repr(arg) if len(repr(arg)) <= 40 else repr(arg)[:37] + "..."
            raise TypeError(f"{where}; got {type(arg).__name__} {shown} (pass a numpy array)")
        if isinstance(arg, np.generic):
            raise TypeError(f"{where}; got the {element_name(arg.dtype)} scalar {arg}")
        return
    dims, element = tensor
    wanted = _kind_bits(element)
    if arg.dtype.kind in "biuf" and wanted is not None and wanted != _dtype_kind_bits(arg.dtype):
        raise TypeError(f"{where}; got an array of {element_name(arg.dtype)} elements")
    if len(dims) != arg.ndim or any(
        d is not None and d != s for d, s in zip(dims, arg.shape, strict=False)
    ):
        shape = "x".join(str(s) for s in arg.shape) or "scalar"
        raise ValueError(f"{where}; got an array of shape {shape}")


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


def one_line(err: BaseException) -> str:
    """An exception's message on one line, without IREE's source locations and call stack."""
    text = str(err).strip()
    first = text.splitlines()[0].strip() if text else type(err).__name__
    first = re.sub(r"^Error [\w\s]+?: ", "", first)
    first = re.sub(r"[\w./-]+\.(?:c|cc|cpp|h):\d+: (?:[A-Z_]+; ?)?", "", first)
    first = first.split("; while ", 1)[0].strip(" ;")
    return first or type(err).__name__
