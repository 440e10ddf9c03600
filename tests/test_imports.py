"""The project's packages import each other without a circle (module-level imports only:
an import inside a function runs when it is called, after every module has loaded)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("autotune_dialect", "lowering", "autotune_runtime", "autotune_model")


def module_files() -> dict[str, Path]:
    """Every module of the project's packages, by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _statements(body: list[ast.stmt]):
    """Module-level statements, including those under `if`/`try`/`with` at module level
    (e.g. `if TYPE_CHECKING:` is skipped: it never runs)."""
    for node in body:
        if isinstance(node, ast.If):
            test = node.test
            if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                yield from _statements(node.orelse)
                continue
            yield from _statements(node.body)
            yield from _statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _statements(block)
            for handler in node.handlers:
                yield from _statements(handler.body)
        elif isinstance(node, ast.With):
            yield from _statements(node.body)
        else:
            yield node


def module_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that `name` imports at module level: `import pkg.x` and
    `from pkg import x` import the module `pkg.x` when there is one (Python finds it even
    while `pkg` is still loading); `from pkg import x` of a name defined in the package
    imports `pkg` itself (its `__init__` must have run)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_text(), str(path)).body):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                module = f"{base}.{alias.name}"
                found.add(module if module in modules else base)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: module_imports(name, path, modules) for name, path in modules.items()}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (circle := visit(target)) is not None:
                return circle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (circle := visit(node)) is not None:
            return circle
    return None


def test_the_walk_sees_the_packages_and_their_imports():
    graph = import_graph()
    assert {"autotune_dialect", "autotune_dialect.ir", "lowering.driver"} <= set(graph)
    assert "autotune_dialect.autotune" in graph["autotune_dialect.ir"]
    assert "autotune_dialect.diagnostics" in graph["lowering.driver"]


def test_the_walk_finds_a_circle_when_there_is_one():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_what_counts_as_an_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    init = tmp_path / "pkg" / "__init__.py"
    init.write_text("from pkg.a import A\nfrom . import b\n")
    a = tmp_path / "pkg" / "a.py"
    a.write_text(
        "import pkg.b as b\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import helper\n"
        "try:\n    from pkg.d import x\nexcept ImportError:\n    pass\n"
        "def f():\n    from pkg import c\n"
    )
    c = tmp_path / "pkg" / "c.py"
    c.write_text("from pkg import b\n")
    modules = {"pkg": init, "pkg.a": a, "pkg.b": a, "pkg.c": c, "pkg.d": c}
    assert module_imports("pkg", init, modules) == {"pkg.a", "pkg.b"}
    # Inside a function or under TYPE_CHECKING: not at load time.
    assert module_imports("pkg.a", a, modules) == {"pkg.b", "pkg.d"}
    assert module_imports("pkg.c", c, modules) == {"pkg.b"}
    # `helper` is no module: that reads the package, whose `__init__` imports `pkg.a`.
    c.write_text("from pkg import b, helper\n")
    assert module_imports("pkg.c", c, modules) == {"pkg", "pkg.b"}


def test_no_import_circle_among_the_project_packages():
    circle = find_circle(import_graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])
