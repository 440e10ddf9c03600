"""`iree-autotune import-triton`: Triton kernels as an autotune group of PTX exports.

```sh
iree-autotune import-triton examples.triton.matmul:matmul_kernel \
    --signature 'a_ptr=*fp16[M,K], b_ptr=*fp16[K,N], c_ptr=*fp16[M,N], M=i32:M, N=i32:N, K=i32:K,
                 stride_am=i32:K, stride_ak=1, stride_bk=i32:N, stride_bn=1, stride_cm=i32:N,
                 stride_cn=1' \
    --constexpr 'ACTIVATION=""' --grid 'cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)' \
    --arch sm_80,sm_90 -o matmul.mlir
```

```python
from lowering.triton_import import import_triton
kernels = import_triton("examples.triton.matmul:matmul_kernel", signature=..., grid=...,
                        constexprs={"ACTIVATION": ""}, archs=("sm_80", "sm_90"))
kernels["sm_80"].mlir()          # the module text (PTX embedded), or .write("matmul.mlir")
```

Each config (from the kernel's `@triton.autotune` decorator, or given) is compiled to PTX by
triton (no GPU: `triton.compile(ASTSource(...), target=GPUTarget("cuda", 80, 32))`, pinned
PTX ISA 8.0, no line info), adapted to IREE's CUDA ABI by `lowering.ptx_abi` and merged into
one PTX module. The `.mlir` holds a `hal.executable.source` with one export per config
(workgroup_size = 32 * num_warps, workgroup_local_memory = Triton's `shared`, a count region
computing the config's grid from the workload), an `autotune.group` over them and a
`util.func` that dispatches the group with the user's tensors. docs/triton.md has the details.

Shape guards: Triton specializes a kernel for 16-divisible integer arguments (vectorized
loads). Each config is compiled twice: assuming every non-constant i32 argument is a multiple
of 16, and assuming nothing; the first export's `condition` checks the assumption on the
workload and falls back to the second, so odd sizes can never take the specialized code.

Only this module needs triton (imported lazily, `pip install iree-autotune[triton]`); a
`Bundle` (JSON metadata + raw PTX) rebuilds the `.mlir` without it.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import importlib
import importlib.util
import json
import os
import re
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autotune_dialect.diagnostics import DiagnosticError
from lowering.files import write_atomically
from lowering.ptx_abi import AdaptedKernel, adapt_kernel, merge

TRITON_VERSION = "3.9.0"
"""The triton release the importer is written and tested against (the `triton` extra)."""
PTX_VERSION = 80
"""PTX ISA 8.0 (CUDA 12.0): accepted by CUDA 12 and 13 ptxas and by drivers >= 525."""
ARCHS = {"sm_80": 80, "sm_90": 90}
DIVISIBILITY = 16
"""Triton's specialization unit: pointers and integers divisible by 16."""
MAX_SHARED = {80: 166912, 90: 232448}
"""Largest dynamic shared memory per block (opt-in): A100 163 KiB, H100 227 KiB."""
BUNDLE_FORMAT = "iree-autotune.triton/1"
INSTALL_HINT = "install iree-autotune[triton] (pip install 'iree-autotune[triton]', triton==3.9.0)"

_DTYPES = {
    "fp16": "f16",
    "bf16": "bf16",
    "fp32": "f32",
    "fp64": "f64",
    "i8": "i8",
    "i16": "i16",
    "i32": "i32",
    "i64": "i64",
    "u8": "i8",
    "u16": "i16",
    "u32": "i32",
    "u64": "i64",
}
_ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


class TritonImportError(DiagnosticError):
    """A kernel, signature or config that cannot be imported."""


def _triton():
    """The triton package, or a clear error telling how to get it."""
    try:
        import triton
    except ImportError:
        raise TritonImportError(f"triton is not installed: {INSTALL_HINT}") from None
    if triton.__version__ != TRITON_VERSION:
        warnings.warn(
            f"triton {triton.__version__} is installed; iree-autotune import-triton is tested "
            f"with triton {TRITON_VERSION} (its .entry ABI may differ)",
            stacklevel=3,
        )
    return triton


# --- expressions ------------------------------------------------------------------------


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_FUNCTIONS = ("cdiv", "min", "max")


@dataclass(frozen=True)
class Expr:
    """An integer expression over workload symbols and constexprs, in Python syntax:
    `+ - * // %`, `cdiv(a, b)`, `min`, `max`, integers, names; `<= < == != > >=` and `and`
    for requirements. `triton.cdiv(...)` and `META['X']` are accepted as in Triton grids."""

    text: str

    def __post_init__(self) -> None:
        self.tree  # noqa: B018 - validate now

    @property
    def tree(self) -> ast.expr:
        try:
            node = ast.parse(self.text.strip(), mode="eval").body
        except SyntaxError as err:
            raise TritonImportError(f"cannot parse expression '{self.text}': {err.msg}") from None
        _check(node, self.text)
        return node

    def names(self) -> set[str]:
        return {n for n in _names(self.tree)}

    def substitute(self, values: Mapping[str, Any]) -> Expr:
        """The expression with `values` (integers) in place of their names."""
        return Expr(ast.unparse(_substitute(self.tree, values)))

    def evaluate(self, env: Mapping[str, int]) -> int:
        return _evaluate(self.tree, env, self.text)

    def constant(self) -> int | None:
        """The value when the expression names nothing."""
        return None if self.names() else self.evaluate({})

    def __str__(self) -> str:
        return ast.unparse(self.tree)


def _function_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id in ("triton", "tl") else None
    return None


def _subscript_name(node: ast.Subscript) -> str | None:
    key = node.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return None


def _check(node: ast.expr, text: str) -> None:
    ok = True
    if isinstance(node, ast.BinOp):
        ok = type(node.op) in _BINOPS
        _check(node.left, text), _check(node.right, text)
    elif isinstance(node, ast.Call):
        ok = _function_name(node.func) in _FUNCTIONS and not node.keywords
        ok = ok and (len(node.args) == 2 or _function_name(node.func) != "cdiv")
        for a in node.args:
            _check(a, text)
    elif isinstance(node, ast.Compare):
        ok = len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS
        _check(node.left, text), _check(node.comparators[0], text)
    elif isinstance(node, ast.BoolOp):
        ok = isinstance(node.op, ast.And)
        for v in node.values:
            _check(v, text)
    elif isinstance(node, ast.Subscript):
        ok = _subscript_name(node) is not None
    elif isinstance(node, ast.Constant):
        ok = isinstance(node.value, int) and not isinstance(node.value, bool)
    else:
        ok = isinstance(node, ast.Name)
    if not ok:
        raise TritonImportError(
            f"unsupported expression '{ast.unparse(node)}' in '{text}': use integers, names, "
            "+ - * // %, cdiv(), min(), max(), comparisons and 'and'"
        )


def _names(node: ast.expr) -> Iterable[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Subscript):
        yield _subscript_name(node)  # type: ignore[misc]
    elif isinstance(node, ast.Call):
        for a in node.args:
            yield from _names(a)
    else:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                yield from _names(child)


def _substitute(node: ast.expr, values: Mapping[str, Any]) -> ast.expr:
    name = node.id if isinstance(node, ast.Name) else None
    if isinstance(node, ast.Subscript):
        name = _subscript_name(node)
    if name is not None:
        if name in values:
            value = values[name]
            if not isinstance(value, int) or isinstance(value, bool):
                raise TritonImportError(
                    f"'{name}' = {value!r} is used in an expression: not an int"
                )
            return ast.Constant(value)
        return ast.Name(name)
    if isinstance(node, ast.Call):
        return ast.Call(
            ast.Name(_function_name(node.func) or ""),
            [_substitute(a, values) for a in node.args],
            [],
        )
    if isinstance(node, ast.BinOp):
        return ast.BinOp(_substitute(node.left, values), node.op, _substitute(node.right, values))
    if isinstance(node, ast.Compare):
        return ast.Compare(
            _substitute(node.left, values), node.ops, [_substitute(node.comparators[0], values)]
        )
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(node.op, [_substitute(v, values) for v in node.values])
    return node


def _evaluate(node: ast.expr, env: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.Name | ast.Subscript):
        name = node.id if isinstance(node, ast.Name) else _subscript_name(node)
        if name not in env:
            raise TritonImportError(f"'{name}' in '{text}' has no value")
        return int(env[name])  # type: ignore[index]
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, env, text), _evaluate(node.right, env, text)
        op = _BINOPS[type(node.op)]
        if op in ("//", "%") and b == 0:
            raise TritonImportError(f"division by zero in '{text}'")
        return {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "//": lambda: a // b,
            "%": lambda: a % b,
        }[op]()
    if isinstance(node, ast.Call):
        args = [_evaluate(a, env, text) for a in node.args]
        fn = _function_name(node.func)
        if fn == "cdiv":
            return -(-args[0] // args[1])
        return min(args) if fn == "min" else max(args)
    if isinstance(node, ast.Compare):
        a, b = _evaluate(node.left, env, text), _evaluate(node.comparators[0], env, text)
        op = _CMPOPS[type(node.ops[0])]
        return int(
            {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
        )
    if isinstance(node, ast.BoolOp):
        return int(all(_evaluate(v, env, text) for v in node.values))
    raise TritonImportError(f"cannot evaluate '{text}'")


class _Ssa:
    """Emits arith ops on `index` for expressions; constants and repeated terms are shared."""

    def __init__(self, indent: str, values: Mapping[str, str], reserved: Iterable[str] = ()):
        self.indent = indent
        self.values = dict(values)  # name -> SSA value
        self.lines: list[str] = []
        self.cache: dict[str, str] = {}
        self.count = 0
        # SSA names taken in this scope: arguments, and names kept for `define`.
        self.defined = {v.lstrip("%") for v in self.values.values()}
        self.used = self.defined | set(reserved)

    def _unique(self, name: str) -> str:
        while name in self.used:
            name += "_"
        self.used.add(name)
        return f"%{name}"

    def _fresh(self, hint: str) -> str:
        self.count += 1
        return self._unique(f"{hint}{self.count}")

    def const(self, value: int, type_: str = "index") -> str:
        key = f"const {value} {type_}"
        if key not in self.cache:
            name = f"c{value}" if value >= 0 else f"cm{-value}"
            name = self._unique(name if type_ == "index" else f"{name}_{type_}")
            self.lines.append(f"{self.indent}{name} = arith.constant {value} : {type_}")
            self.cache[key] = name
        return self.cache[key]

    def op(self, text: str, type_: str, hint: str = "v") -> str:
        key = f"{text} : {type_}"
        if key not in self.cache:
            name = self._fresh(hint)
            self.lines.append(f"{self.indent}{name} = {text} : {type_}")
            self.cache[key] = name
        return self.cache[key]

    def raw(self, text: str, hint: str = "v") -> str:
        """`%name = text` for ops whose type syntax is not a trailing `: type`."""
        if text not in self.cache:
            name = self._fresh(hint)
            self.lines.append(f"{self.indent}{name} = {text}")
            self.cache[text] = name
        return self.cache[text]

    def define(self, name: str, text: str) -> str:
        """`%name = text`, binding the symbol `name` to it."""
        if name in self.defined:
            raise TritonImportError(f"'{name}' names two values; rename the dimension")
        self.defined.add(name)
        self.used.add(name)
        self.lines.append(f"{self.indent}%{name} = {text}")
        self.values[name] = f"%{name}"
        return f"%{name}"

    def expr(self, e: Expr) -> str:
        return self._emit(e.tree, e.text)

    def _emit(self, node: ast.expr, text: str) -> str:
        if isinstance(node, ast.Constant):
            return self.const(int(node.value))
        if isinstance(node, ast.Name | ast.Subscript):
            name = node.id if isinstance(node, ast.Name) else _subscript_name(node)
            if name not in self.values:
                raise TritonImportError(f"'{name}' in '{text}' is not a workload dimension")
            return self.values[name]  # type: ignore[index]
        if isinstance(node, ast.BinOp):
            a, b = self._emit(node.left, text), self._emit(node.right, text)
            op = {"+": "addi", "-": "subi", "*": "muli", "//": "divui", "%": "remui"}[
                _BINOPS[type(node.op)]
            ]
            return self.op(f"arith.{op} {a}, {b}", "index")
        if isinstance(node, ast.Call):
            args = [self._emit(a, text) for a in node.args]
            fn = _function_name(node.func)
            if fn == "cdiv":
                return self.op(f"arith.ceildivui {args[0]}, {args[1]}", "index")
            result = args[0]
            for b in args[1:]:
                result = self.op(
                    f"arith.{'minui' if fn == 'min' else 'maxui'} {result}, {b}", "index"
                )
            return result
        if isinstance(node, ast.Compare):
            a, b = self._emit(node.left, text), self._emit(node.comparators[0], text)
            pred = {"<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "==": "eq", "!=": "ne"}[
                _CMPOPS[type(node.ops[0])]
            ]
            return self.op(f"arith.cmpi {pred}, {a}, {b}", "index", "ok")
        if isinstance(node, ast.BoolOp):
            result = self._emit(node.values[0], text)
            for v in node.values[1:]:
                result = self.op(f"arith.andi {result}, {self._emit(v, text)}", "i1", "ok")
            return result
        raise TritonImportError(f"cannot emit '{text}'")


# --- the kernel's signature ---------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """One non-constexpr argument of the kernel, as the user describes it.

    `pointer`: `name=*fp16[M,K]` (a tensor; dims are symbols or integers);
    `scalar`: `name=i32:EXPR` (a push constant computed from the dims);
    `constant`: `name=1` (specialized away, like Triton's equal-to-1 specialization)."""

    name: str
    kind: str
    dtype: str = ""
    shape: tuple[str | int, ...] = ()
    expr: Expr | None = None
    value: int | None = None

    @property
    def element_type(self) -> str:
        return _DTYPES[self.dtype]

    def tensor_type(self) -> str:
        dims = "x".join("?" if isinstance(d, str) else str(d) for d in self.shape)
        return f"tensor<{dims}x{self.element_type}>" if dims else f"tensor<{self.element_type}>"

    def spec(self) -> str:
        if self.kind == "pointer":
            return f"{self.name}=*{self.dtype}[{','.join(map(str, self.shape))}]"
        if self.kind == "scalar":
            return f"{self.name}={self.dtype}:{self.expr}"
        return f"{self.name}={self.value}"


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, current = [], 0, []
    for c in text:
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
    parts.append("".join(current))
    return [" ".join(p.split()) for p in parts if p.strip()]


def parse_signature(text: str | Sequence[str]) -> list[Arg]:
    """`a_ptr=*fp16[M,K], M=i32:M, stride_ak=1, ...` -> the arguments in the given order."""
    items = _split_top(text) if isinstance(text, str) else [" ".join(t.split()) for t in text]
    args: list[Arg] = []
    for item in items:
        name, eq, rhs = item.partition("=")
        name, rhs = name.strip(), rhs.strip()
        if not eq or not name.isidentifier():
            raise TritonImportError(f"signature entry '{item}': expected NAME=TYPE")
        if rhs.startswith("*"):
            m = re.fullmatch(r"\*\s*(\w+)\s*\[(.*)\]", rhs)
            if m is None:
                raise TritonImportError(
                    f"signature entry '{item}': a pointer needs its tensor's shape, e.g. *fp16[M,K]"
                )
            if m.group(1) not in _DTYPES:
                raise TritonImportError(
                    f"signature entry '{item}': unsupported element type '{m.group(1)}' "
                    f"(one of {', '.join(_DTYPES)})"
                )
            shape: list[str | int] = []
            for d in _split_top(m.group(2)):
                if re.fullmatch(r"\d+", d):
                    shape.append(int(d))
                elif d.isidentifier():
                    shape.append(d)
                else:
                    raise TritonImportError(
                        f"signature entry '{item}': dimension '{d}' must be a name or an integer"
                    )
            args.append(Arg(name, "pointer", m.group(1), tuple(shape)))
        elif re.fullmatch(r"-?\d+", rhs):
            args.append(Arg(name, "constant", value=int(rhs)))
        else:
            dtype, colon, value = rhs.partition(":")
            dtype = dtype.strip()
            if not colon:
                raise TritonImportError(
                    f"signature entry '{item}': a scalar needs its value, e.g. {name}=i32:N"
                )
            if dtype not in ("i32", "u32"):
                raise TritonImportError(
                    f"signature entry '{item}': scalar type {dtype} is not supported; IREE "
                    "passes only 32-bit integer push constants (i32, u32)"
                )
            args.append(Arg(name, "scalar", dtype, expr=Expr(value)))
    names = [a.name for a in args]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise TritonImportError(f"signature names {', '.join(repeated)} more than once")
    return args


# --- the import specification ------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """One Triton config: constexpr values and launch options."""

    kwargs: dict[str, Any]
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None

    def describe(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        extra = f", maxnreg={self.maxnreg}" if self.maxnreg else ""
        launch = f"num_warps={self.num_warps}, num_stages={self.num_stages}{extra}"
        return f"{values}, {launch}" if values else launch

    def to_json(self) -> dict[str, Any]:
        return {
            "kwargs": self.kwargs,
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "num_ctas": self.num_ctas,
            "maxnreg": self.maxnreg,
        }

    @staticmethod
    def from_any(value: Any) -> Config:
        """A `triton.Config`, this class, `{"kwargs": {...}, "num_warps": ...}` or a flat dict
        (`{"BLOCK_SIZE": 256, "num_warps": 2}`)."""
        if isinstance(value, Config):
            return value
        if isinstance(value, Mapping):
            value = dict(value)
            options = {
                k: value.pop(k)
                for k in ("num_warps", "num_stages", "num_ctas", "maxnreg")
                if k in value
            }
            kwargs = value.pop("kwargs", None)
            if kwargs is None:
                kwargs, value = value, {}
            if value:
                raise TritonImportError(f"unknown config keys: {', '.join(value)}")
            return Config(dict(kwargs), **options)
        if hasattr(value, "kwargs") and hasattr(value, "num_warps"):
            if getattr(value, "pre_hook", None) is not None:
                raise TritonImportError(
                    "a config with a pre_hook cannot be imported: IREE cannot run Python "
                    "before a dispatch"
                )
            return Config(
                dict(value.kwargs),
                value.num_warps,
                value.num_stages,
                getattr(value, "num_ctas", 1) or 1,
                getattr(value, "maxnreg", None),
            )
        raise TritonImportError(f"not a config: {value!r}")


@dataclass(frozen=True)
class KernelSpec:
    """What the importer needs besides the kernel: its arguments, constexprs, grid, ..."""

    kernel: str  # "module:function", for provenance
    name: str  # base name of exports, group and entry function
    args: tuple[Arg, ...]
    grid: tuple[Expr, ...]
    constexprs: dict[str, Any] = field(default_factory=dict)
    outputs: tuple[str, ...] | None = None
    require: tuple[Expr, ...] = ()
    samples: tuple[tuple[int, ...], ...] = ()
    divisibility: int = DIVISIBILITY
    entry: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= len(self.grid) <= 3:
            raise TritonImportError(f"the grid has {len(self.grid)} dimensions; expected 1 to 3")
        pointers = [a for a in self.args if a.kind == "pointer"]
        if not pointers:
            raise TritonImportError("the signature has no pointer (tensor) argument")
        if self.outputs is not None:
            unknown = set(self.outputs) - {a.name for a in pointers}
            if unknown:
                raise TritonImportError(
                    f"declared output(s) {', '.join(sorted(unknown))} are not pointer arguments"
                )
        dims = set(self.dims)
        for a in self.args:
            if a.kind == "scalar":
                missing = a.expr.names() - dims  # type: ignore[union-attr]
                if missing:
                    raise TritonImportError(
                        f"scalar {a.name}={a.expr}: {', '.join(sorted(missing))} is not a "
                        "dimension of any tensor"
                    )
        for sample in self.samples:
            if len(sample) != len(self.dims):
                raise TritonImportError(
                    f"sample workload {list(sample)} has {len(sample)} values; the workload is "
                    f"({', '.join(self.dims)})"
                )

    @property
    def dims(self) -> list[str]:
        """The workload: every symbolic dimension, in order of first appearance."""
        out: list[str] = []
        for a in self.args:
            for d in a.shape:
                if isinstance(d, str) and d not in out:
                    out.append(d)
        return out

    @property
    def kernel_args(self) -> list[str]:
        """The `.entry` parameters (before Triton's scratch pointers), in kernel order."""
        return [a.name for a in self.args if a.kind != "constant"]

    @property
    def pointers(self) -> list[str]:
        return [a.name for a in self.args if a.kind == "pointer"]

    @property
    def entry_name(self) -> str:
        return self.entry or self.name

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)

    def assumed_divisible(self) -> list[str]:
        """Scalars that the specialized variant assumes are multiples of `divisibility`:
        every i32 argument that is not a constant (constants are checked here)."""
        if self.divisibility <= 1:
            return []
        out = []
        for a in self.args:
            if a.kind != "scalar":
                continue
            value = a.expr.constant()  # type: ignore[union-attr]
            if value is None:
                out.append(a.name)
        return out

    def statically_divisible(self) -> list[str]:
        if self.divisibility <= 1:
            return []
        return [
            a.name
            for a in self.args
            if a.kind == "scalar"
            and (v := a.expr.constant()) is not None  # type: ignore[union-attr]
            and v % self.divisibility == 0
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "name": self.name,
            "entry": self.entry,
            "signature": ", ".join(a.spec() for a in self.args),
            "constexprs": self.constexprs,
            "grid": [e.text for e in self.grid],
            "outputs": None if self.outputs is None else list(self.outputs),
            "require": [e.text for e in self.require],
            "samples": [list(s) for s in self.samples],
            "divisibility": self.divisibility,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> KernelSpec:
        return make_spec(
            data["kernel"],
            data["signature"],
            grid=data["grid"],
            constexprs=data.get("constexprs") or {},
            outputs=data.get("outputs"),
            require=data.get("require") or (),
            samples=data.get("samples") or (),
            divisibility=data.get("divisibility", DIVISIBILITY),
            name=data.get("name"),
            entry=data.get("entry"),
        )


def _grid_exprs(grid: str | Sequence[str]) -> tuple[Expr, ...]:
    if isinstance(grid, str):
        text = grid.strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        parts = _split_top(text)
    else:
        parts = list(grid)
    return tuple(Expr(p) for p in parts)


def _samples(samples: Iterable[Any], dims: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    out = []
    for s in samples:
        if isinstance(s, str):
            values = dict(_split_assignment(x) for x in _split_top(s))
            s = values
        if isinstance(s, Mapping):
            missing = [d for d in dims if d not in s]
            if missing:
                raise TritonImportError(f"sample {dict(s)} has no value for {', '.join(missing)}")
            out.append(tuple(int(s[d]) for d in dims))
        else:
            out.append(tuple(int(v) for v in s))
    return tuple(out)


def _split_assignment(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not eq:
        raise TritonImportError(f"expected NAME=VALUE, got '{text}'")
    return name.strip(), value.strip()


def make_spec(
    kernel: str,
    signature: str | Sequence[str],
    *,
    grid: str | Sequence[str],
    constexprs: Mapping[str, Any] | None = None,
    outputs: Iterable[str] | None = None,
    require: Iterable[str] = (),
    samples: Iterable[Any] = (),
    divisibility: int = DIVISIBILITY,
    name: str | None = None,
    entry: str | None = None,
) -> KernelSpec:
    args = tuple(parse_signature(signature))
    base = name or kernel.rpartition(":")[2] or "kernel"
    if not re.fullmatch(r"[A-Za-z_][\w]*", base):
        raise TritonImportError(f"'{base}' is not a valid symbol name; pass a name")
    dims: list[str] = []
    for a in args:
        for d in a.shape:
            if isinstance(d, str) and d not in dims:
                dims.append(d)
    return KernelSpec(
        kernel=kernel,
        name=base,
        args=args,
        grid=_grid_exprs(grid),
        constexprs=dict(constexprs or {}),
        outputs=None if outputs is None else tuple(outputs),
        require=tuple(Expr(r) for r in require),
        samples=_samples(samples, dims),
        divisibility=divisibility,
        entry=entry,
    )


# --- compiled variants ---------------------------------------------------------------------

_METADATA_KEYS = (
    "name",
    "num_warps",
    "num_stages",
    "num_ctas",
    "shared",
    "global_scratch_size",
    "profile_scratch_size",
    "tmem_size",
    "maxnreg",
    "launch_cooperative_grid",
    "launch_pdl",
    "ptx_version",
    "triton_version",
    "hash",
)


@dataclass(frozen=True)
class Variant:
    """One compiled kernel: a config under one specialization, with Triton's PTX."""

    name: str  # the export name
    config_index: int
    config: Config
    specialization: str  # "aligned" (assumes `divisible`) or "any"
    divisible: tuple[str, ...]  # scalars assumed to be multiples of the divisibility
    ptx: str  # Triton's PTX, unchanged
    metadata: dict[str, Any]
    fallback: str | None = None  # the export taken when the assumption fails

    @property
    def block_size(self) -> int:
        return 32 * int(self.metadata["num_warps"])

    @property
    def shared(self) -> int:
        return int(self.metadata.get("shared") or 0)

    def to_json(self, ptx_path: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "config_index": self.config_index,
            "config": self.config.to_json(),
            "specialization": self.specialization,
            "divisible": list(self.divisible),
            "fallback": self.fallback,
            "metadata": self.metadata,
        }
        if ptx_path is not None:
            out["ptx"] = ptx_path
        return out

    @staticmethod
    def from_json(data: Mapping[str, Any], ptx: str) -> Variant:
        return Variant(
            name=data["name"],
            config_index=data["config_index"],
            config=Config.from_any(data["config"]),
            specialization=data["specialization"],
            divisible=tuple(data["divisible"]),
            ptx=ptx,
            metadata=dict(data["metadata"]),
            fallback=data.get("fallback"),
        )


def _check_metadata(v: Variant, arch: int) -> str | None:
    """Why IREE cannot launch this variant (None when it can); scratch is the adapter's."""
    md = v.metadata
    if int(md.get("num_ctas") or 1) != 1:
        return f"num_ctas={md['num_ctas']}: IREE launches no thread-block clusters"
    if md.get("launch_cooperative_grid"):
        return "needs a cooperative launch, which IREE does not make"
    if md.get("launch_pdl"):
        return "needs programmatic dependent launch, which IREE does not make"
    if md.get("tmem_size"):
        return "uses tensor memory (sm_100), not available on this target"
    if v.shared > MAX_SHARED.get(arch, MAX_SHARED[80]):
        return f"needs {v.shared} bytes of shared memory; sm_{arch} allows {MAX_SHARED[arch]}"
    return None


# --- the imported kernel for one architecture ------------------------------------------------


@dataclass(frozen=True)
class ImportedKernel:
    """A kernel's compiled variants for one architecture; builds the PTX and the module."""

    spec: KernelSpec
    arch: str
    variants: tuple[Variant, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (config description, reason)
    triton_version: str = TRITON_VERSION
    ptx_version: int = PTX_VERSION

    # -- PTX -----------------------------------------------------------------------------

    def adapted(self) -> list[AdaptedKernel]:
        """Every variant adapted to IREE's ABI (scratch refused or dropped, renamed,
        pointers first)."""
        out = []
        for v in self.variants:
            out.append(
                adapt_kernel(
                    v.ptx,
                    v.name,
                    self.spec.kernel_args,
                    pointers=self.spec.pointers,
                    outputs=self.spec.outputs,
                    global_scratch_size=int(v.metadata.get("global_scratch_size") or 0),
                    profile_scratch_size=int(v.metadata.get("profile_scratch_size") or 0),
                )
            )
            block = out[-1].block_size
            if block is not None and block != (v.block_size, 1, 1):
                raise TritonImportError(
                    f"{v.name}: .reqntid {block} does not match num_warps "
                    f"{v.metadata['num_warps']} (expected {v.block_size} threads)"
                )
        roles = {tuple((p.arg, p.role) for p in k.params) for k in out}
        if len(roles) > 1:
            raise TritonImportError(
                "the configs disagree on which pointers the kernel writes; declare the outputs"
            )
        return out

    def ptx(self) -> str:
        """One PTX module holding every variant's adapted entry."""
        return merge(self.adapted()).text()

    # -- the module ----------------------------------------------------------------------

    def mlir(self, ptx_path: str | None = None) -> str:
        """The `.mlir` module. `ptx_path`: reference the PTX at this path (relative to the
        .mlir) instead of embedding it."""
        return _Module(self, ptx_path).text()

    def write(self, path: str | Path, embed: bool = True) -> list[Path]:
        """Write the module (and, unless `embed`, its PTX beside it as `<stem>.ptx`)."""
        path = Path(path)
        written = []
        ptx_path = None
        if not embed:
            ptx_file = path.with_suffix(".ptx")
            _write_atomic(ptx_file, self.ptx())
            written.append(ptx_file)
            ptx_path = ptx_file.name
        _write_atomic(path, self.mlir(ptx_path))
        written.insert(0, path)
        return written

    # -- bundles -------------------------------------------------------------------------

    def bundle(self) -> dict[str, Any]:
        return {
            "format": BUNDLE_FORMAT,
            "arch": self.arch,
            "triton_version": self.triton_version,
            "ptx_version": self.ptx_version,
            "spec": self.spec.to_json(),
            "variants": [v.to_json() for v in self.variants],
            "skipped": [{"config": c, "reason": r} for c, r in self.skipped],
        }

    def save_bundle(
        self, path: str | Path, raw_dir: str = "raw", compress: bool = True
    ) -> list[Path]:
        """Write the metadata JSON at `path` and each variant's raw Triton PTX under
        `raw_dir` (relative to it; gzip'd unless `compress` is false): enough to rebuild the
        module without triton."""
        path = Path(path)
        data = self.bundle()
        written = []
        for v, entry in zip(self.variants, data["variants"], strict=True):
            rel = f"{raw_dir}/{path.name.removesuffix('.json')}.{v.name}.ptx"
            rel += ".gz" if compress else ""
            (path.parent / raw_dir).mkdir(parents=True, exist_ok=True)
            _write_atomic(path.parent / rel, v.ptx)
            written.append(path.parent / rel)
            entry["ptx"] = rel
        _write_atomic(path, json.dumps(data, indent=1) + "\n")
        return [path, *written]

    @staticmethod
    def load_bundle(path: str | Path) -> ImportedKernel:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise TritonImportError(f"cannot read bundle {path}: {err}") from None
        if data.get("format") != BUNDLE_FORMAT:
            raise TritonImportError(f"{path} is not a {BUNDLE_FORMAT} bundle")
        variants = tuple(
            Variant.from_json(v, _read_text(path.parent / v["ptx"])) for v in data["variants"]
        )
        return ImportedKernel(
            spec=KernelSpec.from_json(data["spec"]),
            arch=data["arch"],
            variants=variants,
            skipped=tuple((s["config"], s["reason"]) for s in data.get("skipped", [])),
            triton_version=data.get("triton_version", TRITON_VERSION),
            ptx_version=data.get("ptx_version", PTX_VERSION),
        )

    @property
    def group_variants(self) -> list[Variant]:
        """The variants the group chooses among (one per config; twins are fallbacks)."""
        fallbacks = {v.fallback for v in self.variants if v.fallback}
        return [v for v in self.variants if v.name not in fallbacks]


class _Module:
    """Writes the `.mlir` text of an `ImportedKernel`."""

    def __init__(self, kernel: ImportedKernel, ptx_path: str | None):
        self.k = kernel
        self.spec = kernel.spec
        self.ptx_path = ptx_path
        self.adapted = kernel.adapted()
        first = self.adapted[0]
        self.inputs = [self.spec.arg(a) for a in first.inputs]
        self.outputs = [self.spec.arg(a) for a in first.outputs]
        self.scalars = [self.spec.arg(a) for a in first.scalars]
        self.dims = self.spec.dims
        for out in self.outputs:
            for d in out.shape:
                if isinstance(d, str) and not any(d in i.shape for i in self.inputs):
                    raise TritonImportError(
                        f"output {out.name}: dimension {d} is not a dimension of any input "
                        "tensor, so the entry function cannot size the result"
                    )

    def exe_name(self) -> str:
        return f"{self.spec.name}_exe"

    def layout(self) -> str:
        bindings = ["#hal.pipeline.binding<storage_buffer, ReadOnly>" for _ in self.inputs] + [
            "#hal.pipeline.binding<storage_buffer>" for _ in self.outputs
        ]
        return (
            f"#hal.pipeline.layout<constants = {len(self.scalars)}, "
            f"bindings = [{', '.join(bindings)}]>"
        )

    def objects(self) -> str:
        if self.ptx_path is not None:
            obj = f'#hal.executable.object<{{path = "{self.ptx_path}"}}>'
        else:
            data = self.k.ptx().encode()
            values = ", ".join(str(b) for b in data)
            obj = f"#hal.executable.object<{{data = dense<[{values}]> : vector<{len(data)}xi8>}}>"
        return (
            '#hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = '
            f"[{obj}]}}>"
        )

    def region_args(self) -> str:
        return ", ".join(["%device: !hal.device", *(f"%{d}: index" for d in self.dims)])

    def count_region(self, v: Variant) -> list[str]:
        ssa = _Ssa(" " * 6, {d: f"%{d}" for d in self.dims})
        values = {**self.spec.constexprs, **v.config.kwargs}
        grid = []
        for g in self.spec.grid:
            expr = g.substitute({k: x for k, x in values.items() if k in g.names()})
            grid.append(ssa.expr(expr))
        while len(grid) < 3:
            grid.append(ssa.const(1))
        return [*ssa.lines, f"{' ' * 6}hal.return {', '.join(grid)} : index, index, index"]

    def condition_region(self, v: Variant) -> list[str]:
        ssa = _Ssa(" " * 6, {d: f"%{d}" for d in self.dims})
        zero, unit = ssa.const(0), ssa.const(self.spec.divisibility)
        oks: list[str] = []
        for name in v.divisible:
            value = ssa.expr(self.spec.arg(name).expr)  # type: ignore[arg-type]
            rem = ssa.op(f"arith.remui {value}, {unit}", "index", "rem")
            ok = ssa.op(f"arith.cmpi eq, {rem}, {zero}", "index", "ok")
            if ok not in oks:
                oks.append(ok)
        result = oks[0]
        for ok in oks[1:]:
            result = ssa.op(f"arith.andi {result}, {ok}", "i1", "ok")
        return [*ssa.lines, f"{' ' * 6}hal.return {result} : i1"]

    def export(self, ordinal: int, v: Variant) -> list[str]:
        cfg = v.config.describe()
        if v.specialization == "aligned":
            note = f"assumes {', '.join(v.divisible)} % {self.spec.divisibility} == 0"
        elif v.divisible:
            note = "no divisibility assumption (fallback)"
        else:
            note = "no run-time assumption"
        lines = [
            f"    // config {v.config_index}: {cfg}; {note}",
            f"    //   {v.block_size} threads, {v.shared} bytes of shared memory",
        ]
        head = (
            f"    hal.executable.export public @{v.name} ordinal({ordinal}) layout({self.layout()})"
        )
        if v.fallback is not None:
            lines.append(f"{head} condition({self.region_args()}) -> i1 {{")
            lines += self.condition_region(v)
            lines.append(
                f"    }} fallback(@{v.fallback}) count({self.region_args()}) -> "
                "(index, index, index) {"
            )
        else:
            lines.append(f"{head} count({self.region_args()}) -> (index, index, index) {{")
        lines += self.count_region(v)
        props = f"workgroup_size = [{v.block_size} : index, 1 : index, 1 : index]"
        if v.shared:
            props += f", workgroup_local_memory = {v.shared} : index"
        lines.append(f"    }} <{{{props}}}>")
        return lines

    def group(self) -> str:
        names = ", ".join(f"@{v.name}" for v in self.k.group_variants)
        attrs = ""
        if self.spec.samples:
            samples = ", ".join("[" + ", ".join(map(str, s)) + "]" for s in self.spec.samples)
            attrs = f" {{workloads = [{samples}]}}"
        return f"    autotune.group @{self.spec.name} variants([{names}]){attrs}"

    def entry(self) -> list[str]:
        ind = " " * 4
        dims_of: dict[str, tuple[Arg, int]] = {}
        for a in self.inputs:
            for axis, d in enumerate(a.shape):
                if isinstance(d, str):
                    dims_of.setdefault(d, (a, axis))
        ssa = _Ssa(ind, {}, reserved=[*(a.name for a in self.inputs), *self.dims])
        taken = {a.name for a in self.inputs}
        clash = taken & set(self.dims)
        if clash:
            raise TritonImportError(
                f"{', '.join(sorted(clash))} names both a dimension and an argument"
            )
        # Dimensions: from the first input that has each; the others must agree.
        for a in self.inputs:
            for axis, d in enumerate(a.shape):
                if not isinstance(d, str):
                    continue
                dim = f"tensor.dim %{a.name}, {ssa.const(axis)} : {a.tensor_type()}"
                first, first_axis = dims_of[d]
                if first is a and first_axis == axis:
                    ssa.define(d, dim)
                    continue
                value = ssa.raw(dim, "d")
                ok = ssa.op(f"arith.cmpi eq, {value}, %{d}", "index", "ok")
                ssa.lines.append(
                    f'{ind}cf.assert {ok}, "{a.name} dimension {axis} must equal {d} '
                    f'({first.name} dimension {first_axis})"'
                )
        for r in self.spec.require:
            values = {k: v for k, v in self.spec.constexprs.items() if k in r.names()}
            per_config = {
                str(
                    r.substitute(
                        {**values, **{k: x for k, x in v.config.kwargs.items() if k in r.names()}}
                    )
                )
                for v in self.k.variants
            }
            if len(per_config) > 1:
                raise TritonImportError(
                    f"requirement '{r.text}' differs between configs "
                    f"({'; '.join(sorted(per_config))}); only requirements common to every "
                    "config are supported"
                )
            expr = Expr(per_config.pop())
            ok = ssa.expr(expr)
            ssa.lines.append(f'{ind}cf.assert {ok}, "requires {expr}"')
        scalars = []
        limit = ssa.const(2**31 - 1)
        checked: set[str] = set()
        for s in self.scalars:
            value = ssa.expr(s.expr)  # type: ignore[arg-type]
            if s.expr.constant() is None and value not in checked:  # type: ignore[union-attr]
                checked.add(value)
                ok = ssa.op(f"arith.cmpi ule, {value}, {limit}", "index", "ok")
                ssa.lines.append(f'{ind}cf.assert {ok}, "{s.expr} must fit in i32 ({s.name})"')
            scalars.append(ssa.raw(f"arith.index_cast {value} : index to i32", s.name + "_"))
        operand_types = [self._typed(a) for a in self.inputs] + ["i32"] * len(self.scalars)
        result_types = [self._typed(a) for a in self.outputs]
        results = ", ".join(result_types)
        if len(result_types) > 1:
            results = f"({results})"
        operands = ", ".join([*(f"%{a.name}" for a in self.inputs), *scalars])
        workload = ", ".join(f"%{d}" for d in self.dims)
        names = ", ".join(f"%{a.name}" for a in self.outputs)
        if len(self.outputs) > 1:
            names = f"%r:{len(self.outputs)}"
            returned = ", ".join(f"%r#{i}" for i in range(len(self.outputs)))
        else:
            returned = names
        signature = ", ".join(f"%{a.name}: {a.tensor_type()}" for a in self.inputs)
        out_types = ", ".join(a.tensor_type() for a in self.outputs)
        lines = [
            f"  // {self.spec.entry_name}({', '.join(a.name for a in self.inputs)}) -> "
            f"{', '.join(a.name for a in self.outputs)}: the tensors of the kernel's pointers.",
            f"  util.func public @{self.spec.entry_name}({signature}) -> "
            f"{out_types if len(self.outputs) == 1 else '(' + out_types + ')'} {{",
            *ssa.lines,
            f"{ind}{names if len(self.outputs) == 1 else names} = flow.dispatch "
            f"@{self.exe_name()}::@{self.spec.name}[{workload}]({operands}) : "
            f"({', '.join(operand_types)}) -> {results}",
            f"{ind}util.return {returned} : {out_types}",
            "  }",
        ]
        return lines

    @staticmethod
    def _typed(a: Arg) -> str:
        dyn = [f"%{d}" for d in a.shape if isinstance(d, str)]
        return a.tensor_type() + (f"{{{', '.join(dyn)}}}" if dyn else "")

    def text(self) -> str:
        spec, k = self.spec, self.k
        header = [
            f"// {spec.name}: Triton kernel {spec.kernel} as an autotune group, for {k.arch}.",
            f"// Generated by `iree-autotune import-triton` (triton {k.triton_version}, PTX ISA "
            f"{k.ptx_version // 10}.{k.ptx_version % 10}); do not edit.",
            f"// Signature: {', '.join(a.spec() for a in spec.args)}",
            f"// Workload: ({', '.join(self.dims)}); grid: "
            f"({', '.join(str(g) for g in spec.grid)})",
        ]
        if spec.constexprs:
            header.append(f"// Constexprs: {spec.constexprs}")
        for cfg, reason in k.skipped:
            header.append(f"// Skipped config ({cfg}): {reason}")
        body = [
            "module {",
            f"  hal.executable.source private @{self.exe_name()} "
            f"<{{objects = {self.objects()}}}> {{",
        ]
        for ordinal, v in enumerate(k.variants):
            body += self.export(ordinal, v)
        body.append(self.group())
        body.append("  }")
        body += self.entry()
        body.append("}")
        return "\n".join(header + body) + "\n"


# --- compiling with triton --------------------------------------------------------------------


def load_kernel(kernel: str | Any) -> tuple[Any, list[Config] | None, str]:
    """(JITFunction, the decorator's configs or None, "module:function") for a kernel spec
    `module:function` or `path/to/file.py:function`, or a kernel object."""
    if not isinstance(kernel, str):
        obj = kernel
        label = f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__name__', '?')}"
    else:
        module_name, colon, attr = kernel.rpartition(":")
        if not colon or not module_name or not attr:
            raise TritonImportError(
                f"kernel '{kernel}': expected module:function or file.py:function"
            )
        _triton()
        try:
            if module_name.endswith(".py") or os.sep in module_name:
                spec = importlib.util.spec_from_file_location(Path(module_name).stem, module_name)
                if spec is None or spec.loader is None:
                    raise ImportError(f"cannot load {module_name}")
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            else:
                module = importlib.import_module(module_name)
        except (ImportError, OSError) as err:
            raise TritonImportError(f"cannot import {module_name}: {err}") from None
        try:
            obj = getattr(module, attr)
        except AttributeError:
            raise TritonImportError(f"{module_name} has no attribute '{attr}'") from None
        label = kernel
    configs = None
    triton = _triton()
    from triton.runtime.autotuner import Autotuner, Heuristics

    while not isinstance(obj, triton.runtime.JITFunction):
        if isinstance(obj, Autotuner):
            if configs is None:
                configs = [Config.from_any(c) for c in obj.configs]
            obj = obj.fn
        elif isinstance(obj, Heuristics):
            raise TritonImportError(
                f"{label} uses @triton.heuristics, whose values depend on the call's arguments; "
                "give those values with --constexpr instead"
            )
        else:
            raise TritonImportError(f"{label} is not a @triton.jit kernel")
    return obj, configs, label


def load_configs(text: str) -> list[Config]:
    """`--configs`: inline JSON, `@file.json`, or `module:NAME` (a list of triton.Config)."""
    text = text.strip()
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text()
        except OSError as err:
            raise TritonImportError(f"cannot read {text[1:]}: {err.strerror}") from None
    if text.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except ValueError as err:
            raise TritonImportError(f"--configs is not valid JSON: {err}") from None
        data = data if isinstance(data, list) else [data]
        return [Config.from_any(c) for c in data]
    module_name, colon, attr = text.rpartition(":")
    if not colon:
        raise TritonImportError("--configs: expected JSON, @file.json or module:NAME")
    _triton()
    try:
        value = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise TritonImportError(f"--configs {text}: {err}") from None
    return [Config.from_any(c) for c in value]


def _compile_one(
    triton,
    fn,
    spec: KernelSpec,
    config: Config,
    arch: int,
    divisible: Sequence[str],
    ptx_version: int = PTX_VERSION,
):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    constexpr_params = {fn.arg_names[i] for i in fn.constexprs}
    constants = {a.name: a.value for a in spec.args if a.kind == "constant"}
    values = {**spec.constexprs, **config.kwargs, **constants}
    missing = sorted(constexpr_params - set(values))
    if missing:
        raise TritonImportError(
            f"constexpr(s) {', '.join(missing)} have no value: give them with --constexpr or in "
            "the configs"
        )
    described = {a.name for a in spec.args}
    unknown = described - set(fn.arg_names)
    if unknown:
        raise TritonImportError(f"the kernel has no argument(s) {', '.join(sorted(unknown))}")
    undescribed = [n for n in fn.arg_names if n not in described and n not in constexpr_params]
    if undescribed:
        raise TritonImportError(
            f"the signature does not describe argument(s) {', '.join(undescribed)}"
        )
    order = [n for n in fn.arg_names if n in described and n not in constants]
    if order != spec.kernel_args:
        raise TritonImportError(
            "list the signature in the kernel's argument order: " + ", ".join(order)
        )
    signature = {}
    for n in fn.arg_names:
        if n in values:
            signature[n] = "constexpr"
        else:
            a = spec.arg(n)
            signature[n] = f"*{a.dtype}" if a.kind == "pointer" else a.dtype
    constexprs = {n: values[n] for n in fn.arg_names if n in values}
    aligned = set(spec.pointers) | set(divisible) | set(spec.statically_divisible())
    attrs = {
        (fn.arg_names.index(n),): [["tt.divisibility", spec.divisibility]]
        for n in fn.arg_names
        if n in aligned and spec.divisibility > 1
    }
    options = {
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
        "num_ctas": config.num_ctas,
        "ptx_version": ptx_version,
    }
    if config.maxnreg is not None:
        options["maxnreg"] = config.maxnreg
    try:
        compiled = triton.compile(
            ASTSource(fn, signature, constexprs, attrs),
            target=GPUTarget("cuda", arch, 32),
            options=options,
        )
    except Exception as err:  # triton raises many kinds (CompilationError, PTXASError, ...)
        lines = [ln for ln in str(err).splitlines() if "error" in ln.lower()] or [str(err)]
        raise TritonImportError(
            f"triton could not compile {fn.__name__} for sm_{arch} ({config.describe()}): "
            + "; ".join(dict.fromkeys(ln.strip() for ln in lines[:4]))
            + (
                f" (the PTX ISA is pinned to {ptx_version // 10}.{ptx_version % 10}; kernels "
                "using newer instructions need a higher ptx_version)"
                if "requires PTX ISA" in str(err)
                else ""
            )
        ) from None
    md = compiled.metadata._asdict()
    metadata = {k: md.get(k) for k in _METADATA_KEYS}
    return compiled.asm["ptx"], metadata


def compile_variants(
    fn, spec: KernelSpec, configs: Sequence[Config], arch: str, ptx_version: int = PTX_VERSION
) -> tuple[tuple[Variant, ...], tuple[tuple[str, str], ...]]:
    """Compile every config for `arch`: a specialized variant (16-divisible integers) and,
    when its PTX differs, a generic twin that the specialized export falls back to."""
    triton = _triton()
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
    try:
        triton.knobs.compilation.disable_line_info = True
    except AttributeError:
        pass
    capability = ARCHS[arch]
    assumed = spec.assumed_divisible()
    variants: list[Variant] = []
    skipped: list[tuple[str, str]] = []
    for i, config in enumerate(configs):
        name = f"{spec.name}_{i}"
        ptx, md = _compile_one(triton, fn, spec, config, capability, assumed, ptx_version)
        variant = Variant(name, i, config, "aligned" if assumed else "any", tuple(assumed), ptx, md)
        twin = None
        if assumed:
            any_ptx, any_md = _compile_one(triton, fn, spec, config, capability, (), ptx_version)
            if any_ptx != ptx:
                twin = Variant(f"{name}_any", i, config, "any", (), any_ptx, any_md)
                variant = replace(variant, fallback=twin.name)
            else:
                variant = replace(variant, specialization="any", divisible=())
        reasons = [r for r in (_check_metadata(v, capability) for v in (variant, twin) if v) if r]
        if reasons:
            skipped.append((config.describe(), reasons[0]))
            print(
                f"warning: {arch}: skipping config {i} ({config.describe()}): {reasons[0]}",
                file=sys.stderr,
            )
            continue
        variants.append(variant)
        if twin is not None:
            variants.append(twin)
    if not variants:
        raise TritonImportError(f"{arch}: no config can run under IREE")
    # Specialized exports first, then their fallbacks (ordinals follow this order).
    ordered = [v for v in variants if v.specialization == "aligned" or not v.name.endswith("_any")]
    ordered += [v for v in variants if v not in ordered]
    return tuple(ordered), tuple(skipped)


def import_triton(
    kernel: str | Any,
    signature: str | Sequence[str],
    *,
    grid: str | Sequence[str],
    configs: Sequence[Any] | str | None = None,
    constexprs: Mapping[str, Any] | None = None,
    archs: Sequence[str] = ("sm_80",),
    outputs: Iterable[str] | None = None,
    require: Iterable[str] = (),
    samples: Iterable[Any] = (),
    divisibility: int = DIVISIBILITY,
    name: str | None = None,
    entry: str | None = None,
    ptx_version: int = PTX_VERSION,
) -> dict[str, ImportedKernel]:
    """Compile a Triton kernel's configs for each arch: {arch: ImportedKernel}.

    `signature`: `name=*fp16[M,K]` (pointer to a tensor of that shape), `name=i32:EXPR`
    (a push constant computed from the dims) or `name=1` (specialized constant) per
    non-constexpr argument, in the kernel's order. `grid`: 1-3 expressions over the dims and
    the config's constexprs. `configs`: triton.Config objects, dicts, or a `--configs`
    string; None takes the kernel's `@triton.autotune` configs. `outputs`: the pointers the
    kernel writes (default: found from its PTX stores). `require`: conditions on the dims
    checked by the entry function. `samples`: workloads for the explicit/init policies.
    `ptx_version`: the PTX ISA to emit (default 8.0, which CUDA 12+ drivers accept).
    """
    for arch in archs:
        if arch not in ARCHS:
            raise TritonImportError(
                f"unsupported arch '{arch}'; expected one of {', '.join(ARCHS)}"
            )
    fn, decorator_configs, label = load_kernel(kernel)
    if isinstance(configs, str):
        configs = load_configs(configs)
    if configs is None:
        if decorator_configs is None:
            raise TritonImportError(
                f"{label} has no @triton.autotune decorator; give its configs (--configs)"
            )
        configs = decorator_configs
    config_list = [Config.from_any(c) for c in configs]
    if not config_list:
        raise TritonImportError("no configs to compile")
    spec = make_spec(
        label,
        signature,
        grid=grid,
        constexprs=constexprs,
        outputs=outputs,
        require=require,
        samples=samples,
        divisibility=divisibility,
        name=name or fn.__name__,
        entry=entry,
    )
    triton = _triton()
    out = {}
    for arch in archs:
        variants, skipped = compile_variants(fn, spec, config_list, arch, ptx_version)
        kernel_for_arch = ImportedKernel(
            spec, arch, variants, skipped, triton.__version__, ptx_version
        )
        kernel_for_arch.adapted()  # refuse scratch / unmappable kernels now
        out[arch] = kernel_for_arch
    return out


# --- files and the command line ---------------------------------------------------------------


def _read_text(path: Path) -> str:
    """A text file, gunzipped when its name ends in .gz."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise TritonImportError(f"cannot read {path}: {err.strerror}") from None
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()


def _write_atomic(path: Path, data: str) -> None:
    """Write whole or not at all (gzip'd, reproducibly, for a .gz name)."""
    payload = gzip.compress(data.encode(), mtime=0) if path.suffix == ".gz" else data
    try:
        write_atomically(str(path), payload)
    except DiagnosticError as err:
        raise TritonImportError(err.message) from None


def output_paths(output: str | Path, archs: Sequence[str]) -> dict[str, Path]:
    """`OUT.mlir` for one arch; `OUT.<arch>.mlir` for each of several."""
    output = Path(output)
    if len(archs) == 1:
        return {archs[0]: output}
    return {a: output.with_name(f"{output.stem}.{a}{output.suffix or '.mlir'}") for a in archs}


def _constexpr_value(text: str) -> tuple[str, Any]:
    name, value = _split_assignment(text)
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value  # a bare string


def cmd_import_triton(args: argparse.Namespace) -> int:
    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    if args.from_bundle:
        kernels = {}
        for path in args.from_bundle:
            k = ImportedKernel.load_bundle(path)
            kernels[k.arch] = k
        archs = list(kernels)
    else:
        if args.kernel is None or args.signature is None or args.grid is None:
            raise TritonImportError("KERNEL, --signature and --grid are required")
        kernels = import_triton(
            args.kernel,
            args.signature,
            grid=args.grid,
            configs=args.configs,
            constexprs=dict(_constexpr_value(c) for c in args.constexpr),
            archs=archs,
            outputs=None if args.outputs is None else _split_top(args.outputs),
            require=args.require,
            samples=args.sample,
            divisibility=args.divisibility,
            name=args.name,
            entry=args.entry,
            ptx_version=args.ptx_version,
        )
    paths = output_paths(args.output, archs)
    for arch, kernel in kernels.items():
        written = kernel.write(paths[arch], embed=not args.ptx_file)
        if args.bundle:
            written += kernel.save_bundle(paths[arch].with_suffix(".json"))
        n = len(kernel.group_variants)
        print(
            f"{arch}: {n} config(s), {len(kernel.variants)} export(s) -> "
            + ", ".join(str(p) for p in written[:2]),
            file=sys.stderr,
        )
    return 0


def add_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `import-triton` on the `iree-autotune` subcommand parsers."""
    p = subparsers.add_parser(
        "import-triton",
        help="compile a Triton kernel's configs to PTX and write an autotune group module",
        description=(
            "Compile each config of a Triton kernel to PTX (no GPU needed), adapt it to "
            "IREE's CUDA ABI and write a .mlir with one export per config, an autotune.group "
            f"and an entry function. Needs triton: {INSTALL_HINT}."
        ),
    )
    p.add_argument(
        "kernel", metavar="KERNEL", nargs="?", help="module:function or file.py:function"
    )
    p.add_argument(
        "--signature",
        metavar="SPEC",
        help="the non-constexpr arguments in order: 'a=*fp16[M,K], n=i32:M*K, stride=1, ...'",
    )
    p.add_argument(
        "--grid", metavar="EXPRS", help="grid over dims and constexprs: 'cdiv(M, BLOCK_M), 1'"
    )
    p.add_argument(
        "--configs",
        metavar="CONFIGS",
        help="JSON list, @file.json or module:NAME (default: the @triton.autotune configs)",
    )
    p.add_argument(
        "--constexpr",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="a constexpr for every config",
    )
    p.add_argument("--arch", default="sm_80", help="sm_80, sm_90 or a comma list (default: sm_80)")
    p.add_argument("-o", "--output", metavar="OUT.mlir", required=True)
    p.add_argument(
        "--outputs", metavar="PTRS", help="pointers the kernel writes (default: from its PTX)"
    )
    p.add_argument(
        "--require", metavar="EXPR", action="append", default=[], help="a precondition on the dims"
    )
    p.add_argument(
        "--sample",
        metavar="M=..,N=..",
        action="append",
        default=[],
        help="a sample workload for tuning",
    )
    p.add_argument(
        "--divisibility",
        type=int,
        default=DIVISIBILITY,
        help="specialize for integers divisible by this (1: no specialization; default 16)",
    )
    p.add_argument(
        "--ptx-version",
        type=int,
        default=PTX_VERSION,
        help=f"PTX ISA to emit, e.g. 80 for 8.0 (default {PTX_VERSION}; drivers must accept it)",
    )
    p.add_argument("--name", help="base name of the exports and group (default: the kernel's)")
    p.add_argument("--entry", help="name of the entry function (default: the base name)")
    p.add_argument(
        "--ptx-file",
        action="store_true",
        help="write OUT.ptx beside OUT.mlir instead of embedding it",
    )
    p.add_argument(
        "--bundle", action="store_true", help="also write OUT.json + raw/ (rebuild without triton)"
    )
    p.add_argument(
        "--from-bundle",
        metavar="BUNDLE.json",
        action="append",
        help="rebuild from a bundle (no triton)",
    )
    p.set_defaults(run=cmd_import_triton)
    return p


__all__ = [
    "Config",
    "ImportedKernel",
    "KernelSpec",
    "TritonImportError",
    "add_command",
    "import_triton",
    "make_spec",
    "parse_signature",
]
