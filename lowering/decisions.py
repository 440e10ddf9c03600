"""Decisions of a tuning cache (an export or the cache file) for the `static` policy."""

from __future__ import annotations

import json
import re
from pathlib import Path

from autotune_contracts.errors import DiagnosticError, SourceLocation


def load_decisions(path: str | Path | None) -> list[dict]:
    """Decisions from a tuning-cache export (`{"decisions": [...]}`, what `iree-autotune
    cache export` writes) or from a tuning cache file itself (told apart by content), or
    none. Every decision needs `group` and `variant` (names) and a `workload` (integers);
    a malformed one is an error at its place in the file (`file:line:col`). Decisions of a
    JSON file come as `Decisions`, which knows where each is."""
    if path is None:
        return []
    from autotune_runtime.cache import NotACacheError, TuningCache, is_sqlite_file

    if is_sqlite_file(Path(path)):
        try:
            cache = TuningCache(path)
        except NotACacheError as err:
            raise DiagnosticError(str(err)) from None
        try:
            return cache.export()["decisions"]
        finally:
            cache.close()
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
