"""One function, one step: no function of the product packages runs past `MOST_LINES`
lines but those listed in `LONGER`, which are to be split; the list only shrinks (a new
long function fails, and so does a listed one that got short without leaving the list)."""

from __future__ import annotations

import ast

from test_imports import PACKAGES, ROOT

MOST_LINES = 80

LONGER: set[str] = set()
"""The product's functions over `MOST_LINES` lines, each to be split into its steps (none
left: a function that grows past the limit fails the test)."""


def long_functions() -> dict[str, int]:
    """`path:name` -> lines, for every function of the product packages over the limit."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MOST_LINES:
                        found[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    return found


def test_no_function_runs_past_the_limit_but_those_listed_to_split():
    found = long_functions()
    assert set(found) - LONGER == set(), {f: found[f] for f in set(found) - LONGER}
    assert LONGER - set(found) == set(), "split already: take them off LONGER"


def test_the_tuning_pipeline_is_phases_of_their_own():
    """`tune_model`'s work is a sequence of named phases (`tuning_pass`), the fallback to
    the stock options a second pass, not one long body calling itself."""
    from autotune_model import tuning_pass

    phases = ("choose_option_set", "choose_thread_count", "analyse", "search_candidates")
    phases += ("build", "guard", "against_stock_build", "check")
    assert all(callable(getattr(tuning_pass, name)) for name in phases)
    tree = ast.parse((ROOT / "autotune_model" / "pipeline.py").read_text())
    tune = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_tune")
    calls = {
        n.func.id
        for n in ast.walk(tune)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert "_tune" not in calls and "tuning_pass" in calls
