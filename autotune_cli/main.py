"""`iree-autotune`: lower and compile modules with autotune groups.

Errors are printed as `file:line:col: error: message` and exit with status 1; no traceback
reaches the user, and no output file is written for a failed command.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback

from autotune_bridge.ir import parse_module, xdsl_text
from autotune_contracts.errors import INTERRUPTED, DiagnosticError
from autotune_contracts.files import read_source, refuse_overwrite, write_atomically
from autotune_contracts.policy import POLICIES, Policy
from autotune_model.commands import add_command as add_tune_model_command
from autotune_model.spec_command import add_spec_command
from autotune_runtime.commands import add_runtime_commands
from lowering.autotune_to_iree import lower_to_iree
from lowering.compile_options import ARCH_HELP, add_compile_arg_option, add_object_search_option
from lowering.driver import (
    TARGETS,
    check_target,
    compile,
    compile_args_problem,
    object_search_flags,
)
from lowering.target_devices import TargetChoices
from lowering.triton import add_command as add_import_triton_command


def cmd_lower(args: argparse.Namespace) -> int:
    object_search_flags(args.object_search_path)  # a folder that does not exist is refused
    refuse_overwrite([("input", args.input), ("--cache", args.cache)], [("-o", args.output)])
    text = read_source(args.input)
    lowered = lower_to_iree(
        text,
        policy=args.policy,
        cache=args.cache,
        filename=args.input,
        locations=not args.no_locations,
        device=args.device,
        object_search=args.object_search_path,
    )
    _emit(args.output, lowered)
    return 0


def cmd_xdsl(args: argparse.Namespace) -> int:
    refuse_overwrite([("input", args.input)], [("-o", args.output)])
    text = read_source(args.input)
    module = parse_module(text, args.input)
    _emit(args.output, xdsl_text(module, locations=True))
    return 0


def _emit(output: str | None, text: str) -> None:
    if output not in (None, "-"):
        write_atomically(output, text)
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as err:
        # What could not be written goes nowhere, so that exiting does not try again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        raise DiagnosticError(f"cannot write the output: {err.strerror}") from None


def cmd_compile(args: argparse.Namespace) -> int:
    arch = check_target(args.target, args.arch)  # before any work: a wrong --arch lists them
    problem = compile_args_problem(args.target, arch, tuple(args.iree_compile_arg))
    if problem is not None:
        raise DiagnosticError(problem)
    refuse_overwrite([("input", args.input), ("--cache", args.cache)], [("-o", args.output)])
    text = read_source(args.input)
    vmfb = compile(
        text,
        target=args.target,
        arch=args.arch,
        filename=args.input,
        policy=args.policy,
        cache=args.cache,
        device=args.device,
        extra_args=args.iree_compile_arg,
        object_search=args.object_search_path,
    )
    write_atomically(args.output, vmfb)
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 1 on a usage error, like every other error."""

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="iree-autotune",
        description="Run-time selection among kernel variants for IREE.",
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )

    def policy_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--policy",
            choices=POLICIES,
            default=Policy.ONLINE,
            help="policy of groups that name none (default: online)",
        )
        p.add_argument(
            "--cache",
            metavar="FILE",
            help="decisions fixing static choices: a tuning-cache export (JSON) or the cache "
            "file itself",
        )
        p.add_argument(
            "--device",
            metavar="D",
            help="the device whose decisions of --cache to use, where it holds several "
            "devices': a device digest, its first characters, or a driver (local-task); "
            "'all', or several joined by commas, keeps each device's decisions, chosen at "
            "load by asking the device (docs/deploying.md)",
        )

    lower = sub.add_parser("lower", help="lower autotune groups to IREE input IR")
    lower.add_argument("input", metavar="IN.mlir")
    lower.add_argument("-o", "--output", metavar="OUT.mlir", help="output file (default: stdout)")
    lower.add_argument(
        "--no-locations",
        action="store_true",
        help="leave out the loc(...) that name each op's place in the input",
    )
    policy_options(lower)
    add_object_search_option(lower)
    lower.set_defaults(run=cmd_lower, quick_exit=True)

    xdsl = sub.add_parser(
        "xdsl", help="write a module in xDSL's syntax, which the stock xdsl-opt reads"
    )
    xdsl.add_argument("input", metavar="IN.mlir")
    xdsl.add_argument("-o", "--output", metavar="OUT.mlir", help="output file (default: stdout)")
    xdsl.set_defaults(run=cmd_xdsl, quick_exit=True)

    comp = sub.add_parser("compile", help="lower and compile to a .vmfb")
    comp.add_argument("input", metavar="IN.mlir")
    comp.add_argument(
        "--target",
        choices=TargetChoices(TARGETS),
        default="llvm-cpu",
        help="default: llvm-cpu; several joined by commas (llvm-cpu,vulkan) build one module "
        "that runs on the first of their devices the runtime has",
    )
    comp.add_argument("--arch", help=ARCH_HELP)
    comp.add_argument("-o", "--output", metavar="OUT.vmfb", required=True)
    policy_options(comp)
    add_object_search_option(comp)
    add_compile_arg_option(comp)
    comp.set_defaults(run=cmd_compile, quick_exit=True)

    add_runtime_commands(sub, _show_tuning_report)
    add_import_triton_command(sub)
    add_tune_model_command(sub)
    add_spec_command(sub)
    return parser


def _show_tuning_report(path: str, plot: str | None) -> int:
    from autotune_model.report_view import show_report  # loads on use

    return show_report(path, plot)


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser().parse_args(argv))


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command; every failure is a message and a non-zero status."""
    try:
        return args.run(args)
    except DiagnosticError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return INTERRUPTED
    except MemoryError:
        print("error: out of memory", file=sys.stderr)
        return 1
    except Exception:  # noqa: BLE001 - a defect of the project, reported without a traceback
        source = getattr(args, "input", None)
        print(
            internal_error(source if isinstance(source, str) else getattr(args, "module", None)),
            file=sys.stderr,
        )
        return 1


def internal_error(input_path: str | None) -> str:
    """The message for an unexpected failure: what failed, on which input, and where the
    traceback was saved for a bug report (the input itself is never modified)."""
    kind, value, _ = sys.exc_info()
    report = tempfile.NamedTemporaryFile(
        "w", prefix="iree-autotune-crash-", suffix=".txt", delete=False
    )
    with report:
        report.write(f"iree-autotune {' '.join(sys.argv[1:])}\n\n")
        traceback.print_exc(file=report)
    where = f"{input_path}: " if input_path else ""
    name = kind.__name__ if kind is not None else "error"
    summary = (str(value).strip().splitlines() or [""])[0][:200]
    return (
        f"{where}error: internal error ({name}: {summary}); this is a defect of "
        f"iree-autotune, not of the input. Details: {report.name}"
    )


def console_main() -> None:
    """The `iree-autotune` command. Commands that only turn one text into another
    (`lower`, `xdsl`, `compile`) end the process as soon as their output is written: the
    interpreter would otherwise spend seconds freeing the IR of a large module, one object
    at a time, with nothing left to do."""
    args = build_parser().parse_args()
    rc = run_command(args)
    if getattr(args, "quick_exit", False):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    sys.exit(rc)


if __name__ == "__main__":
    console_main()
