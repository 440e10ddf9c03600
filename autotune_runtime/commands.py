"""`iree-autotune run | tune | report | cache`: the runtime side of the command line.

`add_runtime_commands(sub, show_tuning_report)` registers the subcommands on the
`iree-autotune` parser (see `autotune_cli/main.py`). Every failure is raised as a
`DiagnosticError`, which the console script prints as one `error: ...` line (exit status
1); a `CacheWarning` is printed as a `warning: ...` line and the command goes on.

The commands live by job: `run_commands.py` (`run`, `tune`), `cache_commands.py`
(`report`, `cache ...`); what they share is in `cli_common.py`, and the text form of
arguments and results (as `iree-run-module` writes them) in `values.py`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from autotune_runtime.cache_commands import (
    cmd_cache_clear,
    cmd_cache_export,
    cmd_cache_import,
    cmd_report,
)
from autotune_runtime.cli_common import DEFAULT_DEVICE
from autotune_runtime.values import format_value, parse_input

__all__ = ["add_runtime_commands", "format_value", "parse_input"]


# --- registration -----------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    from autotune_runtime.run_commands import cmd_run as run  # the runtime loads on use

    return run(args)


def cmd_tune(args: argparse.Namespace) -> int:
    from autotune_runtime.run_commands import cmd_tune as tune  # the runtime loads on use

    return tune(args)


def add_runtime_commands(sub, show_tuning_report: Callable[[str, str | None], int]) -> None:
    """Add `run`, `tune`, `report` and `cache` to the `iree-autotune` subcommands;
    `report TUNED.tune.json` calls `show_tuning_report(path, plot)` (the model tuner's, a
    layer above the runtime)."""
    _add_run_command(sub)
    _add_tune_command(sub)
    _add_report_command(sub, show_tuning_report)
    _add_cache_command(sub)


def _add_cache_option(p: argparse.ArgumentParser) -> None:
    """`--cache PATH`: the tuning cache a command reads or writes."""
    p.add_argument(
        "--cache",
        metavar="PATH",
        help="tuning cache file (default: $IREE_AUTOTUNE_CACHE, else "
        "$XDG_CACHE_HOME/iree-autotune/tuning.sqlite3)",
    )


def _add_module_options(p: argparse.ArgumentParser) -> None:
    """The compiled module, the device it runs on and its tuning cache (`run`, `tune`)."""
    p.add_argument("module", metavar="MODULE.vmfb")
    p.add_argument(
        "--device", default=DEFAULT_DEVICE, help=f"IREE device (default: {DEFAULT_DEVICE})"
    )
    _add_cache_option(p)


def _add_run_command(sub) -> None:
    """`run MODULE.vmfb`: the function to call, its arguments, the calls and pinned variants."""
    run = sub.add_parser("run", help="call a function of a compiled module, with tuning")
    _add_module_options(run)
    run.add_argument(
        "--function", metavar="NAME", help="function to call (optional if there is only one)"
    )
    run.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="SPEC",
        help="an argument, as iree-run-module takes it: 2x3xf32=1 2 3 4 5 6, 4xf32=0, "
        "f32=1.5, i32=3, @file.npy (repeat for each argument)",
    )
    run.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="call the function N times; the last call's results print once, with the "
        "calls' timing (default 1)",
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="GROUP=VARIANT",
        help="run VARIANT (a name or an index) for every workload of the explicit group GROUP "
        "(repeat for several groups)",
    )
    run.set_defaults(run=cmd_run)


def _add_tune_command(sub) -> None:
    """`tune MODULE.vmfb [--export FILE.json]`."""
    tune = sub.add_parser("tune", help="run a module's __autotune entry point and show decisions")
    _add_module_options(tune)
    tune.add_argument(
        "--export",
        metavar="FILE.json",
        help="also write the cache's decisions, this run's included, as `cache export` does "
        "(they are kept even when the cache cannot be written)",
    )
    tune.set_defaults(run=cmd_tune)


def _add_report_command(sub, show_tuning_report: Callable[[str, str | None], int]) -> None:
    """`report [TUNED.tune.json] [--plot FILE.png]`: the cache's decisions, or a tune-model
    report shown by `show_tuning_report`."""
    report = sub.add_parser(
        "report",
        help="per-variant timings of the decisions in the cache, or a tune-model report",
    )
    report.add_argument(
        "tuning", nargs="?", metavar="TUNED.tune.json", help="a report of tune-model to show"
    )
    _add_cache_option(report)
    report.add_argument("--plot", metavar="FILE.png", help="also write a bar chart")
    report.set_defaults(run=cmd_report, show_tuning_report=show_tuning_report)


def _add_cache_command(sub) -> None:
    """`cache export | import | clear`."""
    cache = sub.add_parser("cache", help="export, import or clear the tuning cache")
    actions = cache.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="write every decision as JSON")
    export.add_argument("file", metavar="FILE.json", help="output file ('-': stdout)")
    _add_cache_option(export)
    export.set_defaults(run=cmd_cache_export)
    import_ = actions.add_parser("import", help="add the decisions of an export")
    import_.add_argument("file", metavar="FILE.json", help="input file ('-': stdin)")
    _add_cache_option(import_)
    import_.set_defaults(run=cmd_cache_import)
    clear = actions.add_parser("clear", help="delete every decision")
    _add_cache_option(clear)
    clear.set_defaults(run=cmd_cache_clear)
