"""Decisions of a tuning cache (an export or the cache file) for the `static` policy."""

from __future__ import annotations

import json
from pathlib import Path

from autotune_dialect.diagnostics import DiagnosticError


def load_decisions(path: str | Path | None) -> list[dict]:
    """Decisions from a tuning-cache export (`{"decisions": [...]}`, what `iree-autotune
    cache export` writes) or from a tuning cache file itself (told apart by content), or
    none. Every decision needs `group` and `variant` (names) and a `workload` (integers);
    a malformed one is an error naming the file and the decision."""
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
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise DiagnosticError(f"cannot read tuning cache file {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise DiagnosticError(
            f"tuning cache file {path} is not UTF-8 text (byte {err.start}); expected the JSON "
            "that `iree-autotune cache export` writes"
        ) from None
    except json.JSONDecodeError as err:
        raise DiagnosticError(f"tuning cache file {path} is not JSON ({err})") from None
    decisions = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(decisions, list):
        raise DiagnosticError(f"tuning cache file {path} has no 'decisions' list")
    for index, decision in enumerate(decisions):
        problem = _decision_problem(decision)
        if problem is not None:
            raise DiagnosticError(f"{path}: decision #{index} {problem}")
    return decisions


def _decision_problem(decision: object) -> str | None:
    if not isinstance(decision, dict):
        return "is not an object"
    for key in ("group", "variant"):
        if not isinstance(decision.get(key), str) or not decision[key]:
            return f'has no "{key}" name'
    workload = decision.get("workload")
    if not isinstance(workload, list) or not all(
        isinstance(w, int) and not isinstance(w, bool) for w in workload
    ):
        return 'needs a "workload" list of integers'
    return None
