"""`iree-autotune tune-model`: a model in, a tuned module and its report out.

`add_command(sub)` registers the subcommand on the `iree-autotune` parser
(`iree-autotune report TUNED.tune.json` shows a saved report: `report_view.show_report`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.files import atomic_output, read_source, refuse_overwrite
from autotune_contracts.policy import Policy
from autotune_model.base_builds import AUTO, BASES
from lowering.compile_options import ARCH_HELP, add_compile_arg_option, add_object_search_option
from lowering.driver import TARGETS, check_target, compile_args_problem, object_search_flags

if TYPE_CHECKING:  # pragma: no cover
    from autotune_model.tunable import TuneOptions
    from autotune_model.tuning_pass import TunedModel

POLICIES = (Policy.ONLINE.value, Policy.EXPLICIT.value, Policy.STATIC.value)
"""The policies `tune-model` offers (init tunes at load, which a model run does not show)."""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not 1 or more")
    return value


def _shapes(text: str) -> tuple[str, ...]:
    """`--also-at`'s shapes: one per argument, joined by commas."""
    shapes = tuple(s.strip() for s in text.split(","))
    if not all(shapes):
        raise argparse.ArgumentTypeError(f"'{text}' is not shapes joined by commas")
    return shapes


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number >= 0")
    return value


def _fraction(text: str) -> float:
    value = _non_negative(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a share below 1")
    return value


PROJECT_PACKAGES = ("autotune_", "lowering")
"""The packages whose warnings (the compile cache's, the tuning cache's, tuning's) are
printed as one `warning:` line, without Python's source line."""


def _warning_line(original, message, category, filename, lineno, file=None, line=None) -> None:
    """A warning of this project as one `warning: ...` line; others as Python shows them."""
    if category.__module__.startswith(PROJECT_PACKAGES):
        print(f"warning: {message}", file=sys.stderr)
    else:
        original(message, category, filename, lineno, file, line)


def check_output_folders(outputs: Sequence[tuple[str, str]]) -> None:
    """Refuse, before any work, an output (option, path) whose folder does not exist or
    is no folder: it could not be written at the end (no folder is created, as for any
    other command's `-o`)."""
    for option, path in outputs:
        folder = Path(path).parent
        if not folder.is_dir():
            problem = "is not a folder" if folder.exists() else "does not exist"
            raise DiagnosticError(f"cannot write {option} {path}: the folder {folder} {problem}")


def write_outputs(outputs: Sequence[tuple[str, str | bytes]]) -> None:
    """Write every (path, data) or none: each into a temporary file next to it, and the
    temporary files renamed only once all are written."""
    current = ""
    try:
        with contextlib.ExitStack() as stack:
            for current, data in outputs:
                tmp = stack.enter_context(atomic_output(current))
                if isinstance(data, bytes):
                    tmp.write_bytes(data)
                else:
                    tmp.write_text(data, encoding="utf-8")
    except OSError as err:
        raise DiagnosticError(
            f"cannot write {current}: {err.strerror or err}; nothing was written"
        ) from None


def report_path(output: str) -> str:
    """Where the report of a tuned module goes: `tuned.vmfb` -> `tuned.tune.json`."""
    path = Path(output)
    return str(path.with_name(path.stem + ".tune.json"))


def cmd_tune_model(args: argparse.Namespace) -> int:
    """Run `tune-model`: every input, output and option checked before any work, then the
    model tuned and the module, its report (and spec) written together."""
    report = args.report or report_path(args.output)
    text = _checked_input(args, report)
    options = _tune_options(args)
    tuned = _tuned(text, options, args)
    return _write_tuned(args, report, tuned)


# The model tuner's modules are imported by the steps below: every other command of
# `iree-autotune` starts without them.


def _checked_input(args: argparse.Namespace, report: str) -> str:
    """The model's text, once the shapes, the files named and the outputs' folders are
    found fit (`report`: where the report goes)."""
    from autotune_model.measure import parse_shape

    for shape in [*(args.input_shape or []), *(s for at in args.also_at for s in at)]:
        parse_shape(shape)  # refused before any work; its element type is checked later
    for at in args.also_at:
        if len(at) != len(args.input_shape or []):
            raise DiagnosticError(
                f"--also-at {','.join(at)}: {len(at)} shapes, but --input gave "
                f"{len(args.input_shape or [])}: one shape per argument, in the same order"
            )
    outputs = [("-o", args.output), ("--report", report)]
    outputs += [("--spec-out", args.spec_out)] if args.spec_out else []
    refuse_overwrite(
        [("input", args.input), ("--cache", args.cache), ("--spec-in", args.spec_in)],
        [*outputs, ("--compile-cache", args.compile_cache)],
    )
    if args.compile_cache and Path(args.compile_cache).exists():
        if not Path(args.compile_cache).is_dir():
            raise DiagnosticError(f"--compile-cache {args.compile_cache} is a file, not a folder")
    check_output_folders(outputs)
    text = read_source(args.input)
    if args.spec_in:
        read_source(args.spec_in)  # an unreadable spec is refused before any work
    return text


def _tune_options(args: argparse.Namespace) -> TuneOptions:
    """The options of the command line as `tune_model` takes them, refused before any work
    where the compile arguments, `--cache` or the thread count cannot be used."""
    from autotune_model.pipeline import TuneOptions
    from autotune_model.tuning_setup import planned_threads, tuning_device

    compile_args = (*object_search_flags(args.object_search_path), *args.iree_compile_arg)
    problem = compile_args_problem(args.target, check_target(args.target, args.arch), compile_args)
    if problem is not None:
        raise DiagnosticError(problem)  # before any work, rather than failing every build
    options = TuneOptions(
        target=args.target,
        arch=args.arch,
        function=args.function,
        input_shapes=tuple(args.input_shape) if args.input_shape else None,
        also_at=tuple(args.also_at),
        policy=Policy.STATIC if args.freeze or args.also_at else args.policy,
        freeze=args.freeze or bool(args.also_at),
        cache=args.cache,
        top_k=args.top_k,
        candidates=args.candidates,
        budget=args.budget,
        small_share=args.small_share,
        tolerance=args.tolerance,
        time_model=not args.no_timing,
        strict_timing=args.strict_timing,
        base=args.base,
        packing=not args.skip_packing,
        threads=args.threads,
        compile_cache=not args.no_compile_cache,
        compile_cache_folder=args.compile_cache,
        device=args.device,
        spec_in=args.spec_in,
        spec_out=bool(args.spec_out),
        compile_args=compile_args,
    )
    if args.cache and args.also_at:
        raise DiagnosticError("--also-at tunes at each size itself; it takes no --cache")
    if args.cache and not args.freeze:
        raise DiagnosticError("--cache names the decisions to freeze; it needs --freeze")
    planned_threads(options, tuning_device(options))  # refused before any work
    return options


def _tuned(text: str, options: TuneOptions, args: argparse.Namespace) -> TunedModel:
    """The model tuned on the executor of `--ray`/`--jobs`, with its progress shown unless
    `--quiet`, and this project's warnings as one line each."""
    from autotune_model.executors import executor_for
    from autotune_model.pipeline import tune_model
    from autotune_model.progress import TerminalProgress

    executor = executor_for(args.ray, args.jobs)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = functools.partial(_warning_line, warnings.showwarning)
            if args.quiet:
                return tune_model(text, options, filename=args.input, executor=executor, quiet=True)
            with TerminalProgress() as progress:
                return tune_model(
                    text, options, filename=args.input, executor=executor, progress=progress
                )
    finally:
        executor.close()


def _write_tuned(args: argparse.Namespace, report: str, tuned: TunedModel) -> int:
    """Write the module, its report and the spec asked for, all or none, and show the
    report; 1 where `--spec-out` was asked for but no spec could be written."""
    from autotune_model.report_view import print_report

    written: list[tuple[str, str | bytes]] = [(args.output, tuned.vmfb)]
    written.append((report, tuned.report.to_json() + "\n"))
    if args.spec_out and tuned.spec is not None:
        written.append((args.spec_out, tuned.spec))
    write_outputs(written)
    print_report(tuned.report)
    print(f"wrote {' and '.join(path for path, _ in written)}")
    if args.spec_out and tuned.spec is None:
        why = [n for n in tuned.report.notes if n.startswith("no tuning spec written")]
        print(f"error: --spec-out {args.spec_out}: {'; '.join(why)}", file=sys.stderr)
        return 1
    return 0


def add_command(sub) -> None:
    """Register `tune-model` on the `iree-autotune` subcommand parsers."""
    tune = sub.add_parser(
        "tune-model",
        help="generate, benchmark and keep the best variants of every dispatch of a model",
    )
    _add_target_options(tune)
    _add_model_options(tune)
    _add_policy_options(tune)
    _add_search_options(tune)
    _add_build_options(tune)
    _add_job_options(tune)
    _add_file_options(tune)
    _add_timing_options(tune)
    tune.set_defaults(run=cmd_tune_model)


def _add_target_options(tune: argparse.ArgumentParser) -> None:
    """The model, the target it is compiled for, with what, and the device it is timed on."""
    tune.add_argument("input", metavar="MODEL.mlir", help="linalg/tensor or StableHLO input IR")
    tune.add_argument("--target", choices=TARGETS, default="llvm-cpu")
    tune.add_argument("--arch", help=ARCH_HELP)
    add_object_search_option(tune)
    add_compile_arg_option(tune)
    tune.add_argument(
        "--device",
        metavar="URI",
        help="the device to time on, the one the model will run on (default: local-task for "
        "llvm-cpu, cuda for cuda; local-sync times on one thread)",
    )


def add_function_options(parser: argparse.ArgumentParser, input_help: str) -> None:
    """`--function NAME` and `--input SHAPE` (repeated: one per argument)."""
    parser.add_argument("--function", metavar="NAME", help="the model function (if several)")
    parser.add_argument(
        "--input",
        dest="input_shape",
        action="append",
        default=[],
        metavar="SHAPE",
        help=input_help,
    )


def _add_model_options(tune: argparse.ArgumentParser) -> None:
    """The tuned module to write, the function tuned and the shapes it is called with."""
    tune.add_argument("-o", "--output", metavar="OUT.vmfb", required=True)
    add_function_options(
        tune,
        "example shape of an argument, as 40x256xf32 (one per argument; needed when the "
        "model takes dynamic sizes)",
    )
    tune.add_argument(
        "--also-at",
        type=_shapes,
        action="append",
        default=[],
        metavar="SHAPE,SHAPE...",
        help="more sizes to tune a dynamic model at: one shape per argument, as --input gives "
        "them, joined by commas (repeat for more sizes); the module is frozen and runs at "
        "each size the variants that won there",
    )


def _add_policy_options(tune: argparse.ArgumentParser) -> None:
    """How the tuned module chooses among its variants, and the decisions it freezes."""
    tune.add_argument(
        "--policy",
        choices=POLICIES,
        default=Policy.ONLINE,
        help="how the tuned module chooses (default: online, on the device it runs on)",
    )
    tune.add_argument(
        "--freeze",
        action="store_true",
        help="static choices: the decisions of --cache, else the offline winners",
    )
    tune.add_argument("--cache", metavar="FILE", help="tuning cache (or its export) to freeze")


def _add_search_options(tune: argparse.ArgumentParser) -> None:
    """How many candidates are tried and kept, for how long, and how close they must be."""
    tune.add_argument(
        "--top-k", type=_positive, default=2, help="candidates kept per dispatch (default 2)"
    )
    tune.add_argument(
        "--candidates",
        type=_positive,
        default=8,
        help="candidates tried per dispatch besides IREE's own (default 8)",
    )
    tune.add_argument(
        "--budget",
        type=_non_negative,
        default=0.0,
        metavar="SECONDS",
        help="go on searching, one step at a time from each dispatch's best candidate, until "
        "building and timing candidates has taken this long (default 0: the first two rounds "
        "only)",
    )
    tune.add_argument(
        "--small-share",
        type=_fraction,
        default=0.05,
        metavar="FRACTION",
        help="where the model is timed, leave as IREE builds them the smallest dispatches, "
        "whose times alone add up to at most this share of the tuned dispatches' time "
        "(default 0.05; 0: tune every one)",
    )
    tune.add_argument(
        "--tolerance",
        type=_non_negative,
        default=1e-3,
        help="largest difference from IREE's own results, relative (default 1e-3)",
    )


def _add_build_options(tune: argparse.ArgumentParser) -> None:
    """IREE's whole-compilation options, the thread count code is sized for and packing."""
    tune.add_argument(
        "--base",
        choices=[AUTO, *BASES],
        default=AUTO,
        help="IREE's whole-compilation options to build with: the fastest of stock, "
        "data-tiling and data-tiling+ukernels, timed against the stock build (auto, "
        "the default on llvm-cpu where the model is timed), or one of them",
    )
    tune.add_argument(
        "--threads",
        default=AUTO,
        metavar="auto|iree|N",
        help="threads llvm-cpu code generation sizes each dispatch's work for: the "
        "device's, where the model runs faster so (auto, the default where the model is "
        "timed), IREE's default (iree), or N",
    )
    tune.add_argument(
        "--skip-packing",
        action="store_true",
        help="leave a data-tiled build's packs and unpacks as IREE builds them: fewer "
        "candidates to build, less gained (default: tuned like the matmuls they feed)",
    )


def _add_job_options(tune: argparse.ArgumentParser) -> None:
    """Where the build and timing jobs run: a Ray cluster or local worker processes."""
    tune.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="auto|ADDRESS|local",
        help="run the jobs on a Ray cluster (auto: the running one; local: start one here)",
    )
    tune.add_argument("--jobs", type=_positive, help="local worker processes (default: every core)")


def _add_file_options(tune: argparse.ArgumentParser) -> None:
    """The report, the tuning specs written and read, and the folder of built candidates."""
    tune.add_argument("--report", metavar="FILE.json", help="report file (default: OUT.tune.json)")
    tune.add_argument(
        "--spec-out",
        metavar="SPEC.mlir",
        help="also write the frozen configurations as an IREE tuning spec, which the stock "
        "iree-compile applies with --iree-codegen-tuning-spec-path",
    )
    tune.add_argument(
        "--spec-in",
        metavar="SPEC.mlir",
        help="start from an IREE tuning spec: the configurations it gives are the incumbents "
        "the candidates must beat",
    )
    kept = tune.add_mutually_exclusive_group()
    kept.add_argument(
        "--compile-cache",
        metavar="DIR",
        help="folder of built candidates kept by content, reused by later runs (default: "
        "compiled/ next to the tuning cache, ~/.cache/iree-autotune/compiled)",
    )
    kept.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="build every candidate, and keep none",
    )


def _add_timing_options(tune: argparse.ArgumentParser) -> None:
    """The end-to-end timing against the stock build, and the progress shown."""
    tune.add_argument(
        "--no-timing",
        action="store_true",
        help="skip the end-to-end timing against the stock build",
    )
    tune.add_argument(
        "--strict-timing",
        action="store_true",
        help="refuse to write the module when the machine was too unsteady to time it "
        "(over 40%% of the calls held up waiting for a CPU, or the rounds' tuned/stock "
        "ratios spread over 25%%)",
    )
    tune.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress on standard error (the table and the summary are still shown)",
    )
