"""The package installs as the docs say: every combination of extras that the docs name
(`pip install 'iree-autotune[jax]'`, the Makefile's `EXTRAS` and CI's, all of them
together) resolves with pip, and building the wheel writes nothing into the source tree
(about a minute with the index at hand).

These need the package index (pip's resolver reads the registry's metadata; the wheel's
build backend is installed from it): without it they are skipped, saying so. pip runs
with `--dry-run --ignore-installed`, so what this environment has installed does not
matter, and without this machine's pip configuration files (`PIP_CONFIG_FILE=/dev/null`):
the pins are checked as a fresh install sees the index. Where every extra is installed
where the tests run (CI's venv), the resolve of all of them is that install's.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.request
import zipfile
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
PACKAGES = ["autotune_contracts", "autotune_runtime", "autotune_dialect", "autotune_bridge"]
PACKAGES += ["lowering", "autotune_model", "autotune_cli"]
NAMED = re.compile(r"(?:iree-autotune|\.)\[([a-z]+(?:,[a-z]+)*)\]")
MAKE_EXTRAS = re.compile(r"\bEXTRAS\s*\??=\s*([a-z]+(?:,[a-z]+)*)")
"""The extras `make` installs: the Makefile's default (`EXTRAS ?= ...`), CI's (`.ci/run`)."""


def make_extras(path: Path) -> set[tuple[str, ...]]:
    """Each set of extras `path` gives `make` to install."""
    return {tuple(sorted(m.group(1).split(","))) for m in MAKE_EXTRAS.finditer(path.read_text())}


@cache
def index_unreachable() -> str | None:
    """Why the package index cannot be reached, or None: one request, 5 s at most."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/pip/", timeout=5):
            return None
    except OSError as err:
        return f"no package index reachable ({index}: {err})"


def needs_index() -> None:
    reason = index_unreachable()
    if reason is not None:
        pytest.skip(reason)


def named_combinations() -> set[tuple[str, ...]]:
    """Every set of extras the README, docs/*.md, the Makefile and CI install."""
    texts = [ROOT / "README.md", ROOT / "Makefile", *sorted((ROOT / "docs").glob("*.md"))]
    found = {
        tuple(sorted(m.group(1).split(",")))
        for path in texts
        for m in NAMED.finditer(path.read_text())
    }
    found |= make_extras(ROOT / "Makefile") | make_extras(ROOT / ".ci" / "run")
    return {names for names in found if set(names) <= set(EXTRAS)}


def source_copy(folder: Path) -> Path:
    """The files a build reads (pyproject.toml, README.md, the packages), copied."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, folder / name)
    for package in PACKAGES:
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
        shutil.copytree(ROOT / package, folder / package, ignore=ignore)
    return folder


def pip(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run(
        [sys.executable, "-m", "pip", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def resolve(source: Path, extras: tuple[str, ...]) -> dict[str, str]:
    """The versions pip would install for `.[extras]`: name -> version."""
    done = pip(
        "install",
        "--dry-run",
        "--ignore-installed",
        "--quiet",
        "--report",
        "-",
        f".[{','.join(extras)}]",
        cwd=source,
    )
    assert done.returncode == 0, f".[{','.join(extras)}] does not resolve:\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout)
    return {
        canonical(item["metadata"]["name"]): item["metadata"]["version"]
        for item in report["install"]
    }


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(requirements: list[str]) -> dict[str, str]:
    """name -> version of requirements written `name==version`."""
    return {canonical(n): v for n, v in (r.split("==") for r in requirements)}


def test_every_extra_is_an_exact_pin():
    """So that a set of extras that resolves is the same versions in any subset of it."""
    for extra, requirements in EXTRAS.items():
        for requirement in requirements:
            assert re.fullmatch(r"[\w.-]+==[\w.]+", requirement), (extra, requirement)


def test_the_docs_name_the_extras_and_all_of_them_together():
    named = named_combinations()
    assert {("jax",), ("onnx",), ("ray",), ("torch",), ("triton",)} <= named
    assert ("jax", "onnx", "ray", "torch", "triton") in named
    assert ("jax", "ray", "test", "triton") in named  # the Makefile's


def test_ci_installs_every_extra():
    """So that every docs block runs on CI, the ones that need a frontend too."""
    (ci,) = make_extras(ROOT / ".ci" / "run")
    assert set(ci) == set(EXTRAS)
    (default,) = make_extras(ROOT / "Makefile")
    assert set(default) < set(EXTRAS) and "test" in default


def installed(names: list[str]) -> dict[str, str | None]:
    """The version of each distribution installed where the tests run (None: not)."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def test_all_extras_together_resolve(tmp_path):
    """Every extra is an exact pin (above), so the versions pip finds for all of them
    together install every combination the docs name, each extra over any other, at
    the same pins: one resolve stands for them all. Where the tests run in a venv
    installed with every extra (`make test EXTRAS=...`, as CI does), pip resolved them
    together there: its versions are the pins' (no second resolve, a minute)."""
    every = tuple(sorted(EXTRAS))
    assert all(set(names) <= set(every) for names in named_combinations())
    wanted = pins(PROJECT["dependencies"] + [r for e in every for r in EXTRAS[e]])
    here = installed(list(wanted))
    if None not in here.values():
        assert here == wanted
        return
    needs_index()
    source = source_copy(tmp_path)
    versions = resolve(source, every)
    assert {name: versions.get(name) for name in wanted} == wanted
    assert sorted(os.listdir(tmp_path)) == sorted(["pyproject.toml", "README.md", *PACKAGES])


def test_building_the_wheel_writes_nothing_into_the_source_tree(tmp_path):
    needs_index()
    (tmp_path / "source").mkdir()
    source = source_copy(tmp_path / "source")
    before = sorted(p.relative_to(source) for p in source.rglob("*"))
    done = pip("wheel", ".", "--no-deps", "--quiet", "-w", str(tmp_path / "wheels"), cwd=source)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.relative_to(source) for p in source.rglob("*")) == before
    (wheel,) = (tmp_path / "wheels").glob("iree_autotune-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(
        ["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(tracked) <= names
