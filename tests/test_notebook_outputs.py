"""docs/tutorial.ipynb's saved outputs are what its code prints now: the notebook is run
afresh and each cell's outputs compared with the saved ones, numbers aside (timings,
counts and the variant a run chooses vary; names, such as the lowering's symbols, do not).
After a change of what the code prints, run the notebook again and save it
(`jupyter execute --inplace docs/tutorial.ipynb`; it runs in docs/, where it leaves
online.png and decisions.json to delete)."""

from __future__ import annotations

import re
from pathlib import Path

import nbclient
import nbformat

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "tutorial.ipynb"
NUMBER = re.compile(r"\d+(\.\d+)?")
WORD = re.compile(r"[A-Za-z_][\w:.-]*")


def shown(cell) -> list[tuple[str, object]]:
    """A code cell's outputs, numbers aside: the text printed (numbers as `N`), or the
    words of a display's plain text (a table's widths follow its numbers)."""
    outputs = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            outputs.append((output["name"], NUMBER.sub("N", output["text"])))
        elif kind in ("display_data", "execute_result"):
            plain = re.sub(r"\x1b\[[0-9;]*m", "", output["data"].get("text/plain", ""))
            words = sorted(set(WORD.findall(NUMBER.sub("N", plain))))
            outputs.append((kind, (sorted(output["data"]), words)))
        else:
            outputs.append((kind, output.get("ename")))
    return outputs


def code_cells(notebook) -> list:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def test_the_saved_outputs_are_what_the_notebook_prints_now(tmp_path):
    saved = nbformat.read(NOTEBOOK, as_version=4)
    fresh = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        fresh, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    for before, now in zip(code_cells(saved), code_cells(fresh), strict=True):
        assert shown(before) == shown(now), before.source.splitlines()[0]
    # the lowering's symbols as it names them now
    printed = "".join(o.get("text", "") for c in code_cells(saved) for o in c.outputs)
    assert "@__autotune.g0.matmul.s0.k0.choice" in printed
