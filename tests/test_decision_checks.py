"""Decisions are used only where they are this module's and unambiguous: freezing
(`lower`/`compile --policy static --cache`) takes the decisions made for the module's
kernels (their module digest), of one device, one per workload key; an export of another
program or of a newer schema is refused (also by `cache import`); a stored decision that
names a variant the group lacks is no decision (`run` warns, `tune` replaces it)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from command_line import DEVICE, cli
from modules import tagged_module

from autotune_bridge.ir import parse_module
from autotune_contracts.cache_file import SCHEMA_VERSION
from autotune_contracts.policy import Policy
from lowering.discovery import collect_groups


def _digest(text: str) -> str:
    """The module digest (group fingerprint) of the only group of `text`."""
    (group,) = collect_groups(parse_module(text, "m.mlir"), Policy.STATIC).values()
    return group.fingerprint(None)


def _decision(variant: str, workload: list[int], module: str, device: str = "d" * 32) -> dict:
    return {
        "group": "tagged::add",
        "container": "tagged",
        "group_name": "add",
        "workload": workload,
        "variant": variant,
        "module": module,
        "device": device,
        "device_info": {"driver": "local-sync", "name": "default", "arch": "cpu"},
    }


def _lower(tmp_path: Path, decisions: list[dict], *extra: str, export: dict | None = None):
    source = tmp_path / "tagged.mlir"
    source.write_text(tagged_module())
    path = tmp_path / "decisions.json"
    data = {"format": "iree-autotune-cache", "schema_version": SCHEMA_VERSION}
    path.write_text(json.dumps({**data, **(export or {}), "decisions": decisions}, indent=1))
    run = cli("lower", source, "--policy", "static", "--cache", path, "-o", "-", *extra)
    return run, path


def _chosen(lowered: str) -> str:
    """The variant that a static build's dispatch runs."""
    return lowered.split("flow.dispatch @tagged::@")[1].split("(")[0]


def test_decisions_for_another_module_are_not_frozen(tmp_path):
    run, path = _lower(tmp_path, [_decision("v2", [], "f" * 32)])
    mine = _digest(tagged_module())
    assert run.returncode == 0, run.stderr
    assert _chosen(run.stdout) == "v0"  # the first variant, as with no decision
    assert run.stderr == (
        f"warning: the decisions of {path} for tagged::add were made for another module "
        f"(digest {'f' * 32}, this one is {mine}); not used: #0\n"
        f"warning: {path} holds no decision for the static group(s) tagged::add, which run "
        "their first variant\n"
    )


def test_a_decision_for_another_module_beside_this_ones_is_left_out_with_a_warning(tmp_path):
    mine = _digest(tagged_module())
    run, path = _lower(tmp_path, [_decision("v2", [], "f" * 32), _decision("v1", [], mine)])
    assert run.returncode == 0, run.stderr
    assert _chosen(run.stdout) == "v1"  # not the first decision, which is another module's
    assert run.stderr == (
        f"warning: the decisions of {path} for tagged::add were made for another module "
        f"(digest {'f' * 32}, this one is {mine}); not used: #0\n"
    )


def test_decisions_of_two_devices_need_a_choice(tmp_path):
    mine = _digest(tagged_module())
    decisions = [_decision("v1", [], mine, "a" * 32), _decision("v2", [], mine, "b" * 32)]
    decisions[1]["device_info"] = {"driver": "cuda", "name": "NVIDIA H100", "arch": "sm_90"}
    run, path = _lower(tmp_path, decisions)
    assert run.returncode == 1
    assert run.stderr.startswith(
        f"error: {path} holds decisions for this module made on 2 devices: "
        f"{'a' * 12} (local-sync:default, cpu, IREE runtime ?); "
        f"{'b' * 12} (cuda:NVIDIA H100, sm_90, IREE runtime ?); choose one with --device"
    )
    for device, variant in (("bbbbbb", "v2"), ("a" * 32, "v1"), ("cuda", "v2")):
        chosen, _ = _lower(tmp_path, decisions, "--device", device)
        assert chosen.returncode == 0, chosen.stderr
        assert _chosen(chosen.stdout) == variant
    unknown, _ = _lower(tmp_path, decisions, "--device", "local-task")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith(
        f"error: --device 'local-task' names none of the devices whose decisions {path} holds"
    )


def test_two_decisions_for_one_key_are_refused_at_the_second(tmp_path):
    mine = _digest(tagged_module())
    run, path = _lower(tmp_path, [_decision("v1", [], mine), _decision("v2", [], mine)])
    assert run.returncode == 1
    first = run.stderr.splitlines()[0]
    assert first.startswith(f"{path}:")
    assert first.endswith(
        f"error: decisions #0 and #1 of {path} both decide tagged::add at workload [] "
        "(@v1 and @v2); keep one"
    )
    assert json.loads(path.read_text())["decisions"][1]["variant"] == "v2"


@pytest.mark.parametrize(
    "export, message",
    [
        (
            {"schema_version": 99},
            f"schema version 99 is newer than this program's ({SCHEMA_VERSION})",
        ),
        (
            {"format": "someone-elses-cache"},
            '"format": "someone-elses-cache" is not this program\'s (\'iree-autotune-cache\')',
        ),
    ],
    ids=["newer schema", "another format"],
)
def test_an_export_of_a_newer_schema_or_another_program_is_refused(tmp_path, export, message):
    mine = _digest(tagged_module())
    run, path = _lower(tmp_path, [_decision("v1", [], mine)], export=export)
    assert run.returncode == 1
    assert run.stderr.startswith(f"error: tuning cache file {path}: {message}")
    assert "Traceback" not in run.stderr
    cache = tmp_path / "cache.sqlite3"
    imported = cli("cache", "import", path, "--cache", cache)
    assert imported.returncode == 1
    assert imported.stderr.startswith(f"error: {path}: {message}")
    assert not cache.exists()  # nothing written


def test_cache_import_keeps_the_cache_as_it_was_on_a_newer_schema(tuned_cache, tmp_path):
    before = tuned_cache.read_bytes()
    export = tmp_path / "new.json"
    exported = cli("cache", "export", export, "--cache", tuned_cache)
    assert exported.returncode == 0, exported.stderr
    data = json.loads(export.read_text())
    data["schema_version"] = 99
    data["decisions"][0]["variant"] = "v0"
    export.write_text(json.dumps(data))
    run = cli("cache", "import", export, "--cache", tuned_cache)
    assert run.returncode == 1
    assert "schema version 99 is newer" in run.stderr
    assert tuned_cache.read_bytes() == before


def _name_variant(cache: Path, variant: str) -> None:
    """Make the cache's only decision name `variant`."""
    conn = sqlite3.connect(cache)
    with conn:
        assert conn.execute("UPDATE decisions SET variant=?", (variant,)).rowcount == 1
    conn.close()


def _variants(cache: Path) -> list[str]:
    conn = sqlite3.connect(cache)
    try:
        return [row[0] for row in conn.execute("SELECT variant FROM decisions")]
    finally:
        conn.close()


def test_a_stored_decision_for_a_missing_variant_is_reported_by_run_and_replaced_by_tune(
    vmfbs, tuned_cache, tmp_path
):
    cache = tmp_path / "stale.sqlite3"
    shutil.copy(tuned_cache, cache)
    _name_variant(cache, "add_zz")
    run = cli("run", vmfbs["explicit"], "--input", "16xf32=0", "--cache", cache, *DEVICE)
    assert run.returncode == 0, run.stderr
    assert (
        f"warning: tuning cache {cache}: the decision for tagged::add at [] names 'add_zz', "
        "which is not a variant of the group (v0, v1, v2); it is not used"
    ) in run.stderr
    assert "result[0]: 16xf32=1 1 1" in run.stdout  # the reference, v0, ran
    tune = cli("tune", vmfbs["explicit"], "--cache", cache, *DEVICE)
    assert tune.returncode == 0, tune.stderr
    assert "names 'add_zz'" in tune.stderr and "replaces it" in tune.stderr
    assert "tuned 1 group/workload key(s)" in tune.stdout
    (stored,) = _variants(cache)
    assert stored in ("v0", "v1", "v2")
    again = cli("tune", vmfbs["explicit"], "--cache", cache, *DEVICE)
    assert again.returncode == 0 and "nothing to tune" in again.stdout
    assert again.stderr == ""
