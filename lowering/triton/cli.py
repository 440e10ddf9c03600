"""`iree-autotune import-triton`: the command line of the importer."""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autotune_contracts.files import refuse_overwrite
from lowering.triton.bundle import ImportedKernel
from lowering.triton.compile import INSTALL_HINT, import_triton
from lowering.triton.signature import (
    DIVISIBILITY,
    TritonImportError,
    split_assignment,
    split_top,
)
from lowering.triton.variants import PTX_VERSION


def output_paths(output: str | Path, archs: Sequence[str]) -> dict[str, Path]:
    """`OUT.mlir` for one arch; `OUT.<arch>.mlir` for each of several."""
    output = Path(output)
    if len(archs) == 1:
        return {archs[0]: output}
    return {a: output.with_name(f"{output.stem}.{a}{output.suffix or '.mlir'}") for a in archs}


def _constexpr_value(text: str) -> tuple[str, Any]:
    name, value = split_assignment(text)
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value  # a bare string


def _refuse_overwrite(args: argparse.Namespace, paths: dict[str, Path]) -> None:
    """Before any work: no module, PTX file or bundle written over the kernel's source, a
    configs file or a bundle read, or over another output."""
    inputs = [("KERNEL", _source_file(args.kernel)), ("--configs", _source_file(args.configs))]
    inputs += [("--from-bundle", bundle) for bundle in args.from_bundle or []]
    outputs = [("-o", path) for path in paths.values()]
    if args.ptx_file:
        outputs += [("the PTX file of -o", p.with_suffix(".ptx")) for p in paths.values()]
    if args.bundle:
        outputs += [("--bundle", p.with_suffix(".json")) for p in paths.values()]
    refuse_overwrite(inputs, outputs)


def _source_file(text: str | None) -> str | None:
    """The file a `KERNEL` or `--configs` argument reads (`file.py:NAME`, `FILE.json`,
    `@FILE`), None where it names none (a module path, JSON text)."""
    if text is None:
        return None
    text = text.strip()
    if text.startswith("@"):
        return text[1:]
    if text.endswith(".json"):
        return text
    source = text.rpartition(":")[0].strip()
    return source if source.endswith(".py") or "/" in source else None


def cmd_import_triton(args: argparse.Namespace) -> int:
    """Run `import-triton`: compile (or rebuild from bundles) and write one module per arch."""
    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    if args.from_bundle:
        kernels = {}
        for path in args.from_bundle:
            k = ImportedKernel.load_bundle(path)
            if k.arch in kernels:
                raise TritonImportError(f"two bundles for {k.arch}; give one per arch")
            kernels[k.arch] = k
        archs = list(kernels)
        paths = output_paths(args.output, archs)
        _refuse_overwrite(args, paths)
    else:
        if args.kernel is None or args.signature is None or args.grid is None:
            raise TritonImportError("KERNEL, --signature and --grid are required")
        if not archs:
            raise TritonImportError("--arch names no architecture")
        paths = output_paths(args.output, archs)
        _refuse_overwrite(args, paths)
        kernels = import_triton(
            args.kernel,
            args.signature,
            grid=args.grid,
            configs=args.configs,
            constexprs=dict(_constexpr_value(c) for c in args.constexpr),
            archs=archs,
            outputs=None if args.outputs is None else split_top(args.outputs),
            require=args.require,
            samples=args.sample,
            divisibility=args.divisibility,
            name=args.name,
            entry=args.entry,
            ptx_version=args.ptx_version,
        )
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
    _add_kernel_options(p)
    _add_target_options(p)
    _add_workload_options(p)
    _add_ptx_options(p)
    _add_module_options(p)
    p.set_defaults(run=cmd_import_triton)
    return p


def _add_kernel_options(p: argparse.ArgumentParser) -> None:
    """The kernel, its arguments, its grid and the configs to compile."""
    p.add_argument(
        "kernel",
        metavar="KERNEL",
        nargs="?",
        help="module.path:function (found from the current folder) or path/to/file.py:function",
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
        help="a JSON list, FILE.json, module.path:NAME or file.py:NAME (a list of triton.Config "
        "or dicts; default: the kernel's @triton.autotune configs)",
    )
    p.add_argument(
        "--constexpr",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="a constexpr for every config",
    )


def _add_target_options(p: argparse.ArgumentParser) -> None:
    """The architectures to compile for and the module to write."""
    p.add_argument("--arch", default="sm_80", help="sm_80, sm_90 or a comma list (default: sm_80)")
    p.add_argument("-o", "--output", metavar="OUT.mlir", required=True)


def _add_workload_options(p: argparse.ArgumentParser) -> None:
    """What the kernel writes, the dims it accepts and the workloads it is tuned on."""
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


def _add_ptx_options(p: argparse.ArgumentParser) -> None:
    """How Triton specializes the kernel and the PTX ISA it emits."""
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


def _add_module_options(p: argparse.ArgumentParser) -> None:
    """The names in the module, where its PTX goes and the bundles written or read."""
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
