"""The docs run as written: every ```sh and ```python block of every page of docs/ and of
the README, in order, in one folder per page (empty for the tutorial; with a copy of
`examples/` and a `.venv` link for the other pages, whose commands name those paths); and
docs/tutorial.ipynb executes without an error. docs/triton.md and every `import-triton`
command run in test_triton_docs.py, which also checks what they write.

Shell blocks run in `bash -euo pipefail` with this interpreter's scripts folder (the venv's
`bin/`) first on PATH; Python blocks run in one shared namespace, like a reader's session.
The tuning cache is the per-test one of `conftest.py` (`IREE_AUTOTUNE_CACHE`), so nothing
is written to the user's cache. Blocks of `make` targets and benchmark runs are the
project's own entry points, which CI (`make test`) or a person (`make demo`; `make bench`,
about an hour) runs.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbclient
import nbformat
import pytest

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
TUTORIAL = DOCS / "tutorial.md"
PAGES = sorted(
    [p for p in DOCS.glob("*.md") if p.name not in ("tutorial.md", "triton.md")]
    + [ROOT / "README.md"]
)
NOTEBOOK = DOCS / "tutorial.ipynb"
BLOCK = re.compile(
    r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL
)
RUNNABLE = ("sh", "python")


def fenced_blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, code, line of the opening fence) of every fenced block, in order."""
    return [
        (m.group("lang"), m.group("code"), text.count("\n", 0, m.start()) + 1)
        for m in BLOCK.finditer(text)
    ]


def scripts_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = sysconfig.get_path("scripts") + os.pathsep + env.get("PATH", "")
    return env


def test_fenced_blocks_are_found_with_their_languages():
    text = "a\n```sh\necho 1\n```\n\n```python\nx = 1\n```\n```text\nout\n```\n"
    assert fenced_blocks(text) == [
        ("sh", "echo 1\n", 2),
        ("python", "x = 1\n", 6),
        ("text", "out\n", 9),
    ]


def test_the_tutorial_covers_the_whole_flow():
    blocks = fenced_blocks(TUTORIAL.read_text())
    code = "\n".join(c for lang, c, _ in blocks if lang in RUNNABLE)
    for step in (
        "autotune.group",
        "iree-autotune lower",
        "iree-autotune compile",
        "iree-autotune run",
        "load(",
        "module.stats()",
        "--policy explicit",
        ".tune()",
        "iree-autotune report",
        "--policy static",
    ):
        assert step in code, f"the tutorial's code never shows {step!r}"
    assert sum(lang == "sh" for lang, _, _ in blocks) >= 5
    assert sum(lang == "python" for lang, _, _ in blocks) >= 3


ENTRY_POINTS = ("make ", ".venv/bin/python -m benchmarks.run")
IMPORT_TRITON = "iree-autotune import-triton"  # run, and its output checked, by test_triton_docs


def runs_entry_points_only(code: str) -> bool:
    """A block of `make` targets and benchmark runs: the project's own entry points."""
    return all(not ln.strip() or ln.startswith(ENTRY_POINTS) for ln in code.splitlines())


def run_sh(code: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A docs shell block run as a reader runs it: bash, stopping at the first failure."""
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def missing_modules(code: str) -> list[str]:
    """The modules a Python block names on its first line (`# needs: torch, onnx`: an
    optional frontend) that this interpreter does not have."""
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    if not first.startswith("# needs:"):
        return []
    names = [n.strip() for n in first.removeprefix("# needs:").split(",") if n.strip()]
    return [n for n in names if importlib.util.find_spec(n.split(".")[0]) is None]


def run_blocks(page: Path, folder: Path) -> int:
    """Run the ```sh and ```python blocks of `page` in order in `folder`; how many ran."""
    env = scripts_env()
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for lang, code, line in fenced_blocks(page.read_text()):
        where = f"{page.name}:{line}"
        if lang == "sh" and (runs_entry_points_only(code) or IMPORT_TRITON in code):
            continue
        if lang == "sh":
            done = run_sh(code, folder, env)
            assert done.returncode == 0, (
                f"the sh block at {where} failed ({done.returncode}):\n{code}\n"
                f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
            )
            ran += 1
        elif lang == "python" and missing_modules(code):
            print(f"{where}: not run: needs {', '.join(missing_modules(code))}")
        elif lang == "python":
            cwd = os.getcwd()
            os.chdir(folder)
            try:
                exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the docs' code
            finally:
                os.chdir(cwd)
            ran += 1
    return ran


def test_every_tutorial_block_runs_in_order(tmp_path):
    assert run_blocks(TUTORIAL, tmp_path) >= 8


def test_every_block_has_a_language():
    for page in [*PAGES, TUTORIAL, DOCS / "triton.md"]:
        for lang, code, line in fenced_blocks(page.read_text()):
            assert lang, f"{page.name}:{line}: a block without a language ({code[:40]!r})"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_block_of_the_page_runs_in_order(page, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    blocks = fenced_blocks(page.read_text())
    runnable = [code for lang, code, _ in blocks if lang in RUNNABLE]
    ran = run_blocks(page, tmp_path)
    skipped = [
        c
        for lang, c, _ in blocks
        if lang in RUNNABLE
        and (
            (lang == "sh" and (runs_entry_points_only(c) or IMPORT_TRITON in c))
            or (lang == "python" and missing_modules(c))
        )
    ]
    assert ran == len(runnable) - len(skipped)


def test_the_notebook_executes(tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert any(cell.cell_type == "code" for cell in notebook.cells)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on an error
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors


def test_a_block_names_the_optional_modules_it_needs():
    assert missing_modules("# needs: numpy, json\nimport numpy\n") == []
    assert missing_modules("# needs: numpy, no_such_frontend.aot\n") == ["no_such_frontend.aot"]
    assert missing_modules("import numpy  # needs: nothing here\n") == []


def test_the_tutorial_shows_what_lowering_prints(tmp_path):
    """Step 2's expected output is what its command prints (the generated names)."""
    blocks = fenced_blocks(TUTORIAL.read_text())
    step = next(i for i, (lang, code, _) in enumerate(blocks) if "grep -n" in code)
    for lang, code, _ in blocks[:step]:
        if lang == "sh":
            assert run_sh(code, tmp_path, scripts_env()).returncode == 0
    done = run_sh(blocks[step][1], tmp_path, scripts_env())
    assert done.returncode == 0, done.stderr
    lang, shown, _ = blocks[step + 1]
    assert lang == "text"
    lines = [line for line in shown.splitlines() if line != "..."]
    assert lines and all(line in done.stdout.splitlines() for line in lines), done.stdout


def test_the_benchmarks_page_says_which_cases_its_last_run_ran():
    from benchmarks.report import run_duration

    all_cases = ["B1", "B2", "B9"]
    whole = run_duration({"wall_s": 1500.0, "ran": all_cases}, all_cases)
    assert whole == "`make bench` took 1500 s."
    part = run_duration({"wall_s": 67.6, "ran": ["B9"]}, all_cases)
    assert part.startswith("the last run ran B9 only and took 68 s; the other cases'")
    assert "may have run some" in run_duration({"wall_s": 67.6}, all_cases)


def test_every_python_block_of_the_dialect_page_runs_alone(tmp_path):
    """Each block has its own imports: a reader can copy any one of them."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    page = DOCS / "dialect.md"
    blocks = [
        (code, line) for lang, code, line in fenced_blocks(page.read_text()) if lang == "python"
    ]
    assert len(blocks) >= 3
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for code, line in blocks:
            exec(compile(code, f"dialect.md:{line}", "exec"), {"__name__": "__docs__"})  # noqa: S102
    finally:
        os.chdir(cwd)
