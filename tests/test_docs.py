"""The docs run as written: every ```sh and ```python block of every page of docs/ and of
the README, in order, in one folder per page (empty for the tutorial; with a copy of
`examples/` and a `.venv` link for the other pages, whose commands name those paths); and
docs/tutorial.ipynb executes without an error. docs/triton.md and every `import-triton`
command run in test_triton_docs.py, which also checks what they write.

Each block is a test of its own (`test_every_block_runs_in_order[tune_model.md:58]`); a
block's test first runs the page's earlier blocks that have not run, so that one block can
be selected alone. A Python block whose first line is `# needs: torch, onnx` (an optional
frontend) is skipped, naming the modules this interpreter lacks, where one is missing.
Shell blocks run in `bash -euo pipefail`, and Python blocks with the commands they start,
with this interpreter's scripts folder (the venv's `bin/`) first on PATH, as in a reader's
activated venv; Python blocks run in one shared namespace per page, like a reader's
session. Each page has its own tuning cache in its folder (`IREE_AUTOTUNE_CACHE`), so
nothing is written to the user's cache. Blocks of `make` targets and benchmark runs are
the project's own entry points, which CI (`make test`) or a person (`make demo`; `make
bench`, about an hour) runs: they are not collected here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
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


def runs_here(lang: str, code: str) -> bool:
    """A block this file runs: sh and python, except the project's entry points and the
    `import-triton` commands (test_triton_docs.py runs those)."""
    if lang == "sh":
        return not runs_entry_points_only(code) and IMPORT_TRITON not in code
    return lang == "python"


def page_blocks(page: Path) -> list[tuple[str, str, int]]:
    """The blocks of `page` that run here, in order."""
    return [b for b in fenced_blocks(page.read_text()) if runs_here(b[0], b[1])]


@dataclass
class PageRun:
    """A page's blocks run in order in one folder, its Python blocks in one namespace."""

    page: Path
    folder: Path
    env: dict[str, str]
    blocks: list[tuple[str, str, int]]
    namespace: dict = field(default_factory=lambda: {"__name__": "__docs__"})
    done: int = 0
    """How many of `blocks` have run (or been skipped)."""
    failed: str | None = None
    """Where the block that failed is: the later ones do not run."""

    def run_through(self, index: int) -> None:
        """Run the blocks up to `index`; skip the test where that block needs a module
        this interpreter lacks, fail it where that block or an earlier one fails."""
        if self.failed is not None:
            line = self.blocks[index][2]
            pytest.fail(f"{self.page.name}:{line} not run: the block at {self.failed} failed")
        while self.done <= index:
            lang, code, line = self.blocks[self.done]
            where = f"{self.page.name}:{line}"
            self.done += 1
            missing = missing_modules(code) if lang == "python" else []
            if missing and self.done - 1 == index:
                pytest.skip(f"{where} needs {', '.join(missing)} (an optional frontend)")
            if missing:
                continue
            self.failed = where
            self.run_block(lang, code, where)
            self.failed = None

    def run_block(self, lang: str, code: str, where: str) -> None:
        if lang == "sh":
            done = run_sh(code, self.folder, self.env)
            assert done.returncode == 0, (
                f"the sh block at {where} failed ({done.returncode}):\n{code}\n"
                f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
            )
            return
        cwd = os.getcwd()
        os.chdir(self.folder)
        try:
            exec(compile(code, where, "exec"), self.namespace)  # noqa: S102 - the docs' code
        finally:
            os.chdir(cwd)


BLOCK_CASES = [
    pytest.param(page, index, id=f"{page.name}:{line}")
    for page in [TUTORIAL, *PAGES]
    for index, (_, _, line) in enumerate(page_blocks(page))
]


@pytest.fixture(scope="module")
def page_runs() -> dict[Path, PageRun]:
    """Each page's run, shared by its blocks' tests."""
    return {}


def page_run(runs: dict[Path, PageRun], page: Path, tmp_path_factory) -> PageRun:
    """The page's run, its folder made on first use."""
    if page not in runs:
        folder = tmp_path_factory.mktemp(page.stem)
        if page != TUTORIAL:
            shutil.copytree(ROOT / "examples", folder / "examples")
            (folder / ".venv").symlink_to(Path(sys.prefix))
        env = scripts_env()
        env["IREE_AUTOTUNE_CACHE"] = str(folder / "tuning-cache.sqlite3")
        runs[page] = PageRun(page, folder, env, page_blocks(page))
    return runs[page]


@pytest.mark.parametrize(("page", "index"), BLOCK_CASES)
def test_every_block_runs_in_order(page, index, page_runs, tmp_path_factory, monkeypatch):
    run = page_run(page_runs, page, tmp_path_factory)
    monkeypatch.setenv("IREE_AUTOTUNE_CACHE", run.env["IREE_AUTOTUNE_CACHE"])
    monkeypatch.setenv("PATH", run.env["PATH"])
    run.run_through(index)


def test_the_tutorial_runs_its_steps_as_blocks():
    assert len(page_blocks(TUTORIAL)) >= 8


def test_every_block_has_a_language():
    for page in [*PAGES, TUTORIAL, DOCS / "triton.md"]:
        for lang, code, line in fenced_blocks(page.read_text()):
            assert lang, f"{page.name}:{line}: a block without a language ({code[:40]!r})"


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


OPTIONAL_PAGE = """```python
x = 1
```

```python
# needs: no_such_frontend
import no_such_frontend
```

```python
y = x + 1
```
"""


def test_a_block_needing_a_missing_module_is_a_skip_with_its_reason(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(OPTIONAL_PAGE)
    run = PageRun(page, tmp_path, scripts_env(), page_blocks(page))
    reason = r"page\.md:5 needs no_such_frontend \(an optional frontend\)"
    with pytest.raises(pytest.skip.Exception, match=reason):
        run.run_through(1)
    run.run_through(2)
    assert run.namespace["y"] == 2
    alone = PageRun(page, tmp_path, scripts_env(), page_blocks(page))
    alone.run_through(2)  # the last block selected alone: the first runs, the second not
    assert alone.namespace["y"] == 2


def test_the_blocks_after_a_failing_one_fail(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```sh\nfalse\n```\n\n```python\nx = 1\n```\n")
    run = PageRun(page, tmp_path, scripts_env(), page_blocks(page))
    with pytest.raises(AssertionError, match=r"the sh block at page\.md:1 failed \(1\)"):
        run.run_through(0)
    with pytest.raises(pytest.fail.Exception, match=r"page\.md:5 not run: .* page\.md:1 failed"):
        run.run_through(1)
    assert "x" not in run.namespace
