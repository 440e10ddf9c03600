"""Decisions of a tuning cache (an export or the cache file) for the `static` policy."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

from autotune_contracts.cache_file import (
    NotACacheError,
    export_problem,
    exported,
    is_sqlite_file,
    read_entries,
)
from autotune_contracts.errors import DiagnosticError, SourceLocation
from autotune_contracts.policy import Policy
from autotune_dialect.diagnostics import op_error, op_location
from lowering.groups import Group


def load_decisions(path: str | Path | None) -> list[dict]:
    """Decisions from a tuning-cache export (`{"decisions": [...]}`, what `iree-autotune
    cache export` writes) or from a tuning cache file itself (told apart by content), or
    none. Every decision needs `group` and `variant` (names) and a `workload` (integers);
    a malformed one is an error at its place in the file (`file:line:col`), and so is an
    export of another program (its `format`) or of a newer schema. The decisions of a file
    come as `Decisions`, which knows where each is and is checked against the module
    (`match_decisions`)."""
    if path is None:
        return []
    if is_sqlite_file(Path(path)):
        try:
            return Decisions(exported(read_entries(Path(path)))["decisions"])
        except NotACacheError as err:
            raise DiagnosticError(str(err)) from None
        except sqlite3.Error as err:
            raise DiagnosticError(f"cannot read tuning cache {path} ({err})") from None
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text)
    except OSError as err:
        raise DiagnosticError(f"cannot read tuning cache file {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise DiagnosticError(
            f"tuning cache file {path} is not UTF-8 text (byte {err.start}); expected the JSON "
            "that `iree-autotune cache export` writes"
        ) from None
    except json.JSONDecodeError as err:
        where = SourceLocation(str(path), err.lineno, err.colno)
        raise DiagnosticError(f"not JSON: {err.msg}", where, text) from None
    problem = export_problem(data, format_required=False) if isinstance(data, dict) else None
    if problem is not None:
        raise DiagnosticError(f"tuning cache file {path}: {problem}")
    decisions = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(decisions, list):
        raise DiagnosticError(f"tuning cache file {path} has no 'decisions' list")
    located = Decisions(decisions)
    located.text, located.places = text, decision_places(text, str(path))
    for index, decision in enumerate(located):
        problem = _decision_problem(decision)
        if problem is not None:
            raise DiagnosticError(f"decision #{index} {problem}", located.place(index), text)
    return located


Numbered = list[tuple[int, dict]]
"""Decisions with their index in the file."""


def match_decisions(
    groups: Iterable[Group],
    decisions: list[dict],
    decisions_from: str,
    base_dir: Path | None = None,
    device: str | None = None,
) -> dict[int, list[dict]]:
    """The decisions for each group (by gid) they name (`executable::group`, or `group`
    alone where one group of the module has that name), for the `static` groups' choices.

    The decisions of a file (`Decisions`) are checked against this module: only those
    made for the group's kernels (their `module` digest, where they give one) are used,
    those of one device (`device`: a digest, its first characters or a driver name; needed
    when they are of several), and one per workload key. A decision naming a variant its
    group lacks is refused. Decisions that are not used (a tuning cache holds every
    module's) are listed in a warning, which also names the `static` groups left without
    a decision: those run their first variant, as with no file. A plain list (decisions
    that `tune-model` chose for groups it made) is taken as it is."""
    groups = list(groups)
    if not decisions or all(g.policy != Policy.STATIC for g in groups):
        return {}
    named, unmatched = _named_groups(groups, decisions)
    other_kernels: list[str] = []
    if isinstance(decisions, Decisions):
        by_gid = {g.gid: g for g in groups}
        named, other_kernels = _for_these_kernels(named, by_gid, decisions_from, base_dir)
        named = _of_one_device(named, decisions_from, device)
        _one_per_key(named, by_gid, decisions, decisions_from)
    for gid, found in named.items():
        group = next(g for g in groups if g.gid == gid)
        for index, decision in found:
            if decision["variant"] not in group.variants:
                raise _unknown_variant(group, decisions, decisions_from, index, decision)
    matched = {gid: [d for _, d in found] for gid, found in named.items() if found}
    for message in other_kernels:
        sys.stderr.write(f"warning: {message}\n")
    if unmatched:
        _report_unmatched(groups, unmatched, decisions_from)
    undecided = [
        g.display_name
        for g in groups
        if g.policy == Policy.STATIC and g.op.choice is None and g.gid not in matched
    ]
    if (other_kernels or unmatched) and undecided:
        sys.stderr.write(
            f"warning: {decisions_from} holds no decision for the static group(s) "
            f"{', '.join(sorted(undecided))}, which run their first variant\n"
        )
    return matched


def _named_groups(
    groups: list[Group], decisions: list[dict]
) -> tuple[dict[int, Numbered], list[str]]:
    """The decisions of each group they name, and those that name no single group (each
    described for a message)."""
    by_name: dict[str, list[Group]] = {}
    for group in groups:
        by_name.setdefault(group.display_name, []).append(group)
        if group.container_name is not None:
            by_name.setdefault(group.op.group_name, []).append(group)
    named: dict[int, Numbered] = {}
    unmatched: list[str] = []
    for index, decision in enumerate(decisions):
        name = decision["group"]
        if decision.get("container") and "::" not in name:
            name = f"{decision['container']}::{name}"
        candidates = [g for g in by_name.get(name, []) if g.display_name == name]
        candidates = candidates or by_name.get(name, [])
        if len(candidates) != 1:
            unmatched.append(
                f"#{index} ({decision['group']}"
                + (", which names several groups" if candidates else "")
                + ")"
            )
            continue
        named.setdefault(candidates[0].gid, []).append((index, decision))
    return named, unmatched


def _for_these_kernels(
    named: dict[int, Numbered], groups: dict[int, Group], decisions_from: str, base_dir: Path | None
) -> tuple[dict[int, Numbered], list[str]]:
    """The decisions made for each group's kernels (a `module` digest equal to the
    group's fingerprint, or none given), and those made for other kernels."""
    kept: dict[int, Numbered] = {}
    other: list[str] = []
    for gid, found in named.items():
        digests = {d["module"] for _, d in found if isinstance(d.get("module"), str)}
        mine = groups[gid].fingerprint(base_dir) if digests else ""
        kept[gid] = [(i, d) for i, d in found if d.get("module") in (None, mine)]
        stale = [(i, d) for i, d in found if d.get("module") not in (None, mine)]
        if stale:
            theirs = ", ".join(sorted({d["module"] for _, d in stale}))
            other.append(
                f"the decisions of {decisions_from} for {groups[gid].display_name} were made "
                f"for another module (digest {theirs}, this one is {mine}); not used: "
                + ", ".join(f"#{i}" for i, _ in stale)
            )
    return kept, other


def _device_label(decision: dict) -> str:
    """A device of the decisions, as a message names it: its digest's first characters
    and what it is (`local-task:default (CPU, IREE runtime 3.13.0)`)."""
    digest = str(decision.get("device") or "")[:12] or "(none given)"
    info = decision.get("device_info")
    if isinstance(info, dict) and info.get("driver"):
        return (
            f"{digest} ({info['driver']}:{info.get('name', '?')}, {info.get('arch', '?')}, "
            f"IREE runtime {info.get('runtime_version', '?')})"
        )
    return digest


def _device_matches(decision: dict, device: str) -> bool:
    """Whether `--device` names the device of a decision: its digest, the digest's first
    characters (4 or more), or its driver (`local-task`, `cuda`)."""
    digest = str(decision.get("device") or "")
    info = decision.get("device_info")
    driver = info.get("driver") if isinstance(info, dict) else None
    return (len(device) >= 4 and digest.startswith(device)) or device in (digest, driver)


ALL_DEVICES = "all"
"""`--device all`: keep the decisions of every device; each `static` group then chooses at
load, by asking the device which it is (`lowering.device_table`)."""


def keeps_several_devices(device: str | None) -> bool:
    """Whether `--device` keeps several devices' decisions (`all`, or a list `a,b`)."""
    return device is not None and (device == ALL_DEVICES or "," in device)


def _of_one_device(
    named: dict[int, Numbered], decisions_from: str, device: str | None
) -> dict[int, Numbered]:
    """The decisions of one device: the one `device` names, else the only one there is;
    several devices and no choice, or a choice that names none or several, is an error
    that lists them. `all` keeps every device's, a list (`local-task,vulkan`) those it
    names, each naming one."""
    every = [d for found in named.values() for _, d in found]
    labels = {str(d.get("device") or ""): _device_label(d) for d in every}
    if device == ALL_DEVICES:
        chosen = set(labels)
    elif device is not None:
        chosen = set()
        for name in device.split(","):
            named_devices = {str(d.get("device") or "") for d in every if _device_matches(d, name)}
            if len(named_devices) != 1:
                raise DiagnosticError(
                    f"--device {name!r} names {'several' if named_devices else 'none'} of the "
                    f"devices whose decisions {decisions_from} holds for this module: "
                    + "; ".join(labels[k] for k in sorted(named_devices or labels))
                    + " (give a device's digest, its first characters, or its driver)"
                )
            chosen |= named_devices
    elif len(labels) > 1:
        raise DiagnosticError(
            f"{decisions_from} holds decisions for this module made on {len(labels)} devices: "
            + "; ".join(labels[k] for k in sorted(labels))
            + "; choose one with --device (a digest, its first characters, or a driver), "
            "or keep each device's with --device all (the module then asks the device at load)"
        )
    else:
        chosen = set(labels)
    return {
        gid: [(i, d) for i, d in found if str(d.get("device") or "") in chosen]
        for gid, found in named.items()
    }


def _one_per_key(
    named: dict[int, Numbered], groups: dict[int, Group], decisions: Decisions, decisions_from: str
) -> None:
    """Refuse two decisions of one group at one workload key on one device (which would
    stand is not said), at the second one's place in the file."""
    for gid, found in named.items():
        first: dict[tuple, tuple[int, dict]] = {}
        for index, decision in found:
            key = (str(decision.get("device") or ""), *decision["workload"])
            if key not in first:
                first[key] = (index, decision)
                continue
            earlier, chosen = first[key]
            raise DiagnosticError(
                f"decisions #{earlier} and #{index} of {decisions_from} both decide "
                f"{groups[gid].display_name} at workload {list(key[1:])} (@{chosen['variant']} "
                f"and @{decision['variant']}); keep one",
                decisions.place(index),
                decisions.text or None,
            )


def _unknown_variant(
    group: Group, decisions: list[dict], decisions_from: str, index: int, decision: dict
) -> DiagnosticError:
    """The error for a decision that chooses a variant its group lacks: at the decision in
    a JSON file, else at the group."""
    problem = (
        f"decision #{index} of {decisions_from} chooses "
        f"@{decision['variant']}, which is not a variant of the group ("
        + ", ".join(f"@{v}" for v in group.variants)
        + ")"
    )
    place = decisions.place(index) if isinstance(decisions, Decisions) else None
    if place is None:
        return op_error(group.op, problem)
    group_at = op_location(group.op)
    return DiagnosticError(
        problem + (f"; the group is at {group_at}" if group_at else ""),
        place,
        decisions.text,  # type: ignore[attr-defined]
    )


def _report_unmatched(groups: list[Group], unmatched: list[str], decisions_from: str) -> None:
    """List the decisions that name no single group of the module in a warning (a tuning
    cache holds the decisions of every module tuned with it)."""
    names = ", ".join(sorted(g.display_name for g in groups))
    listed = ", ".join(unmatched[:5]) + (", ..." if len(unmatched) > 5 else "")
    sys.stderr.write(
        f"warning: {len(unmatched)} decision(s) of {decisions_from} name no single "
        f"group of this module and are not used: {listed} (groups: {names})\n"
    )


class Decisions(list):
    """The decisions of a JSON file (`text`), with the place of each in it (`place`)."""

    text: str = ""
    places: list[SourceLocation] = []

    def place(self, index: int) -> SourceLocation | None:
        """Where decision `index` begins in the JSON file, if known."""
        return self.places[index] if index < len(self.places) else None


def decision_places(text: str, filename: str) -> list[SourceLocation]:
    """Where each element of the top-level object's "decisions" list begins in JSON text
    (which `json.loads` read)."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")

    def skip(pos: int, punctuation: str = "") -> int:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if punctuation and text.startswith(punctuation, pos):
            pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
        return pos

    pos = skip(0, "{")
    while pos < len(text) and text[pos] == '"':
        key, pos = decoder.raw_decode(text, pos)
        pos = skip(pos, ":")
        if key != "decisions" or not text.startswith("[", pos):
            _, pos = decoder.raw_decode(text, pos)
            pos = skip(pos, ",")
            continue
        places = []
        pos = skip(pos + 1)
        while pos < len(text) and text[pos] != "]":
            places.append(SourceLocation.from_offset(filename, text, pos))
            _, pos = decoder.raw_decode(text, pos)
            pos = skip(pos, ",")
        return places
    return []


def _decision_problem(decision: object) -> str | None:
    if not isinstance(decision, dict):
        return f"is {_json_kind(decision)}; expected an object"
    for key in ("group", "variant"):
        value = decision.get(key)
        if key not in decision:
            return f'has no "{key}" name'
        if not isinstance(value, str):
            return (
                f'has "{key}": {json.dumps(value)}, {_json_kind(value)}; expected a name (a string)'
            )
        if not value:
            return f'has an empty "{key}" name'
    workload = decision.get("workload")
    if not isinstance(workload, list) or not all(
        isinstance(w, int) and not isinstance(w, bool) for w in workload
    ):
        return 'needs a "workload" list of integers'
    return None


def _json_kind(value: object) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
