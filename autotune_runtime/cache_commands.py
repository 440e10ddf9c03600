"""`iree-autotune report | cache export | cache import | cache clear`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from autotune_contracts.cache_file import EXPORT_FORMAT, SCHEMA_VERSION, export_problem
from autotune_contracts.errors import DiagnosticError
from autotune_contracts.files import refuse_overwrite, write_atomically
from autotune_runtime.cli_common import cache_path, command, console

# --- report ---------------------------------------------------------------------------------


@command
def cmd_report(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache
    from autotune_runtime.report import panels_from_entries, show_variants, write_plot

    path = cache_path(args)
    refuse_overwrite([("TUNING", args.tuning), ("--cache", path)], [("--plot", args.plot)])
    if args.tuning is not None:
        return args.show_tuning_report(args.tuning, args.plot)
    if not path.exists():
        print(f"no tuning decisions: {path} does not exist" + _no_plot(args))
        return 0
    cache = TuningCache(path)
    try:
        panels = panels_from_entries(cache.entries())
    finally:
        cache.close()
    if not panels:
        print(f"no tuning decisions in {path}" + _no_plot(args))
        return 0
    out = console()
    for panel in panels:
        show_variants(out, panel)
        if panel.tie_text:
            print(panel.tie_text)
    if args.plot:
        try:
            write_plot(panels, args.plot)
        except OSError as err:
            raise DiagnosticError(f"cannot write {args.plot}: {err.strerror or err}") from None
        print(f"plot written to {args.plot}")
    return 0


def _no_plot(args: argparse.Namespace) -> str:
    return " (no plot written)" if args.plot else ""


# --- cache ----------------------------------------------------------------------------------


@command
def cmd_cache_export(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache

    path = cache_path(args)
    refuse_overwrite([("--cache", path)], [("FILE", args.file)])
    if path.exists():
        cache = TuningCache(path)
        try:
            data = cache.export()
        finally:
            cache.close()
    else:
        data = {"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, "decisions": []}
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    count = len(data["decisions"])
    if args.file == "-":
        sys.stdout.write(text)
        print(f"exported {count} decision(s) from {path}", file=sys.stderr)
    else:
        write_atomically(args.file, text)
        print(f"exported {count} decision(s) from {path} to {args.file}")
    return 0


@command
def cmd_cache_import(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache

    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    except OSError as err:
        raise DiagnosticError(f"cannot read {args.file}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise DiagnosticError(f"{args.file} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DiagnosticError(f"{args.file} is not JSON ({err})") from None
    problem = export_problem(data)  # before the cache is opened: a refusal writes nothing
    if problem is not None:
        raise DiagnosticError(f"{args.file}: {problem}")
    path = cache_path(args)
    refuse_overwrite([("FILE", args.file)], [("--cache", path)])
    cache = TuningCache(path)
    try:
        count = cache.import_(data)  # all or nothing
        total = sum(1 for _ in cache.entries())
    except ValueError as err:
        raise DiagnosticError(f"{args.file}: {err}") from None
    finally:
        cache.close()
    print(f"read {count} decision(s) from {args.file} into {path} (now {total} in the cache)")
    return 0


@command
def cmd_cache_clear(args: argparse.Namespace) -> int:
    from autotune_runtime.cache import TuningCache

    path = cache_path(args)
    if not path.exists():
        print(f"removed 0 decisions ({path} does not exist)")
        return 0
    cache = TuningCache(path)
    try:
        count = cache.clear()
    finally:
        cache.close()
    print(f"removed {count} decision(s) from {path}")
    return 0
