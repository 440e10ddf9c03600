"""The default tuning cache is shared by every module and process: a loaded module says
which cache it uses (`cache_path`, `load(..., verbose=True)`), and a `static` build from a
cache or export that also holds other modules' decisions uses its own and names the
others in a warning, instead of failing."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from command_line import cli
from modules import tagged_module
from test_docs import DOCS, ROOT, PageRun, page_blocks, scripts_env

from autotune_contracts.cache_file import CacheKey, Entry
from autotune_runtime import load
from autotune_runtime.cache import TuningCache
from lowering.driver import compile


def _unrelated(group: str, module: str, variant: str) -> Entry:
    """A decision of another module's group, as tuning on another device stored it."""
    return Entry(
        key=CacheKey(device="d" * 32, module=module, group=group, workload=()),
        variant=variant,
        stats={},
        device_info={"driver": "local-task", "name": "default", "arch": "cpu"},
        updated=time.time(),
    )


def test_the_interop_page_runs_with_a_default_cache_of_other_modules_decisions(tmp_path):
    """Its `cache export` block exports every decision of the default cache: those of
    another module (another group's, and `exe::add` of other kernels) are left out."""
    cache = TuningCache(Path(os.environ["IREE_AUTOTUNE_CACHE"]))
    cache.put(_unrelated("matmul_kernels::matmul", "a" * 32, "mm_32x32"))
    cache.put(_unrelated("exe::add", "f" * 32, "add_128"))
    cache.close()
    folder = tmp_path / "page"
    shutil.copytree(ROOT / "examples", folder / "examples")
    (folder / ".venv").symlink_to(Path(sys.prefix))
    page = DOCS / "interop.md"
    env = {**scripts_env(), "IREE_AUTOTUNE_CACHE": os.environ["IREE_AUTOTUNE_CACHE"]}
    run = PageRun(page, folder, env, page_blocks(page))
    assert len(run.blocks) >= 4
    run.run_through(len(run.blocks) - 1)
    exported = json.loads((folder / "decisions.json").read_text())["decisions"]
    assert sorted(d["group"] for d in exported) == ["exe::add", "matmul_kernels::matmul"]
    lowered = (folder / "vecadd.lowered.mlir").read_text()
    assert "@exe::@add_64" in lowered  # no decision of its kernels: the first variant


def test_a_static_build_from_other_modules_decisions_warns_and_runs_the_first_variant(tmp_path):
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module())
    export = tmp_path / "decisions.json"
    decisions = [
        {"group": "matmul_kernels::matmul", "variant": "mm_32x32", "workload": []},
        {"group": "other::add", "variant": "v1", "workload": [8]},
    ]
    export.write_text(json.dumps({"decisions": decisions}))
    before = export.read_bytes()
    run = cli("lower", source, "--policy", "static", "--cache", export, "-o", "-")
    assert run.returncode == 0, run.stderr
    assert run.stderr == (
        f"warning: 2 decision(s) of {export} name no single group of this module and are not "
        "used: #0 (matmul_kernels::matmul), #1 (other::add) (groups: tagged::add)\n"
        f"warning: {export} holds no decision for the static group(s) tagged::add, which run "
        "their first variant\n"
    )
    assert "flow.dispatch @tagged::@v0(" in run.stdout
    assert export.read_bytes() == before


def test_a_loaded_module_names_its_tuning_cache(tmp_path, capsys):
    vmfb = compile(tagged_module(group_attrs="{tolerance = 10.0}"))
    default = Path(os.environ["IREE_AUTOTUNE_CACHE"])
    with load(vmfb, "local-sync", verbose=True) as module:
        assert module.cache_path == default
    assert capsys.readouterr().err == (
        f"iree-autotune: tuning cache {default} (the default: shared by every module and "
        "process loaded without cache=; $IREE_AUTOTUNE_CACHE or cache=PATH chooses another, "
        "cache=False none)\n"
    )
    own = tmp_path / "own.sqlite3"
    with load(vmfb, "local-sync", cache=own, verbose=True) as module:
        assert module.cache_path == own
    assert capsys.readouterr().err == f"iree-autotune: tuning cache {own}\n"
    with load(vmfb, "local-sync", cache=False, verbose=True) as module:
        assert module.cache_path is None
    assert capsys.readouterr().err == "iree-autotune: no tuning cache (cache=False)\n"
    with load(vmfb, "local-sync", cache=own) as module:  # quiet unless asked
        assert module.cache_path == own
    assert capsys.readouterr().err == ""
