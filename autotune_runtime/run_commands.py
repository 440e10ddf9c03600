"""`iree-autotune run | tune`: call a function with tuning active, run `__autotune`."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

from autotune_contracts import interface
from autotune_contracts.errors import INTERRUPTED, DiagnosticError
from autotune_contracts.files import refuse_overwrite, write_atomically
from autotune_contracts.policy import Policy
from autotune_contracts.workloads import Key
from autotune_runtime.cli_common import (
    cache_path,
    command,
    console,
    load_module,
)
from autotune_runtime.key_state import GroupInfo
from autotune_runtime.report import workload_text
from autotune_runtime.tuner import Tuner
from autotune_runtime.values import (
    Input,
    InputError,
    ValueType,
    check_arguments,
    format_value,
    one_line,
    parse_input,
    signature,
)

# --- run ------------------------------------------------------------------------------------


@command
def cmd_run(args: argparse.Namespace) -> int:
    if args.repeat < 1:
        raise DiagnosticError(f"--repeat must be at least 1, got {args.repeat}")
    inputs = []
    for spec in args.input:
        try:
            inputs.append(Input(spec, parse_input(spec)))
        except InputError as err:
            raise DiagnosticError(f"--input {spec!r}: {err}") from None
    module = load_module(args)
    try:
        name = _function_name(module, args)
        for spec in args.set:
            _set_variant(module, spec)
        types = signature(module.module, name)
        call_args = check_arguments(name, inputs, None if types is None else types[0])
        function = module.function(name)
        times: list[int] = []
        digests: list[str] = []
        try:
            for _ in range(args.repeat):
                start = time.perf_counter_ns()
                try:
                    results = function(*call_args)
                except (ValueError, RuntimeError) as err:
                    raise DiagnosticError(f"calling @{name} failed: {one_line(err)}") from None
                times.append(time.perf_counter_ns() - start)
                if args.repeat > 1:
                    digests.append(_digest(results))
        except KeyboardInterrupt:
            return interrupted(module, tuned_here(module))
        print(f"EXEC @{name}")
        _print_results(results, types[1] if types is not None else [])
        if args.repeat > 1:
            differ = sum(d != digests[-1] for d in digests)
            if differ:
                print(
                    f"note: {differ} of the {args.repeat} calls returned other results than "
                    "the last (shown above)"
                )
            print(timing_summary(times))
        _print_group_summary(module)
    finally:
        module.close()
    return 0


def _function_name(module, args: argparse.Namespace) -> str:
    public = [n for n in module.function_names if not n.startswith("__")]
    name = args.function
    if name is None:
        if len(public) != 1:
            raise DiagnosticError(
                "--function is required; the module exports: " + (", ".join(public) or "none")
            )
        return public[0]
    if name not in module.function_names:
        raise DiagnosticError(
            f"no function '{name}' in {args.module}; it exports: " + (", ".join(public) or "none")
        )
    return name


def _set_variant(module, spec: str) -> None:
    """`--set GROUP=VARIANT`: an explicit group's choice, through its setter."""
    group_name, sep, variant = spec.partition("=")
    group_name, variant = group_name.strip(), variant.strip()
    settable = [g for g in module.groups.values() if g.setter is not None]
    names = ", ".join(g.qualified_name for g in settable) or "none"
    if not sep or not group_name or not variant:
        raise DiagnosticError(f"--set {spec!r}: expected GROUP=VARIANT (explicit groups: {names})")
    found = [g for g in module.groups.values() if group_name in (g.qualified_name, g.name)]
    if len(found) != 1:
        what = "no group" if not found else "more than one group"
        raise DiagnosticError(
            f"--set {spec!r}: {what} named {group_name} (explicit groups: {names})"
        )
    (group,) = found
    if group.setter is None:
        raise DiagnosticError(
            f"--set {spec!r}: group {group.qualified_name} has the {group.policy} policy; only "
            f"groups with the explicit policy can be set (explicit groups: {names})"
        )
    choice: int | str = int(variant) if variant.lstrip("-").isdigit() else variant
    try:
        module.function(group.setter)(choice)
    except ValueError as err:
        raise DiagnosticError(f"--set {spec!r}: {err}") from None


def _digest(results) -> str:
    """A digest of one call's results (to tell calls that returned other values)."""
    digest = hashlib.sha256()
    for value in results if isinstance(results, tuple) else (results,):
        if isinstance(value, np.ndarray):
            digest.update(f"{value.dtype}{value.shape}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        else:
            digest.update(repr(value).encode())
    return digest.hexdigest()


def _print_results(results, declared: list[ValueType]) -> None:
    if results is None:
        results = ()
    elif not isinstance(results, tuple):
        results = (results,)
    for i, result in enumerate(results):
        value_type = declared[i] if i < len(declared) else None
        if isinstance(result, dict):  # a getter's choice per workload key
            for key, value in result.items():
                print(
                    f"result[{i}] workload {workload_text(key)}: {format_value(value, value_type)}"
                )
        else:
            print(f"result[{i}]: {format_value(result, value_type)}")


def timing_summary(times_ns: list[int]) -> str:
    """`timing: N calls, per call (UNIT): min .., median .., mean .., p90 .., max ..`."""
    times = np.asarray(times_ns, dtype=np.float64)
    median = float(np.median(times))
    scale, unit, digits = (
        (1e3, "µs", 1) if median < 1e6 else (1e6, "ms", 2) if median < 1e9 else (1e9, "s", 2)
    )
    parts = [
        ("min", float(times.min())),
        ("median", median),
        ("mean", float(times.mean())),
        ("p90", float(np.percentile(times, 90))),
        ("max", float(times.max())),
    ]
    text = ", ".join(f"{label} {value / scale:.{digits}f}" for label, value in parts)
    return f"timing: {_calls(len(times))}, per call ({unit}): {text}"


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"


def _print_group_summary(module) -> None:
    stats: dict[str, list[dict]] = {}
    for item in module.stats():
        stats.setdefault(item["group"], []).append(item)
    for group in module.groups.values():
        if group.policy == Policy.EXPLICIT and (group.keys or group.workload_arity > 0):
            _print_explicit(module.tuner, group)
            continue
        items = stats.get(group.qualified_name, [])
        if not items:
            print(f"autotune: {group.qualified_name}: not called")
        for item in items:
            where = f"{item['group']} workload {workload_text(item['workload'])}"
            if item["decision"] is None:
                state = f"exploring ({_calls(item['explored_calls'])})"
            elif item["adopted"]:
                state = f"{item['decision']} (from cache: another process decided it first)"
            elif item["from_cache"]:
                state = f"{item['decision']} (from cache)"
            else:
                state = f"{item['decision']} (decided after {_calls(item['explored_calls'])})"
            print(f"autotune: {where}: {state}")


def _print_explicit(tuner: Tuner, group: GroupInfo) -> None:
    """What an explicit group's calls run at each key: a decision (from the cache, tuned),
    a choice set by hand, or the reference (not tuned)."""
    reference = group.variants[group.reference]
    if not group.keys:
        print(
            f"autotune: {group.qualified_name}: {reference}, the reference (no workloads to "
            "tune: dynamic shapes and no `workloads` on the group)"
        )
        return
    for key in group.keys:
        variant, how = tuner.choice(group.gid, key)
        where = f"{group.qualified_name} workload {workload_text(key)}"
        if how == "none":
            elsewhere = decided_on_other_devices(tuner, group, key)
            state = f"{reference}, the reference (not tuned: iree-autotune tune)"
            if elsewhere:
                state = (
                    f"{reference}, the reference (not tuned on this device, "
                    f"{tuner.device.driver if tuner.device else 'unknown'}; the cache holds a "
                    f"decision made on {', '.join(elsewhere)}, which is not used here: "
                    "iree-autotune tune on this device)"
                )
        else:
            source = {"set": "set", "cache": "from cache", "tuned": "tuned"}[how]
            state = f"{group.variants[variant]} ({source})"
        print(f"autotune: {where}: {state}")


def decided_on_other_devices(tuner: Tuner, group: GroupInfo, key: Key) -> list[str]:
    """The devices (driver:name) on which the cache holds a decision for this group's
    kernels at `key`, other than this one: decisions are per device."""
    if tuner.cache is None:
        return []
    here = tuner.cache_key(group.gid, key)
    found = []
    for entry in tuner.cache.entries():
        other = entry.key
        if (other.module, other.group, other.workload) == (here.module, here.group, here.workload):
            if other.device != here.device:
                info = entry.device_info
                found.append(f"{info.get('driver', '?')}:{info.get('name', '?')}")
    return sorted(set(found))


# --- tune -----------------------------------------------------------------------------------


class _TuneTracker:
    """Follows `__autotune` for the progress bar: variants settled (eliminated, or their
    key decided) out of every variant of the keys to tune, and samples taken."""

    def __init__(self, module, todo: list[tuple[int, Key]], progress) -> None:
        self.tuner: Tuner = module.tuner
        self.progress = progress
        self.per_key = dict.fromkeys(todo, (0, 0))
        self.done = self.runs = 0

    def __call__(self, gid: int, key: Key) -> None:
        if (gid, key) not in self.per_key:
            return
        state = self.tuner.states[(gid, key)]
        if state.decision is not None:
            done = len(state.variants)
        else:
            done = sum(v.eliminated for v in state.variants)
        runs = sum(v.runs for v in state.variants)
        old_done, old_runs = self.per_key[(gid, key)]
        self.per_key[(gid, key)] = (done, runs)
        self.done += done - old_done
        self.runs += runs - old_runs
        self.progress.update(self.done, f"{self.runs} samples")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def keys_to_tune(module) -> list[tuple[int, Key]]:
    """(group, key) of the explicit groups that `__autotune` still has to measure."""
    todo = []
    for gid, group in module.groups.items():
        if group.policy == Policy.EXPLICIT:
            for key in group.keys:
                state = module.tuner.states.get((gid, key))
                if state is None or state.decision is None:
                    todo.append((gid, key))
    return todo


@command
def cmd_tune(args: argparse.Namespace) -> int:
    from autotune_runtime.report import panels_from_stats, show_decisions

    refuse_overwrite(
        [("MODULE", args.module), ("--cache", cache_path(args))], [("--export", args.export)]
    )
    module = load_module(args)
    try:
        if module.tune_function is None:
            what = "groups tune online as they run" if module.groups else "it has no groups"
            raise DiagnosticError(
                f"{args.module} has no {interface.TUNE_FUNCTION} entry point (no group with the "
                f"explicit policy; {what})"
            )
        todo = keys_to_tune(module)
        start = time.perf_counter()
        try:
            _tune_with_progress(module, todo)
        except KeyboardInterrupt:
            return interrupted(module, todo)
        elapsed = time.perf_counter() - start
        panels = panels_from_stats(module.stats())
        cache = module.cache
        stored = cache is not None and cache.persistent
        where = f"; decisions stored in {cache.path}" if stored else "; decisions not stored"
        if cache is not None and not stored:
            where += " (kept for this process only: see the warning)"
        cached = len(panels) - len(todo)
        if not todo and panels:
            print(
                f"nothing to tune: the {len(panels)} group/workload key(s) were decided "
                f"before, from the tuning cache{f' {cache.path}' if stored else ''}"
            )
        else:
            print(
                f"tuned {len(todo)} group/workload key(s) in {elapsed:.2f} s"
                + (f" ({cached} more decided before, from the cache)" if cached > 0 else "")
                + where
            )
        if panels:
            show_decisions(console(), panels)
        for panel in panels:
            if panel.tie_text:
                print(f"{panel.short_title}: {panel.tie_text}")
        if args.export is not None and cache is not None:
            _export(cache, args.export)
        adopted = [s for s in module.stats() if s["adopted"]]
        if adopted:
            print(
                f"note: another process committed {_plural(len(adopted), 'decision')} to the "
                "tuning cache first while this one tuned; those stand (source: cache): "
                + ", ".join(f"{s['group']} {workload_text(s['workload'])}" for s in adopted)
            )
    finally:
        module.close()
    return 0


def tuned_here(module) -> list[tuple[int, Key]]:
    """The (group, key)s that this process explored: decided by its own measurements or
    still exploring (`run`'s online and init groups)."""
    return [
        gid_key
        for gid_key, state in module.tuner.states.items()
        if not state.from_cache and (state.decision is not None or state.explored_calls)
    ]


def interrupted(module, keys: list[tuple[int, Key]]) -> int:
    """After Ctrl-C: one line on what became of `keys` (those the command tuned or was
    to tune), and the exit status. A key whose tuning was not finished has nothing
    stored; decisions committed before the interrupt stay in the cache."""
    states = module.tuner.states
    done = [k for k in keys if k in states and states[k].decision is not None]
    unfinished = [k for k in keys if k not in done]
    cache = module.cache
    line = "error: interrupted"
    if unfinished:
        line += f"; nothing was stored for {_key_list(module, unfinished)} (not finished)"
    if done:
        verb = "is" if len(done) == 1 else "are"
        finished = f"{_plural(len(done), 'decision')} finished before the interrupt"
        names = _key_list(module, done)
        if cache is not None and cache.persistent:
            line += f"; the {finished} {verb} kept in {cache.path} ({names})"
        else:
            line += f"; the {finished} {verb} not stored: the cache cannot be written ({names})"
    print(line, file=sys.stderr)
    return INTERRUPTED


def _key_list(module, keys: list[tuple[int, Key]], shown: int = 3) -> str:
    """`group [key], ...`: the first `shown`, then how many more."""
    names = [f"{module.groups[gid].qualified_name} {workload_text(key)}" for gid, key in keys]
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _tune_with_progress(module, todo: list[tuple[int, Key]]) -> None:
    """`module.tune()`, with a progress bar of the keys `todo` on standard error (cut off
    by an interrupt, which leaves no line)."""
    from autotune_runtime.progress import TerminalProgress

    with TerminalProgress() as progress:
        if todo:
            groups = len({gid for gid, _ in todo})
            variants = sum(len(module.groups[gid].variants) for gid, _ in todo)
            progress.phase(
                f"tuning {_plural(groups, 'group')}, {_plural(len(todo), 'workload key')} "
                f"({_plural(variants, 'variant')})",
                variants,
            )
            module.tuner.observer = _TuneTracker(module, todo, progress)
        try:
            module.tune()
        except (ValueError, RuntimeError) as err:
            raise DiagnosticError(f"tuning failed: {one_line(err)}") from None
        finally:
            module.tuner.observer = None


def _export(cache, file: str) -> None:
    """`tune --export`: every decision of the cache, those kept in memory included."""
    data = cache.export()
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    if file == "-":
        sys.stdout.write(text)
    else:
        write_atomically(file, text)
        print(f"exported {len(data['decisions'])} decision(s) to {file}")
