"""The documented `import-triton` commands run as written: every ```sh and ```bash block of
docs/triton.md, of the `import-triton` section of docs/cli.md and of the docstrings of
examples/triton/*.py, each in a folder holding a copy of the project's `examples/` (the
commands are written to run from the project's root and write their outputs there).

Each block runs in `bash -euo pipefail` with this interpreter's scripts folder first on PATH.
Every module a block writes must be the shipped module of its kernel and arch
(tests/data/triton, written by regenerate.py and checked by test_triton_ptx.py and
test_triton_module.py), apart from the kernel's label in the first line and the group's sample
workloads; every `.vmfb` must hold the shipped exports and PTX. The blocks compile Triton
kernels, so they need triton (the `triton` extra); without it they are skipped, and
test_triton_cli.py checks the messages.
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
from pathlib import Path

import pytest
from conftest import DATA
from test_docs import run_sh, scripts_env
from vmfb_cuda import cuda_exports

from lowering.triton import ImportedKernel

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
EXAMPLES = sorted((ROOT / "examples" / "triton").glob("[!_]*.py"))
SHELLS = ("sh", "bash")
BLOCK = re.compile(
    r"^[ \t]*```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL
)
SHIPPED_KERNELS = {"add_kernel": "vecadd", "matmul_kernel": "matmul", "softmax_kernel": "softmax"}


def _triton_installed() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def blocks(name: str, text: str, first_line: int = 1) -> list[tuple[str, str, str]]:
    """(language, code, `name:line`) of every fenced block of `text`, whose first line is
    line `first_line` of the file `name`."""
    return [
        (
            m.group("lang"),
            m.group("code"),
            f"{name}:{first_line + text.count(chr(10), 0, m.start())}",
        )
        for m in BLOCK.finditer(text)
    ]


def cli_section() -> tuple[str, int]:
    """The `import-triton` section of docs/cli.md, and the line it starts on."""
    text = (DOCS / "cli.md").read_text()
    start = text.index("## `import-triton`")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)], text.count("\n", 0, start) + 1


def sources() -> list[tuple[str, str, int]]:
    """(file, text, its first line) of every text whose shell blocks are documented commands."""
    out = [("triton.md", (DOCS / "triton.md").read_text(), 1), ("cli.md", *cli_section())]
    for path in EXAMPLES:
        node = ast.parse(path.read_text()).body[0]
        assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant), path
        out.append((f"examples/triton/{path.name}", node.value.value, node.lineno))
    return out


def shell_blocks() -> list[tuple[str, str]]:
    """(place, code) of every documented shell block."""
    return [
        (where, code)
        for name, text, line in sources()
        for lang, code, where in blocks(name, text, line)
        if lang in SHELLS
    ]


def test_every_documented_import_triton_command_is_found():
    found = shell_blocks()
    places = [where.rpartition(":")[0] for where, _ in found]
    assert places.count("triton.md") == 2
    assert places.count("cli.md") == 1
    for path in EXAMPLES:
        assert places.count(f"examples/triton/{path.name}") == 1, path.name
    commands = "\n".join(code for _, code in found)
    for kernel in ("matmul:matmul_kernel", "vecadd:add_kernel", "softmax:softmax_kernel"):
        assert f"iree-autotune import-triton examples.triton.{kernel}" in commands
    assert "examples/triton/vecadd.py:add_kernel" in commands
    assert "--from-bundle" in commands and "--configs configs.json" in commands
    # Every block that shows the command is one of those that run.
    for name, text, line in sources():
        for lang, code, where in blocks(name, text, line):
            assert lang in SHELLS or "iree-autotune" not in code, where


def test_cli_section_is_found():
    section, line = cli_section()
    assert section.startswith("## `import-triton`")
    assert "## " not in section[3:]
    lines = (DOCS / "cli.md").read_text().splitlines()
    assert lines[line - 1] == "## `import-triton`"


@functools.cache
def shipped(spec_name: str, arch: str) -> ImportedKernel:
    return ImportedKernel.load_bundle(DATA / "triton" / f"{SHIPPED_KERNELS[spec_name]}.{arch}.json")


def normalized(text: str) -> str:
    """The module without the kernel's label (module or file form) and sample workloads."""
    text = re.sub(r"^(// \w+: Triton kernel )\S+", r"\1KERNEL", text, count=1)
    return re.sub(r"^(\s*autotune\.group .*\]\)) \{workloads = .*\}$", r"\1", text, flags=re.M)


def check_module(path: Path) -> None:
    text = path.read_text()
    head = re.match(r"// (\w+): Triton kernel \S+ as an autotune group, for (sm_\d+)\.", text)
    assert head, f"{path.name}: not an imported module"
    kernel = shipped(*head.groups())
    ptx_file = re.search(r'#hal\.executable\.object<\{path = "([^"]+)"\}>', text)
    expected = kernel.mlir(ptx_file.group(1) if ptx_file else None)
    assert normalized(text) == normalized(expected), f"{path.name} differs from the shipped one"
    if ptx_file:
        assert (path.parent / ptx_file.group(1)).read_text() == kernel.ptx()


def check_vmfb(path: Path) -> None:
    exports, ptx = cuda_exports(path.read_bytes())
    names = [e.name for e in exports]
    matches = [
        (name, arch)
        for name in SHIPPED_KERNELS
        for arch in ("sm_80", "sm_90")
        if [v.name for v in shipped(name, arch).variants] == names
        and ptx == [shipped(name, arch).ptx()]
    ]
    assert matches, f"{path.name}: exports {names} are not a shipped module's"


@pytest.fixture(scope="session")
def triton_cache(tmp_path_factory) -> Path:
    """One Triton cache for the session: blocks compiling the same kernel share its work."""
    return tmp_path_factory.mktemp("triton-cache")


@pytest.mark.skipif(
    not _triton_installed(),
    reason="triton is not installed (pip install 'iree-autotune[triton]'): the documented "
    "import-triton commands compile Triton kernels with it",
)
@pytest.mark.parametrize(("where", "code"), shell_blocks(), ids=[w for w, _ in shell_blocks()])
def test_documented_command_runs_as_written(where, code, tmp_path, triton_cache):
    shutil.copytree(
        ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    before = set(tmp_path.rglob("*"))
    env = scripts_env()
    env["TRITON_CACHE_DIR"] = str(triton_cache)
    done = run_sh(code, tmp_path, env)
    assert done.returncode == 0, f"{where} failed:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr and "warning" not in done.stderr.lower(), done.stderr
    written = sorted(set(tmp_path.rglob("*")) - before)
    modules = [p for p in written if p.suffix == ".mlir"]
    assert modules, f"{where} wrote no module"
    for path in modules:
        assert f"-> {path.name}" in done.stderr, f"{path.name} is not reported"
        check_module(path)
    for path in written:
        if path.suffix == ".vmfb":
            check_vmfb(path)


def python_blocks() -> list[tuple[str, str]]:
    """(place, code) of every Python block of docs/triton.md."""
    text = (DOCS / "triton.md").read_text()
    return [(where, code) for lang, code, where in blocks("triton.md", text) if lang == "python"]


@pytest.mark.skipif(
    not _triton_installed(),
    reason="triton is not installed (pip install 'iree-autotune[triton]'): the documented "
    "Python compiles Triton kernels with it",
)
def test_documented_python_runs_as_written(tmp_path, triton_cache, monkeypatch):
    found = python_blocks()
    assert len(found) == 1
    where, code = found[0]
    shutil.copytree(
        ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(triton_cache))
    namespace: dict = {}
    exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the docs' code
    kernel = namespace["k"]
    check_module(tmp_path / "matmul.mlir")
    assert (tmp_path / "matmul.mlir").read_text() == kernel.mlir()
    again = ImportedKernel.load_bundle(tmp_path / "matmul.json")
    assert again.mlir() == kernel.mlir() and again.ptx() == kernel.ptx()
