"""Shared fixtures: paths to the project, its test data, the pinned compiler's iree-opt and
the installed `iree-autotune` script; the compiled modules and the tuned cache that the
`iree-autotune run | tune | report | cache` tests share."""

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


@pytest.fixture(scope="session")
def vmfbs(tmp_path_factory) -> dict[str, Path]:
    """The modules that the command line's run, tune and cache tests run, compiled once for
    all of them (a test module may define its own `vmfbs`, which it then uses instead)."""
    from command_line import SCALARS, TOLERANT
    from modules import tagged_module

    from lowering.driver import compile, compile_lowered

    folder = tmp_path_factory.mktemp("vmfb")
    sources = {
        # The tagged variants disagree on purpose; the tolerance lets them all be measured.
        "online": compile(tagged_module(group_attrs=TOLERANT)),
        "explicit": compile(tagged_module(group_attrs='{policy = "explicit", tolerance = 10.0}')),
        "explicit_sizes": compile(
            tagged_module(
                dynamic=True,
                group_attrs='{policy = "explicit", tolerance = 10.0, workloads = [[16], [64]]}',
            )
        ),
        "explicit_dynamic": compile(
            tagged_module(dynamic=True, group_attrs='{policy = "explicit", tolerance = 10.0}')
        ),
        "dynamic": compile(tagged_module(dynamic=True, group_attrs=TOLERANT)),
        "scalars": compile_lowered(SCALARS),
    }
    paths = {}
    for name, data in sources.items():
        paths[name] = folder / f"{name}.vmfb"
        paths[name].write_bytes(data)
    return paths


@pytest.fixture
def tuned_cache(vmfbs, tmp_path) -> Path:
    """A cache holding the decision of the explicit module's `__autotune`."""
    from command_line import DEVICE, cli

    path = tmp_path / "tuned.sqlite3"
    result = cli("tune", vmfbs["explicit"], *DEVICE, "--cache", path)
    assert result.returncode == 0, result.stderr
    return path
