"""Decisions of a tuning cache (an export or the cache file) for the `static` policy."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

from autotune_contracts.cache_file import NotACacheError, exported, is_sqlite_file, read_entries
from autotune_contracts.errors import DiagnosticError, SourceLocation
from autotune_contracts.policy import Policy
from autotune_dialect.diagnostics import op_error, op_location
from lowering.groups import Group


def load_decisions(path: str | Path | None) -> list[dict]:
    """Decisions from a tuning-cache export (`{"decisions": [...]}`, what `iree-autotune
    cache export` writes) or from a tuning cache file itself (told apart by content), or
    none. Every decision needs `group` and `variant` (names) and a `workload` (integers);
    a malformed one is an error at its place in the file (`file:line:col`). Decisions of a
    JSON file come as `Decisions`, which knows where each is."""
    if path is None:
        return []
    if is_sqlite_file(Path(path)):
        try:
            return exported(read_entries(Path(path)))["decisions"]
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


def match_decisions(
    groups: Iterable[Group], decisions: list[dict], decisions_from: str
) -> dict[int, list[dict]]:
    """The decisions for each group (by gid) they name (`executable::group`, or `group`
    alone where one group of the module has that name), for the `static` groups' choices.
    A decision naming a variant its group lacks is refused; decisions naming no group of
    the module are refused when none names one (the file is for another module), else
    listed."""
    groups = list(groups)
    matched: dict[int, list[dict]] = {}
    if not decisions or all(g.policy != Policy.STATIC for g in groups):
        return matched
    by_name: dict[str, list[Group]] = {}
    for group in groups:
        by_name.setdefault(group.display_name, []).append(group)
        if group.container_name is not None:
            by_name.setdefault(group.op.group_name, []).append(group)
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
        group = candidates[0]
        if decision["variant"] not in group.variants:
            problem = (
                f"decision #{index} of {decisions_from} chooses "
                f"@{decision['variant']}, which is not a variant of the group ("
                + ", ".join(f"@{v}" for v in group.variants)
                + ")"
            )
            place = getattr(decisions, "place", lambda _: None)(index)
            if place is None:
                raise op_error(group.op, problem)
            group_at = op_location(group.op)
            raise DiagnosticError(
                problem + (f"; the group is at {group_at}" if group_at else ""),
                place,
                decisions.text,  # type: ignore[attr-defined]
            )
        matched.setdefault(group.gid, []).append(decision)
    if not unmatched:
        return matched
    names = ", ".join(sorted(g.display_name for g in groups))
    listed = ", ".join(unmatched[:5]) + (", ..." if len(unmatched) > 5 else "")
    if not matched:
        raise DiagnosticError(
            f"no decision of {decisions_from} names a group of this module: "
            f"decisions {listed}; the module's groups are {names}"
        )
    sys.stderr.write(
        f"warning: {len(unmatched)} decision(s) of {decisions_from} name no single "
        f"group of this module and are not used: {listed} (groups: {names})\n"
    )
    return matched


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
