"""The command-line options that choose how `iree-compile` builds, shared by `lower`,
`compile` and `tune-model`."""

from __future__ import annotations

import argparse

from lowering.driver import DEFAULT_CUDA_ARCH, DEFAULT_ROCM_ARCH

ARCH_HELP = (
    f"CUDA architecture (cuda: {DEFAULT_CUDA_ARCH} default, sm_90, ...), AMD GPU architecture "
    f"(rocm: {DEFAULT_ROCM_ARCH} default, gfx90a, gfx1100, ...) or CPU name (llvm-cpu: host "
    "default)"
)


def add_object_search_option(parser: argparse.ArgumentParser) -> None:
    """`--object-search-path DIR`, repeatable: folders where relative object paths resolve
    after the input's own."""
    parser.add_argument(
        "--object-search-path",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder where relative paths of hal.executable.object files are looked for, "
        "after the input's folder (repeatable; iree-compile's "
        "--iree-hal-executable-object-search-path)",
    )


def add_compile_arg_option(parser: argparse.ArgumentParser) -> None:
    """`--iree-compile-arg=ARG`, repeatable: a flag passed on to every iree-compile run."""
    parser.add_argument(
        "--iree-compile-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="a flag passed on to iree-compile, written with '=' (repeatable): "
        "--iree-compile-arg=--iree-hal-dump-executable-sources-to=DIR",
    )
