"""The tutorial runs as written: every ```sh and ```python block of docs/tutorial.md, in
order, in one empty folder; and docs/tutorial.ipynb executes without an error.

Shell blocks run in `bash -euo pipefail` with this interpreter's scripts folder (the venv's
`bin/`) first on PATH; Python blocks run in one shared namespace, like a reader's session.
The tuning cache is the per-test one of `conftest.py` (`IREE_AUTOTUNE_CACHE`), so nothing
is written to the user's cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sysconfig
from pathlib import Path

import nbclient
import nbformat

DOCS = Path(__file__).parent.parent / "docs"
TUTORIAL = DOCS / "tutorial.md"
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


def test_every_tutorial_block_runs_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = scripts_env()
    namespace: dict = {"__name__": "__tutorial__"}
    ran = 0
    for lang, code, line in fenced_blocks(TUTORIAL.read_text()):
        where = f"{TUTORIAL.name}:{line}"
        if lang == "sh":
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", code],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0, (
                f"the sh block at {where} failed ({done.returncode}):\n{code}\n"
                f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
            )
            ran += 1
        elif lang == "python":
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the tutorial's code
            ran += 1
    assert ran >= 8


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
