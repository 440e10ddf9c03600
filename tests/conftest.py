"""Shared fixtures: paths to test data and the pinned compiler's iree-opt."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from iree.compiler.tools.binaries import find_tool

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def iree_opt() -> str:
    return find_tool("iree-opt")


def run_iree_opt(tool: str, text: str) -> subprocess.CompletedProcess[str]:
    """`iree-opt` on text from stdin (canonical custom-syntax print)."""
    return subprocess.run([tool, "-"], input=text, capture_output=True, text=True, check=False)
