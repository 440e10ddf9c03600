"""The import specification: the signature language, integer expressions and `KernelSpec`.

A signature describes each non-constexpr argument of a Triton kernel, in the kernel's order:
`a_ptr=*fp16[M,K]` (a pointer to a tensor of that shape), `M=i32:M` (a 32-bit push constant
computed from the dimensions) or `stride_ak=1` (a constant, specialized away). Expressions
(scalars, grids, requirements) are a small subset of Python over the dimensions and constexprs.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autotune_contracts.errors import DiagnosticError

DIVISIBILITY = 16
"""Triton's specialization unit: pointers and integers divisible by 16."""

DTYPES = {
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
"""Triton's pointer element types and their MLIR element types."""


class TritonImportError(DiagnosticError):
    """A kernel, signature or config that cannot be imported."""


# --- expressions ------------------------------------------------------------------------

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
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
        """The names the expression uses."""
        return set(_names(self.tree))

    def substitute(self, values: Mapping[str, Any]) -> Expr:
        """The expression with `values` (integers) in place of their names."""
        return Expr(ast.unparse(_substitute(self.tree, values)))

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The value with `env` giving every name (comparisons give 0 or 1)."""
        return _evaluate(self.tree, env, self.text)

    def constant(self) -> int | None:
        """The value when the expression names nothing."""
        return None if self.names() else self.evaluate({})

    def __str__(self) -> str:
        return ast.unparse(self.tree)


def function_name(node: ast.expr) -> str | None:
    """The name of a called function: `cdiv`, or `cdiv` for `triton.cdiv` / `tl.cdiv`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id in ("triton", "tl") else None
    return None


def subscript_name(node: ast.Subscript) -> str | None:
    """`X` for a Triton grid's `META['X']` (None for any other subscript)."""
    key = node.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return None


def _check(node: ast.expr, text: str) -> None:
    ok = True
    if isinstance(node, ast.BinOp):
        ok = type(node.op) in BINOPS
        _check(node.left, text), _check(node.right, text)
    elif isinstance(node, ast.Call):
        ok = function_name(node.func) in _FUNCTIONS and not node.keywords
        ok = ok and (len(node.args) == 2 or function_name(node.func) != "cdiv")
        for a in node.args:
            _check(a, text)
    elif isinstance(node, ast.Compare):
        ok = len(node.ops) == 1 and type(node.ops[0]) in CMPOPS
        _check(node.left, text), _check(node.comparators[0], text)
    elif isinstance(node, ast.BoolOp):
        ok = isinstance(node.op, ast.And)
        for v in node.values:
            _check(v, text)
    elif isinstance(node, ast.Subscript):
        ok = subscript_name(node) is not None
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
        yield subscript_name(node)  # type: ignore[misc]
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
        name = subscript_name(node)
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
            ast.Name(function_name(node.func) or ""),
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
        name = node.id if isinstance(node, ast.Name) else subscript_name(node)
        if name not in env:
            raise TritonImportError(f"'{name}' in '{text}' has no value")
        return int(env[name])  # type: ignore[index]
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, env, text), _evaluate(node.right, env, text)
        op = BINOPS[type(node.op)]
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
        fn = function_name(node.func)
        if fn == "cdiv":
            return -(-args[0] // args[1])
        return min(args) if fn == "min" else max(args)
    if isinstance(node, ast.Compare):
        a, b = _evaluate(node.left, env, text), _evaluate(node.comparators[0], env, text)
        op = CMPOPS[type(node.ops[0])]
        return int(
            {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
        )
    if isinstance(node, ast.BoolOp):
        return int(all(_evaluate(v, env, text) for v in node.values))
    raise TritonImportError(f"cannot evaluate '{text}'")


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
        """The MLIR element type of a pointer's tensor."""
        return DTYPES[self.dtype]

    def tensor_type(self) -> str:
        """`tensor<?x64xf16>` for `[M, 64]`: symbolic dimensions are dynamic."""
        dims = "x".join("?" if isinstance(d, str) else str(d) for d in self.shape)
        return f"tensor<{dims}x{self.element_type}>" if dims else f"tensor<{self.element_type}>"

    def spec(self) -> str:
        """The signature entry that describes this argument."""
        if self.kind == "pointer":
            return f"{self.name}=*{self.dtype}[{','.join(map(str, self.shape))}]"
        if self.kind == "scalar":
            return f"{self.name}={self.dtype}:{self.expr}"
        return f"{self.name}={self.value}"


def split_top(text: str, sep: str = ",") -> list[str]:
    """`text` split at `sep` outside brackets, each part's whitespace collapsed."""
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
    items = split_top(text) if isinstance(text, str) else [" ".join(t.split()) for t in text]
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
            if m.group(1) not in DTYPES:
                raise TritonImportError(
                    f"signature entry '{item}': unsupported element type '{m.group(1)}' "
                    f"(one of {', '.join(DTYPES)})"
                )
            shape: list[str | int] = []
            for d in split_top(m.group(2)):
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
        """The pointer arguments, in kernel order."""
        return [a.name for a in self.args if a.kind == "pointer"]

    @property
    def entry_name(self) -> str:
        return self.entry or self.name

    def arg(self, name: str) -> Arg:
        """The argument called `name`."""
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
        """Scalars whose constant value is a multiple of `divisibility`."""
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
        """The spec as a bundle stores it (`from_json` reads it back)."""
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
        parts = split_top(text)
    else:
        parts = list(grid)
    return tuple(Expr(p) for p in parts)


def _samples(samples: Iterable[Any], dims: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    out = []
    for s in samples:
        if isinstance(s, str):
            s = dict(split_assignment(x) for x in split_top(s))
        if isinstance(s, Mapping):
            missing = [d for d in dims if d not in s]
            if missing:
                raise TritonImportError(f"sample {dict(s)} has no value for {', '.join(missing)}")
            values = [s[d] for d in dims]
        else:
            values = list(s)
        try:
            out.append(tuple(int(v) for v in values))
        except (TypeError, ValueError):
            raise TritonImportError(f"sample {s}: every value must be an integer") from None
    return tuple(out)


def split_assignment(text: str) -> tuple[str, str]:
    """`NAME=VALUE` -> (NAME, VALUE)."""
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
    """A `KernelSpec` from the import's arguments (see `import_triton`)."""
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
