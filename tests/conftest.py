"""Shared fixtures: paths to the project, its test data, the pinned compiler's iree-opt and
the installed `iree-autotune` script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from iree.compiler.tools.binaries import find_tool

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
IREE_AUTOTUNE = str(Path(sys.executable).parent / "iree-autotune")


@pytest.fixture(scope="session")
def iree_opt() -> str:
    return find_tool("iree-opt")


def run_iree_opt(tool: str, text: str) -> subprocess.CompletedProcess[str]:
    """`iree-opt` on text from stdin (canonical custom-syntax print)."""
    return subprocess.run([tool, "-"], input=text, capture_output=True, text=True, check=False)


def runtime_tool(name: str) -> str:
    """Path of a binary shipped in the pinned runtime wheel (iree-run-module, ...)."""
    import iree._runtime_libs as libs

    path = Path(libs.__file__).parent / name
    assert path.exists(), path
    return str(path)


@pytest.fixture(autouse=True)
def isolated_tuning_cache(tmp_path, monkeypatch):
    """Every test gets its own default tuning cache file."""
    monkeypatch.setenv("IREE_AUTOTUNE_CACHE", str(tmp_path / "tuning-cache.sqlite3"))
