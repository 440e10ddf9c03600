"""Test modules whose variants give distinguishable results.

Variant k of a tagged group computes `out = in + (k + 1)`, so the output of a call tells
which variant ran.
"""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"


def _kernel(name: str, tag: float, dynamic: bool, size: int) -> str:
    t = "tensor<?xf32>" if dynamic else f"tensor<{size}xf32>"
    ro = f"!iree_tensor_ext.dispatch.tensor<readonly:{t}>"
    wo = f"!iree_tensor_ext.dispatch.tensor<writeonly:{t}>"
    if dynamic:
        return f"""
      func.func @{name}(%in: {ro}, %n_arg: index, %out: {wo}) {{
        %n = iree_tensor_ext.dispatch.workload.ordinal %n_arg, 0 : index
        %in_t = flow.dispatch.tie_shape %in : {ro}{{%n}}
        %out_t = flow.dispatch.tie_shape %out : {wo}{{%n}}
        %tag = arith.constant {tag:.1f} : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %in_t, offsets = [0], sizes = [%n], strides = [1] : {ro}{{%n}} -> {t}
        %1 = tensor.empty(%n) : {t}
        %2 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%0 : {t}) outs(%1 : {t}) {{
        ^bb0(%a: f32, %o: f32):
          %s = arith.addf %a, %tag : f32
          linalg.yield %s : f32
        }} -> {t}
        iree_tensor_ext.dispatch.tensor.store %2, %out_t, offsets = [0], sizes = [%n], strides = [1] : {t} -> {wo}{{%n}}
        return
      }}"""
    return f"""
      func.func @{name}(%in: {ro}, %out: {wo}) {{
        %tag = arith.constant {tag:.1f} : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [{size}], strides = [1] : {ro} -> {t}
        %1 = tensor.empty() : {t}
        %2 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%0 : {t}) outs(%1 : {t}) {{
        ^bb0(%a: f32, %o: f32):
          %s = arith.addf %a, %tag : f32
          linalg.yield %s : f32
        }} -> {t}
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0], sizes = [{size}], strides = [1] : {t} -> {wo}
        return
      }}"""


def _lenient(group_attrs: str) -> str:
    """Tagged variants differ on purpose: let them pass numeric validation."""
    if "tolerance" in group_attrs:
        return group_attrs
    inner = group_attrs.strip()[1:-1].strip() if group_attrs.strip() else ""
    return "{" + (inner + ", " if inner else "") + "tolerance = 10.0}"


def _exports(names: list[str], dynamic: bool = False) -> str:
    """`flow.executable.export`s of the kernels (workgroups from the slice; a dynamic
    kernel's workload is its length)."""
    args, slice_args = ("%w: index", "%w") if dynamic else ("", "")
    return "\n".join(
        f"""    flow.executable.export public @{n} workgroups({args}) -> (index, index, index) {{
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice({slice_args})
      flow.return %x, %y, %z : index, index, index
    }}"""
        for n in names
    )


def tagged_module(
    variants: int = 3,
    dynamic: bool = False,
    size: int = 16,
    group_attrs: str = "",
    with_group: bool = True,
) -> str:
    """A flow.executable group `@tagged::@add` of `variants` kernels, entry `@run`.

    Static: `@run(tensor<SIZExf32>)`. Dynamic: `@run(tensor<?xf32>)`, the workload is the
    length. `group_attrs` is the group's attribute dictionary text, e.g. `{policy = "static"}`.
    """
    names = [f"v{k}" for k in range(variants)]
    kernels = "".join(_kernel(n, k + 1, dynamic, size) for k, n in enumerate(names))
    group = (
        f"    autotune.group @add variants([{', '.join('@' + n for n in names)}]) "
        + _lenient(group_attrs)
        if with_group
        else ""
    )
    if dynamic:
        entry = """  util.func public @run(%a: tensor<?xf32>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : tensor<?xf32>
    %r = flow.dispatch @tagged::@add[%n](%a, %n) : (tensor<?xf32>{%n}, index) -> tensor<?xf32>{%n}
    util.return %r : tensor<?xf32>
  }"""
    else:
        t = f"tensor<{size}xf32>"
        entry = f"""  util.func public @run(%a: {t}) -> {t} {{
    %r = flow.dispatch @tagged::@add(%a) : ({t}) -> {t}
    util.return %r : {t}
  }}"""
    return (
        "module {\n  flow.executable private @tagged {\n"
        + _exports(names, dynamic)
        + "\n"
        + group
        + "\n    builtin.module {"
        + kernels
        + "\n    }\n  }\n"
        + entry
        + "\n}\n"
    )


def function_group_module(group_attrs: str = "", size: int = 16) -> str:
    """A module-level group `@f` of three `util.func`s, each dispatching one tagged kernel;
    entry `@call_f(tensor<SIZExf32>)`."""
    t = f"tensor<{size}xf32>"
    base = tagged_module(3, False, size, with_group=False)
    funcs = "".join(
        f"""  util.func private @f{k}(%x: {t}) -> {t} {{
    %r = flow.dispatch @tagged::@v{k}(%x) : ({t}) -> {t}
    util.return %r : {t}
  }}
"""
        for k in range(3)
    )
    entry = f"""  autotune.group @f variants([@f0, @f1, @f2]) {_lenient(group_attrs)}
  util.func public @call_f(%a: {t}) -> {t} {{
    %r = util.call @f(%a) : ({t}) -> {t}
    util.return %r : {t}
  }}
"""
    head, _, _ = base.rpartition("  util.func public @run")
    return head + funcs + entry + "}\n"


def matmul_example() -> tuple[str, Path]:
    """The CPU matmul example (3 tile-size variants) and its path."""
    path = EXAMPLES / "matmul_cpu.mlir"
    return path.read_text(), path


def speed_module(factors: tuple[int, ...] = (64, 1, 256), size: int = 65536) -> str:
    """A flow.executable group `@work::@step` whose variant k chains `factors[k]`
    multiply-adds per element: the variants' costs differ by known factors. Entry
    `@step(tensor<SIZExf32>)`."""
    t = f"tensor<{size}xf32>"
    ro = f"!iree_tensor_ext.dispatch.tensor<readonly:{t}>"
    wo = f"!iree_tensor_ext.dispatch.tensor<writeonly:{t}>"
    names = [f"x{f}" for f in factors]
    exports = _exports(names)
    kernels = []
    for name, factor in zip(names, factors, strict=True):
        chain = ["%v0 = arith.addf %a, %shift : f32"]
        for i in range(factor):
            chain.append(f"%m{i} = arith.mulf %v{i}, %scale : f32")
            chain.append(f"%v{i + 1} = arith.addf %m{i}, %shift : f32")
        body = "\n          ".join(chain)
        kernels.append(
            f"""
      func.func @{name}(%in: {ro}, %out: {wo}) {{
        %scale = arith.constant 0.999 : f32
        %shift = arith.constant 0.001 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [{size}], strides = [1] : {ro} -> {t}
        %1 = tensor.empty() : {t}
        %2 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%0 : {t}) outs(%1 : {t}) {{
        ^bb0(%a: f32, %o: f32):
          {body}
          linalg.yield %v{factor} : f32
        }} -> {t}
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0], sizes = [{size}], strides = [1] : {t} -> {wo}
        return
      }}"""
        )
    return f"""module {{
  flow.executable private @work {{
{exports}
    autotune.group @step variants([{", ".join("@" + n for n in names)}])
    builtin.module {{{"".join(kernels)}
    }}
  }}
  util.func public @step(%a: {t}) -> {t} {{
    %r = flow.dispatch @work::@step(%a) : ({t}) -> {t}
    util.return %r : {t}
  }}
}}
"""


def equivalent_module(
    factors: tuple[int, ...] = (16, 1, 4),
    wrong: int | None = 2,
    size: int = 65536,
    group_attrs: str = "",
) -> str:
    """A group `@eq::@f` whose variants compute the same `a * 0.5 + 1` at different costs
    (variant k also runs `factors[k]` multiply-adds whose difference with themselves is
    added: exactly zero), except variant `wrong`, which is the cheapest and adds 1 more.
    Entry `@f(tensor<SIZExf32>)`."""
    t = f"tensor<{size}xf32>"
    ro = f"!iree_tensor_ext.dispatch.tensor<readonly:{t}>"
    wo = f"!iree_tensor_ext.dispatch.tensor<writeonly:{t}>"
    names = [f"k{i}" for i in range(len(factors))]
    exports = _exports(names)
    kernels = []
    for i, (name, factor) in enumerate(zip(names, factors, strict=True)):
        if i == wrong:
            body = "%r = arith.addf %base, %one : f32"
        else:
            chain = ["%t0 = arith.addf %a, %one : f32"]
            for j in range(factor):
                chain.append(f"%m{j} = arith.mulf %t{j}, %scale : f32")
                chain.append(f"%t{j + 1} = arith.addf %m{j}, %half : f32")
            chain.append(f"%zero = arith.subf %t{factor}, %t{factor} : f32")
            chain.append("%r = arith.addf %base, %zero : f32")
            body = "\n          ".join(chain)
        kernels.append(
            f"""
      func.func @{name}(%in: {ro}, %out: {wo}) {{
        %scale = arith.constant 0.999 : f32
        %half = arith.constant 0.5 : f32
        %one = arith.constant 1.0 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [{size}], strides = [1] : {ro} -> {t}
        %1 = tensor.empty() : {t}
        %2 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%0 : {t}) outs(%1 : {t}) {{
        ^bb0(%a: f32, %o: f32):
          %h = arith.mulf %a, %half : f32
          %base = arith.addf %h, %one : f32
          {body}
          linalg.yield %r : f32
        }} -> {t}
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0], sizes = [{size}], strides = [1] : {t} -> {wo}
        return
      }}"""
        )
    return f"""module {{
  flow.executable private @eq {{
{exports}
    autotune.group @f variants([{", ".join("@" + n for n in names)}]) {group_attrs}
    builtin.module {{{"".join(kernels)}
    }}
  }}
  util.func public @f(%a: {t}) -> {t} {{
    %r = flow.dispatch @eq::@f(%a) : ({t}) -> {t}
    util.return %r : {t}
  }}
}}
"""


def faulty_function_group(limit: int = 8, group_attrs: str = "") -> str:
    """A function group `@g` over `tensor<?xf32>` whose variant `@g1` fails (a
    `util.status.check_ok`) for sizes above `limit`; all variants compute `x + 1`.
    Entry `@call_g`."""
    base = tagged_module(1, dynamic=True, with_group=False)
    head, _, _ = base.rpartition("  util.func public @run")
    t = "tensor<?xf32>"

    def variant(name: str, guard: bool) -> str:
        check = (
            f"""    %lim = arith.constant {limit} : index
    %bad = arith.cmpi ugt, %n, %lim : index
    %fail = arith.constant 13 : i32
    %ok = arith.constant 0 : i32
    %s = arith.select %bad, %fail, %ok : i32
    util.status.check_ok %s, "{name} supports sizes up to {limit}"
"""
            if guard
            else ""
        )
        return f"""  util.func private @{name}(%x: {t}) -> {t} {{
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : {t}
{check}    %r = flow.dispatch @tagged::@v0[%n](%x, %n) : ({t}{{%n}}, index) -> {t}{{%n}}
    util.return %r : {t}
  }}
"""

    return (
        head
        + variant("g0", False)
        + variant("g1", True)
        + variant("g2", False)
        + f"""  autotune.group @g variants([@g0, @g1, @g2]) {group_attrs}
  util.func public @call_g(%a: {t}) -> {t} {{
    %r = util.call @g(%a) : ({t}) -> {t}
    util.return %r : {t}
  }}
}}
"""
    )


# A plain function with a scalar argument and no group: `axpy(alpha, x, y) = alpha * x + y`
# on tensor<4xf32>.
AXPY = """util.func public @axpy(%alpha: f32, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %alpha, %a : f32
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  util.return %r : tensor<4xf32>
}
"""


def two_result_module(variants: int = 3, size: int = 1024) -> str:
    """A group `@pair::@both` whose kernels have two results (`in + 1` and `2 * in`, the
    same in every variant), entry `@run(x) = (x + 1) + 2 x`: IREE packs both results
    into one buffer."""
    t = f"tensor<{size}xf32>"
    ro = f"!iree_tensor_ext.dispatch.tensor<readonly:{t}>"
    wo = f"!iree_tensor_ext.dispatch.tensor<writeonly:{t}>"
    names = [f"both{k}" for k in range(variants)]
    maps = ", ".join(["affine_map<(d0) -> (d0)>"] * 3)
    kernels = "".join(
        f"""
      func.func @{name}(%in: {ro}, %out0: {wo}, %out1: {wo}) {{
        %one = arith.constant 1.0 : f32
        %two = arith.constant 2.0 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [{size}], strides = [1] : {ro} -> {t}
        %1 = tensor.empty() : {t}
        %2:2 = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}} ins(%0 : {t}) outs(%1, %1 : {t}, {t}) {{
        ^bb0(%a: f32, %o: f32, %p: f32):
          %s = arith.addf %a, %one : f32
          %m = arith.mulf %a, %two : f32
          linalg.yield %s, %m : f32, f32
        }} -> ({t}, {t})
        iree_tensor_ext.dispatch.tensor.store %2#0, %out0, offsets = [0], sizes = [{size}], strides = [1] : {t} -> {wo}
        iree_tensor_ext.dispatch.tensor.store %2#1, %out1, offsets = [0], sizes = [{size}], strides = [1] : {t} -> {wo}
        return
      }}"""
        for name in names
    )
    return f"""module {{
  flow.executable private @pair {{
{_exports(names)}
    builtin.module {{{kernels}
    }}
    autotune.group @both variants([{", ".join("@" + n for n in names)}])
  }}
  util.func public @run(%x: {t}) -> {t} {{
    %r:2 = flow.dispatch @pair::@both(%x) : ({t}) -> ({t}, {t})
    %s = arith.addf %r#0, %r#1 : {t}
    util.return %s : {t}
  }}
}}
"""


def tagged_chain_module(
    expected: list[int | None],
    variants: int = 3,
    size: int = 16,
    dynamic: bool = False,
    workloads: list[int] | None = None,
) -> str:
    """A chain of `len(expected)` tagged groups `@e<g>::@add` (variant k of group g adds
    `10 ** g * (k + 1)`, so a result tells every group's variant), each naming
    `expected[g]` as its `expected` variant where not None, dispatched in turn by
    `@run(tensor<SIZExf32>)`; `dynamic`: by `@run(tensor<?xf32>)`, each group's workload
    the length, and `workloads` the lengths its group names (what `explicit` tunes)."""
    t = "tensor<?xf32>" if dynamic else f"tensor<{size}xf32>"
    parts = ["module {"]
    for g, want in enumerate(expected):
        names = [f"g{g}_v{k}" for k in range(variants)]
        kernels = "".join(_kernel(n, 10.0**g * (k + 1), dynamic, size) for k, n in enumerate(names))
        named = [] if want is None else [f"expected = @{names[want]}"]
        if workloads:
            named.append(f"workloads = [{', '.join(f'[{n}]' for n in workloads)}]")
        attrs = _lenient(f"{{{', '.join(named)}}}" if named else "")
        parts.append(
            f"  flow.executable private @e{g} {{\n{_exports(names, dynamic)}\n"
            f"    autotune.group @add variants([{', '.join('@' + n for n in names)}]) {attrs}\n"
            f"    builtin.module {{{kernels}\n    }}\n  }}"
        )
    lines = [f"  util.func public @run(%a: {t}) -> {t} {{"]
    if dynamic:
        lines += ["    %c0 = arith.constant 0 : index", f"    %n = tensor.dim %a, %c0 : {t}"]
    value = "%a"
    for g in range(len(expected)):
        if dynamic:
            dispatch = f"@e{g}::@add[%n]({value}, %n) : ({t}{{%n}}, index) -> {t}{{%n}}"
        else:
            dispatch = f"@e{g}::@add({value}) : ({t}) -> {t}"
        lines.append(f"    %r{g} = flow.dispatch {dispatch}")
        value = f"%r{g}"
    lines.append(f"    util.return {value} : {t}\n  }}")
    parts += ["\n".join(lines), "}\n"]
    return "\n".join(parts)
