"""The project's layers (docs/architecture.md): each module imports only modules of its own
layer or of layers below it, and no module imports itself back through others. Every
import counts, at any depth (inside a function, under `if TYPE_CHECKING:`): one inside a
function runs later, but it is a dependence all the same."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS: list[tuple[str, str]] = [
    ("contracts", "autotune_contracts"),
    ("dialect", "autotune_dialect"),
    ("bridge", "autotune_bridge"),
    ("lowering", "lowering"),
    ("runtime", "autotune_runtime"),
    ("model", "autotune_model"),
    ("cli", "autotune_cli"),
]
"""Bottom first: each layer's name and its package. A module is in the layer of the
package folder it lies in, at any depth."""

LAYER_NAMES = [name for name, _ in LAYERS]

WITHOUT_COMPILER = ("contracts", "runtime")
"""Layers that import neither xDSL nor IREE's compiler: the runtime runs a compiled module
with IREE's runtime alone."""


def package_folders(root: Path = ROOT) -> list[str]:
    """The project's package folders: those the wheel holds (pyproject.toml's hatch
    `packages`, the only ones an editable install exposes)."""
    project = tomllib.loads((root / "pyproject.toml").read_text())
    return list(project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"])


PACKAGES = tuple(package_folders())


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the project's packages, by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for package in package_folders(root):
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def module_layers(root: Path = ROOT) -> dict[str, int]:
    """Each module's layer (its index in `LAYERS`): that of its package folder. A package
    folder with no layer fails, named."""
    rank = {package: index for index, (_, package) in enumerate(LAYERS)}
    undeclared = [f"{p}/" for p in package_folders(root) if p not in rank]
    assert not undeclared, (
        f"package folders in no layer of tests/test_imports.py (LAYERS): {', '.join(undeclared)}"
    )
    return {module: rank[module.partition(".")[0]] for module in module_files(root)}


def _imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a file, at any depth."""
    tree = ast.parse(path.read_text(), str(path))
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def module_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that `name` imports: `import pkg.x` and `from pkg import x`
    import the module `pkg.x` when there is one; `from pkg import x` of a name defined in
    the package imports `pkg` itself."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            module = f"{base}.{alias.name}"
            found.add(module if module in modules else base)
    return {m for m in found if m in modules and m != name}


def external_imports(path: Path) -> set[str]:
    """The absolute module names a file's imports name (`from a import b`: `a`)."""
    names: set[str] = set()
    for node in _imports(path):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif not node.level and node.module:
            names.add(node.module)
    return names


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


def upward_imports(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    """`a (layer) -> b (higher layer)` for each import of a module of a higher layer."""
    return [
        f"{a} ({LAYER_NAMES[layers[a]]}) -> {b} ({LAYER_NAMES[layers[b]]})"
        for a in sorted(graph)
        for b in sorted(graph[a])
        if layers[b] > layers[a]
    ]


def test_the_walk_sees_the_packages_and_their_imports():
    graph = import_graph()
    assert {
        "autotune_dialect",
        "autotune_bridge.ir",
        "lowering.driver",
        "autotune_cli.main",
    } <= set(graph)
    assert "autotune_dialect.autotune" in graph["autotune_bridge.ir"]
    assert "autotune_contracts.errors" in graph["lowering.driver"]
    # An import inside a function counts (`commands.cmd_run` imports `run_commands`).
    assert "autotune_runtime.run_commands" in graph["autotune_runtime.commands"]


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
        "def f():\n    from pkg import c\n"
    )
    c = tmp_path / "pkg" / "c.py"
    c.write_text("from pkg import b\n")
    modules = {"pkg": init, "pkg.a": a, "pkg.b": a, "pkg.c": c}
    assert module_imports("pkg", init, modules) == {"pkg.a", "pkg.b"}
    # Inside a function and under TYPE_CHECKING count too; `helper` is no module, so
    # that import reads the package.
    assert module_imports("pkg.a", a, modules) == {"pkg", "pkg.b", "pkg.c"}
    assert module_imports("pkg.c", c, modules) == {"pkg.b"}


def test_every_module_has_a_layer_and_the_order_is_checked():
    layers = module_layers()  # fails for a package folder of no layer
    assert set(layers) == set(module_files())
    assert layers["autotune_bridge.importer"] > layers["autotune_dialect.verbatim"]
    assert upward_imports({"autotune_contracts.errors": {"lowering.driver"}}, layers) == [
        "autotune_contracts.errors (contracts) -> lowering.driver (lowering)"
    ]


def test_every_layer_is_a_package_folder():
    assert [package for _, package in LAYERS if package not in PACKAGES] == []
    assert all((ROOT / package / "__init__.py").is_file() for package in PACKAGES)


def _project(root: Path, packages: list[str], files: list[str]) -> None:
    """A project at `root`: pyproject.toml listing `packages`, and empty `files`."""
    listed = ", ".join(f'"{p}"' for p in packages)
    (root / "pyproject.toml").write_text(
        f"[tool.hatch.build.targets.wheel]\npackages = [{listed}]\n"
    )
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")


def test_a_new_module_is_in_the_layer_of_its_folder(tmp_path):
    files = ["lowering/__init__.py", "lowering/new_pass.py", "lowering/triton/__init__.py"]
    files += ["lowering/triton/kernel.py", "autotune_dialect/__init__.py"]
    files += ["autotune_dialect/ir.py", "autotune_bridge/__init__.py", "autotune_bridge/x.py"]
    _project(tmp_path, ["autotune_dialect", "autotune_bridge", "lowering"], files)
    assert {m: LAYER_NAMES[rank] for m, rank in module_layers(tmp_path).items()} == {
        "lowering": "lowering",
        "lowering.new_pass": "lowering",
        "lowering.triton": "lowering",
        "lowering.triton.kernel": "lowering",
        "autotune_dialect": "dialect",
        "autotune_dialect.ir": "dialect",
        "autotune_bridge": "bridge",
        "autotune_bridge.x": "bridge",
    }


def test_a_package_folder_of_no_layer_fails_named(tmp_path):
    files = ["lowering/__init__.py", "autotune_extra/__init__.py", "autotune_extra/a.py"]
    _project(tmp_path, ["lowering", "autotune_extra"], files)
    with pytest.raises(AssertionError, match=r"in no layer .*\(LAYERS\): autotune_extra/\n"):
        module_layers(tmp_path)


def test_the_product_imports_no_folder_outside_its_packages():
    """A folder of the repository that the wheel leaves out (`examples/`, `benchmarks/`, a
    package forgotten in pyproject.toml) is importable from the repository only."""
    folders = {path.parent.name for path in ROOT.glob("*/__init__.py")} - set(PACKAGES)
    found = [
        f"{module} imports {name}"
        for module, path in module_files().items()
        for name in sorted(external_imports(path))
        if name.partition(".")[0] in folders
    ]
    assert found == []


def test_no_import_circle_among_the_project_modules():
    circle = find_circle(import_graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports(import_graph(), module_layers()) == []


def test_the_contracts_and_the_runtime_import_neither_xdsl_nor_the_compiler():
    layers = module_layers()
    found = [
        f"{module} imports {name}"
        for module, path in module_files().items()
        if LAYER_NAMES[layers[module]] in WITHOUT_COMPILER
        for name in sorted(external_imports(path))
        if name.split(".")[0] == "xdsl" or name.startswith("iree.compiler")
    ]
    assert found == []


def test_the_runtime_stands_on_the_contracts_alone():
    """The runtime sits above the lowering in the order, yet uses neither it nor the
    dialect: it runs modules that any lowering built."""
    graph, layers = import_graph(), module_layers()
    found = [
        f"{a} -> {b} ({LAYER_NAMES[layers[b]]})"
        for a in sorted(graph)
        if LAYER_NAMES[layers[a]] == "runtime"
        for b in sorted(graph[a])
        if LAYER_NAMES[layers[b]] not in ("contracts", "runtime")
    ]
    assert found == []


def test_running_a_module_loads_neither_xdsl_nor_the_compiler():
    probe = (
        "import sys, autotune_runtime.session, autotune_runtime.commands, "
        "autotune_runtime.run_commands; "
        "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('xdsl')} | "
        "{m for m in sys.modules if m.startswith('iree.compiler')}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_of_the_dialect_definitions_only_the_kept_text_uses_iree():
    layers = module_layers()
    users = {
        module
        for module, path in module_files().items()
        if LAYER_NAMES[layers[module]] == "dialect"
        and any(name.startswith("iree.compiler") for name in external_imports(path))
    }
    assert users == {"autotune_dialect.iree_ir", "autotune_dialect.verbatim"}
