# ruff: noqa: E501  (MLIR text: long lines by nature)
"""Generators of benchmark modules (IREE input IR with `autotune.group`s).

These mirror the test generators (`tests/modules.py`) but live here so that the benchmarks
do not depend on the test suite:

- `many_groups_module(groups, variants)`: `groups` flow.executables of `variants` tiny
  elementwise kernels each, one group per executable, all dispatched in a chain by `@run`
  (the lowering-cost case).
- `add_module(size, variants)`: one group of `variants` elementwise adds that compute the
  same result (steady-state overhead).
- `speed_module(factors, size)`: one group whose variants compute the same result at
  costs proportional to `factors` (tuning cost, online cost, memory).

Variants of a group compute the same result (up to rounding): the runtime checks every
variant against the group's reference variant and rejects one that disagrees.
- `matmul_module(sizes, tiles)`: per size n, a group of n x n x n matmuls that differ only
  in their CPU tile sizes (choice quality: which tile wins depends on the size).
- `crossing_module()`: one dynamic function group whose best variant changes twice with the
  length of its input (warm start across sizes).
"""

from __future__ import annotations

_MAP = "affine_map<(d0) -> (d0)>"


def _elementwise_kernel(
    name: str, size: int, body: list[str], result: str, dynamic: bool = False
) -> str:
    """`func.func @name` reading `tensor<SIZExf32>` (`dynamic`: `tensor<?xf32>`, its
    length the dispatch's workload), applying `body` per element (input `%a`, constants
    `%scale`/`%shift`) and storing `result`."""
    t = "tensor<?xf32>" if dynamic else f"tensor<{size}xf32>"
    ro = f"!iree_tensor_ext.dispatch.tensor<readonly:{t}>"
    wo = f"!iree_tensor_ext.dispatch.tensor<writeonly:{t}>"
    ops = "\n          ".join(body)
    if dynamic:
        args = f"%in_arg: {ro}, %n_arg: index, %out_arg: {wo}"
        shapes = f"""
        %n = iree_tensor_ext.dispatch.workload.ordinal %n_arg, 0 : index
        %in = flow.dispatch.tie_shape %in_arg : {ro}{{%n}}
        %out = flow.dispatch.tie_shape %out_arg : {wo}{{%n}}"""
        length, empty, ro_dims, wo_dims = "%n", "tensor.empty(%n)", f"{ro}{{%n}}", f"{wo}{{%n}}"
    else:
        args, shapes = f"%in: {ro}, %out: {wo}", ""
        length, empty, ro_dims, wo_dims = str(size), "tensor.empty()", ro, wo
    return f"""
      func.func @{name}({args}) {{{shapes}
        %scale = arith.constant 0.999 : f32
        %shift = arith.constant 0.001 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [{length}], strides = [1] : {ro_dims} -> {t}
        %1 = {empty} : {t}
        %2 = linalg.generic {{indexing_maps = [{_MAP}, {_MAP}], iterator_types = ["parallel"]}} ins(%0 : {t}) outs(%1 : {t}) {{
        ^bb0(%a: f32, %o: f32):
          {ops}
          linalg.yield {result} : f32
        }} -> {t}
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0], sizes = [{length}], strides = [1] : {t} -> {wo_dims}
        return
      }}"""


def _export(name: str, dynamic: bool = False) -> str:
    args, workload = ("%w: index", "%w") if dynamic else ("", "")
    return f"""    flow.executable.export public @{name} workgroups({args}) -> (index, index, index) {{
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice({workload})
      flow.return %x, %y, %z : index, index, index
    }}"""


def _executable(
    exe: str, group: str | None, kernels: dict[str, str], attrs: str = "", dynamic: bool = False
) -> str:
    """An executable of `kernels`, with a group of them all unless `group` is None."""
    names = list(kernels)
    exports = "\n".join(_export(n, dynamic) for n in names)
    variants = ", ".join("@" + n for n in names)
    attrs = f" {attrs}" if attrs else ""
    grouped = f"    autotune.group @{group} variants([{variants}]){attrs}\n" if group else ""
    return (
        f"  flow.executable private @{exe} {{\n{exports}\n{grouped}"
        f"    builtin.module {{{''.join(kernels.values())}\n    }}\n  }}\n"
    )


def many_groups_module(
    groups: int,
    variants: int = 4,
    size: int = 16,
    per_function: int | None = None,
    grouped: int | None = None,
    expected: dict[int, int] | None = None,
    dynamic: bool = False,
) -> str:
    """`groups` executables `@e<i>`, each with a group `@add` of `variants` kernels
    `@g<i>_v<k>` (each adds its own constant, so no two kernels are alike). The groups are
    dispatched in chains of `per_function` by public functions `@run<j>(tensor<SIZExf32>)`
    (all in one `@run0` when None). Kernel names are unique across executables: IREE links
    all executables into one and rejects public symbols that clash.

    With `grouped`, only the first `grouped` executables have a group: the others are
    plain executables of the same kernels, whose first kernel is dispatched directly (a
    model with a few tuned kernels among many). `expected` names group g's variant
    `expected[g]` as the one it is expected to settle on (the functions' fast path).
    `dynamic`: the functions take `tensor<?xf32>`, and each dispatch's workload (each
    group's key) is its length, read with `tensor.dim`."""
    t = "tensor<?xf32>" if dynamic else f"tensor<{size}xf32>"
    parts = ["module {\n"]
    for g in range(groups):
        kernels = {}
        for k in range(variants):
            tag = float(g * variants + k + 1)
            kernels[f"g{g}_v{k}"] = _elementwise_kernel(
                f"g{g}_v{k}",
                size,
                [f"%tag = arith.constant {tag:.1f} : f32", "%r = arith.addf %a, %tag : f32"],
                "%r",
                dynamic,
            )
        with_group = grouped is None or g < grouped
        attrs = f"{{expected = @g{g}_v{expected[g]}}}" if expected and g in expected else ""
        parts.append(_executable(f"e{g}", "add" if with_group else None, kernels, attrs, dynamic))
    chunk = per_function or groups
    for first in range(0, groups, chunk):
        lines = [f"  util.func public @run{first // chunk}(%a: {t}) -> {t} {{"]
        if dynamic:
            lines += ["    %c0 = arith.constant 0 : index", f"    %n = tensor.dim %a, %c0 : {t}"]
        value = "%a"
        for g in range(first, min(first + chunk, groups)):
            entry = "add" if grouped is None or g < grouped else f"g{g}_v0"
            if dynamic:
                call = f"[%n]({value}, %n) : ({t}{{%n}}, index) -> {t}{{%n}}"
            else:
                call = f"({value}) : ({t}) -> {t}"
            lines.append(f"    %r{g} = flow.dispatch @e{g}::@{entry}{call}")
            value = f"%r{g}"
        lines.append(f"    util.return {value} : {t}")
        lines.append("  }\n")
        parts.append("\n".join(lines))
    parts.append("}\n")
    return "".join(parts)


def add_module(size: int = 4096, variants: int = 3, group_attrs: str = "") -> str:
    """A group `@adds::@add` of `variants` kernels that all compute `in + 1` (variant k as
    `(in + (k + 1)) - k`, exact for the integer-valued inputs the benchmarks use, so that
    the runtime's check against the reference variant passes); entry
    `@run(tensor<SIZExf32>)`."""
    kernels = {
        f"add{k}": _elementwise_kernel(
            f"add{k}",
            size,
            [
                f"%up = arith.constant {k + 1:.1f} : f32",
                f"%down = arith.constant {k:.1f} : f32",
                "%s = arith.addf %a, %up : f32",
                "%r = arith.subf %s, %down : f32",
            ],
            "%r",
        )
        for k in range(variants)
    }
    return group_module(kernels, size, ("adds", "add", "run"), group_attrs)


def speed_module(factors: tuple[int, ...] = (16, 1, 64, 32), size: int = 65536) -> str:
    """A group `@work::@step` whose variant `x<f>` applies `f` rounds of
    `v = (v * 0.999) / 0.999` to every element: all variants compute `in` (up to rounding,
    far inside the runtime's tolerance), at a cost proportional to `f`. Entry
    `@step(tensor<SIZExf32>)`."""
    kernels = {}
    for factor in factors:
        chain = []
        value = "%a"
        for i in range(factor):
            chain.append(f"%m{i} = arith.mulf {value}, %scale : f32")
            chain.append(f"%v{i} = arith.divf %m{i}, %scale : f32")
            value = f"%v{i}"
        kernels[f"x{factor}"] = _elementwise_kernel(f"x{factor}", size, chain, value)
    return group_module(kernels, size)


def group_module(
    kernels: dict[str, str],
    size: int,
    names: tuple[str, str, str] = ("work", "step", "step"),
    group_attrs: str = "",
) -> str:
    """The group of `kernels` (name -> kernel text) on `tensor<SIZExf32>`: `names` are its
    executable, the group and the function that dispatches it."""
    t = f"tensor<{size}xf32>"
    executable, group, function = names
    return (
        "module {\n"
        + _executable(executable, group, kernels, group_attrs)
        + f"  util.func public @{function}(%a: {t}) -> {t} {{\n"
        + f"    %r = flow.dispatch @{executable}::@{group}(%a) : ({t}) -> {t}\n"
        + f"    util.return %r : {t}\n  }}\n}}\n"
    )


# (distribution tile, vector tile, reduction tile) of each matmul variant.
MATMUL_TILES: dict[str, tuple[int, int, int]] = {
    "t8": (8, 4, 4),
    "t16": (16, 4, 4),
    "t32": (32, 8, 4),
    "t64": (64, 16, 8),
}


def _compilation_info(tile: tuple[int, int, int]) -> str:
    dist, vec, red = tile
    return (
        "#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
        f"distribution = [{dist}, {dist}, 0], vector_common_parallel = [{vec}, {vec}, 0], "
        f"vector_reduction = [0, 0, {red}]>, translation_info = #iree_codegen.translation_info<"
        "pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>"
    )


def _matmul_kernel(name: str, n: int, tile: tuple[int, int, int]) -> str:
    t = f"tensor<{n}x{n}xf32>"
    ro = f"!iree_tensor_ext.dispatch.tensor<readonly:{t}>"
    wo = f"!iree_tensor_ext.dispatch.tensor<writeonly:{t}>"
    load = f"offsets = [0, 0], sizes = [{n}, {n}], strides = [1, 1]"
    return f"""
      func.func @{name}(%lhs: {ro}, %rhs: {ro}, %out: {wo}) {{
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, {load} : {ro} -> {t}
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, {load} : {ro} -> {t}
        %init = tensor.empty() : {t}
        %acc = linalg.fill ins(%zero : f32) outs(%init : {t}) -> {t}
        %c = linalg.matmul {{compilation_info = {_compilation_info(tile)}}} ins(%a, %b : {t}, {t}) outs(%acc : {t}) -> {t}
        iree_tensor_ext.dispatch.tensor.store %c, %out, {load} : {t} -> {wo}
        return
      }}"""


def matmul_module(
    sizes: tuple[int, ...] = (32, 64, 96, 128, 160, 192),
    tiles: tuple[str, ...] = tuple(MATMUL_TILES),
) -> str:
    """Per size n: executable `@mm<n>` with a group `@matmul` of one variant per tile
    (`@mm<n>_<tile>`), and entry `@matmul_<n>(lhs, rhs)`."""
    parts = ["module {\n"]
    for n in sizes:
        kernels = {
            f"mm{n}_{tile}": _matmul_kernel(f"mm{n}_{tile}", n, MATMUL_TILES[tile])
            for tile in tiles
        }
        parts.append(_executable(f"mm{n}", "matmul", kernels))
    for n in sizes:
        t = f"tensor<{n}x{n}xf32>"
        parts.append(
            f"  util.func public @matmul_{n}(%a: {t}, %b: {t}) -> {t} {{\n"
            f"    %c = flow.dispatch @mm{n}::@matmul(%a, %b) : ({t}, {t}) -> {t}\n"
            f"    util.return %c : {t}\n  }}\n"
        )
    parts.append("}\n")
    return "".join(parts)


def _rounds(value: str, rounds: int, prefix: str) -> tuple[list[str], str]:
    """`rounds` rounds of `v = (v * 0.999) / 0.999` on `value`: lines and the result."""
    lines = []
    for i in range(rounds):
        lines.append(f"%{prefix}m{i} = arith.mulf {value}, %scale : f32")
        lines.append(f"%{prefix}d{i} = arith.divf %{prefix}m{i}, %scale : f32")
        value = f"%{prefix}d{i}"
    return lines, value


def _crossing_variant(name: str, fixed: int, per_element: int, fixed_rounds: int = 8) -> str:
    """`util.func @name(tensor<?xf32>)`: `per_element` rounds on every element, plus a fixed
    cost (a reduction of `fixed` elements, each `fixed_rounds` rounds from the first input
    element and its index) whose sum is added times zero: the result is the input (up to
    rounding) whatever the variant."""
    t = "tensor<?xf32>"
    lines = [
        f"  util.func private @{name}(%x: {t}) -> {t} {{",
        "    %c0 = arith.constant 0 : index",
        "    %scale = arith.constant 0.999 : f32",
        "    %zero = arith.constant 0.0 : f32",
        f"    %n = tensor.dim %x, %c0 : {t}",
        f"    %e = tensor.empty(%n) : {t}",
    ]
    if fixed:
        body, last = _rounds("%b", fixed_rounds, "f")
        k = f"tensor<{fixed}xf32>"
        lines += [
            f"    %head = tensor.extract_slice %x[0] [1] [1] : {t} to tensor<1xf32>",
            f"    %fe = tensor.empty() : {k}",
            "    %se = tensor.empty() : tensor<f32>",
            "    %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>",
            f'    %fx = linalg.generic {{indexing_maps = [affine_map<(d0) -> (0)>, {_MAP}], iterator_types = ["parallel"]}} ins(%head : tensor<1xf32>) outs(%fe : {k}) {{',
            "    ^bb0(%a: f32, %o: f32):",
            "      %i = linalg.index 0 : index",
            "      %ii = arith.index_cast %i : index to i32",
            "      %if = arith.sitofp %ii : i32 to f32",
            "      %b = arith.addf %a, %if : f32",
            *[f"      {line}" for line in body],
            f"      linalg.yield {last} : f32",
            f"    }} -> {k}",
            f'    %s = linalg.generic {{indexing_maps = [{_MAP}, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}} ins(%fx : {k}) outs(%s0 : tensor<f32>) {{',
            "    ^bb0(%a: f32, %acc: f32):",
            "      %r = arith.addf %a, %acc : f32",
            "      linalg.yield %r : f32",
            "    } -> tensor<f32>",
        ]
    else:
        lines += [
            "    %se = tensor.empty() : tensor<f32>",
            "    %s = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>",
        ]
    body, last = _rounds("%a", per_element, "p")
    lines += [
        f'    %r = linalg.generic {{indexing_maps = [{_MAP}, affine_map<(d0) -> ()>, {_MAP}], iterator_types = ["parallel"]}} ins(%x, %s : {t}, tensor<f32>) outs(%e : {t}) {{',
        "    ^bb0(%a: f32, %sv: f32, %o: f32):",
        *[f"      {line}" for line in body],
        "      %nothing = arith.mulf %sv, %zero : f32",
        f"      %out = arith.addf {last}, %nothing : f32",
        "      linalg.yield %out : f32",
        f"    }} -> {t}",
        f"    util.return %r : {t}",
        "  }",
    ]
    return "\n".join(lines)


# name: (fixed elements, rounds per element). `a` is the fastest for small sizes, `b` in
# between, `c` for large ones (on a 2-core x86: about 6k and 45k elements).
CROSSING_VARIANTS: dict[str, tuple[int, int]] = {"a": (0, 24), "b": (8192, 8), "c": (32768, 2)}


def crossing_module(group_attrs: str = "", variants: dict | None = None) -> str:
    """A function group `@f` over `tensor<?xf32>` whose variants cost `fixed + rounds * n`
    in different proportions, so that the best variant changes with the length n (twice
    for `CROSSING_VARIANTS`). Entry `@run(tensor<?xf32>)`; the workload key is (n,)."""
    variants = variants or CROSSING_VARIANTS
    t = "tensor<?xf32>"
    names = ", ".join("@" + n for n in variants)
    parts = ["module {"]
    parts += [_crossing_variant(name, *spec) for name, spec in variants.items()]
    parts.append(f"  autotune.group @f variants([{names}]) {group_attrs}".rstrip())
    parts.append(
        f"  util.func public @run(%x: {t}) -> {t} {{\n"
        f"    %r = util.call @f(%x) : ({t}) -> {t}\n"
        f"    util.return %r : {t}\n  }}"
    )
    parts.append("}\n")
    return "\n".join(parts)
