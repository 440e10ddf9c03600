"""Compiling a Triton kernel's configs to PTX with triton (no GPU): `import_triton`.

Each config is compiled by `triton.compile(ASTSource(...), target=GPUTarget("cuda", 80, 32))`
with the PTX ISA pinned and no line info, twice when the kernel has non-constant integer
arguments: assuming each is a multiple of 16 (Triton's specialization), and assuming nothing.
Only this module needs triton, imported when a kernel is compiled.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lowering.triton.bundle import ImportedKernel
from lowering.triton.loader import Reference, load, locate, parse_reference
from lowering.triton.signature import DIVISIBILITY, KernelSpec, TritonImportError, make_spec
from lowering.triton.variants import (
    ARCHS,
    METADATA_KEYS,
    PTX_VERSION,
    TRITON_VERSION,
    Config,
    Variant,
    launch_problem,
)

INSTALL_HINT = (
    f"install iree-autotune[triton] (pip install 'iree-autotune[triton]', triton=={TRITON_VERSION})"
)


def require_triton():
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


def _find(text: str, what: str) -> Reference:
    """The reference `module.path:NAME` or `file.py:NAME`, checked to exist (no triton)."""
    ref = parse_reference(text, what)
    locate(ref)
    return ref


def _load(ref: Reference) -> Any:
    """The object `ref` names; triton first, which the module imports."""
    require_triton()
    return load(ref)


def load_kernel(kernel: str | Any) -> tuple[Any, list[Config] | None, str]:
    """(JITFunction, the decorator's configs or None, label) for a kernel named
    `module.path:function` or `path/to/file.py:function`, or for a kernel object."""
    if isinstance(kernel, str):
        obj, label = _load(_find(kernel, "kernel")), kernel
    else:
        obj = kernel
        label = f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__name__', '?')}"
    configs = None
    triton = require_triton()
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
    """`--configs`: a JSON list (or one object), a JSON file (`configs.json` or
    `@configs.json`), or a list of `triton.Config`s or dicts named `module.path:NAME` or
    `path/to/file.py:NAME`."""
    found = _find_configs(text)
    return found if isinstance(found, list) else _configs_of(_load(found), found)


def _find_configs(text: str) -> list[Config] | Reference:
    """JSON configs, read now, or the reference to a list of configs, found but not run."""
    text = text.strip()
    path = text[1:] if text.startswith("@") else text if text.endswith(".json") else None
    if path is not None:
        try:
            text = Path(path).read_text()
        except OSError as err:
            raise TritonImportError(f"--configs: cannot read {path}: {err.strerror}") from None
    if path is None and not text.startswith(("[", "{")):
        if ":" not in text:
            raise TritonImportError(
                f"--configs '{text}': expected a JSON list, FILE.json, module.path:NAME or "
                "path/to/file.py:NAME"
            )
        return _find(text, "--configs")
    try:
        data = json.loads(text)
    except ValueError as err:
        raise TritonImportError(
            f"--configs: {path or 'the text'} is not valid JSON: {err}"
        ) from None
    return [Config.from_any(c) for c in (data if isinstance(data, list) else [data])]


def _configs_of(value: Any, ref: Reference) -> list[Config]:
    if not isinstance(value, list | tuple):
        raise TritonImportError(
            f"--configs {ref.text}: expected a list of configs, found {type(value).__name__}"
        )
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
        "enable_fp_fusion": True,  # Triton's default to 3.9, which the shipped PTX uses
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
    metadata = {k: md.get(k) for k in METADATA_KEYS}
    return compiled.asm["ptx"], metadata


def compile_variants(
    fn, spec: KernelSpec, configs: Sequence[Config], arch: str, ptx_version: int = PTX_VERSION
) -> tuple[tuple[Variant, ...], tuple[tuple[str, str], ...]]:
    """Compile every config for `arch`: a specialized variant (16-divisible integers) and,
    when its PTX differs, a generic twin that the specialized export falls back to."""
    triton = require_triton()
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
        reasons = [r for r in (launch_problem(v, capability) for v in (variant, twin) if v) if r]
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
    options = dict(
        grid=grid,
        constexprs=constexprs,
        outputs=outputs,
        require=require,
        samples=samples,
        divisibility=divisibility,
        entry=entry,
    )
    # Bad arguments are reported before anything is imported, with or without triton.
    if isinstance(kernel, str):
        _find(kernel, "kernel")
        make_spec(kernel, signature, name=name, **options)
    found = _find_configs(configs) if isinstance(configs, str) else configs
    fn, decorator_configs, label = load_kernel(kernel)
    configs = _configs_of(_load(found), found) if isinstance(found, Reference) else found
    if configs is None:
        if decorator_configs is None:
            raise TritonImportError(
                f"{label} has no @triton.autotune decorator; give its configs (--configs)"
            )
        configs = decorator_configs
    config_list = [Config.from_any(c) for c in configs]
    if not config_list:
        raise TritonImportError("no configs to compile")
    spec = make_spec(label, signature, name=name or fn.__name__, **options)
    triton = require_triton()
    out = {}
    for arch in archs:
        variants, skipped = compile_variants(fn, spec, config_list, arch, ptx_version)
        kernel_for_arch = ImportedKernel(
            spec, arch, variants, skipped, triton.__version__, ptx_version
        )
        kernel_for_arch.adapted()  # refuse scratch / unmappable kernels now
        out[arch] = kernel_for_arch
    return out
