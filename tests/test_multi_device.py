"""One module, several devices, no Python: a `static` build that keeps several devices'
decisions (`--device all`) asks the device it runs on which it is when it loads
(`hal.device.query`), and each site runs that device's variant; a module built for several
targets (`--target llvm-cpu,vulkan`) runs on each of their devices. Variant k of the tagged
group adds k + 1, so `iree-run-module`'s printed result says which variant ran."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import iree.runtime as rt
import numpy as np
import pytest
from command_line import cli
from conftest import runtime_tool
from modules import tagged_module
from test_vulkan import vulkan_problem

from autotune_bridge.bridge import iree_text
from autotune_bridge.ir import parse_module
from autotune_contracts.cache_file import SCHEMA_VERSION
from autotune_contracts.policy import Policy
from lowering.discovery import collect_groups
from lowering.driver import compile

DEVICES = {"local-task": ("a" * 32, "v1"), "vulkan": ("b" * 32, "v2")}
"""The fleet's decisions: driver -> (device digest, variant chosen there)."""


def _decision(variant: str, device: str, driver: str, workload: list[int] | None = None) -> dict:
    (group,) = collect_groups(parse_module(tagged_module(), "m.mlir"), Policy.STATIC).values()
    return {
        "group": "tagged::add",
        "container": "tagged",
        "group_name": "add",
        "workload": workload or [],
        "variant": variant,
        "module": group.fingerprint(None),
        "device": device,
        "device_info": {"driver": driver, "name": "default", "arch": "x"},
    }


def _files(folder: Path, decisions: list[dict]) -> tuple[Path, Path]:
    """The tagged module and an export of `decisions`, written in `folder`."""
    source = folder / "tagged.mlir"
    source.write_text(tagged_module())
    export = folder / "fleet.json"
    data = {"format": "iree-autotune-cache", "schema_version": SCHEMA_VERSION}
    export.write_text(json.dumps({**data, "decisions": decisions}, indent=1))
    return source, export


def _fleet() -> list[dict]:
    return [_decision(v, digest, driver) for driver, (digest, v) in DEVICES.items()]


def _run(vmfb: Path, device: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            runtime_tool("iree-run-module"),
            f"--device={device}",
            f"--module={vmfb}",
            "--function=run",
            "--input=16xf32=0",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def _result(added: int) -> str:
    return "16xf32=" + " ".join([str(added)] * 16)


@pytest.fixture(scope="module")
def two_device_vmfb(tmp_path_factory) -> Path:
    """The tagged module built for llvm-cpu and vulkan with both devices' decisions."""
    folder = tmp_path_factory.mktemp("fleet")
    source, export = _files(folder, _fleet())
    out = folder / "both.vmfb"
    built = cli(
        "compile", source, "--target", "llvm-cpu,vulkan", "--policy", "static",
        "--cache", export, "--device", "all", "-o", out,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return out


def test_each_cpu_driver_runs_its_own_variant_under_iree_run_module(two_device_vmfb):
    """local-task's decision is v1 (adds 2); local-sync is not in the table and runs the
    first variant (adds 1), as a static build without decisions does."""
    for device, added in (("local-task", 2), ("local-sync", 1)):
        ran = _run(two_device_vmfb, device)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip().endswith(_result(added)), ran.stdout


@pytest.mark.skipif(vulkan_problem() is not None, reason=str(vulkan_problem()))
def test_the_same_module_runs_vulkans_variant_on_vulkan(two_device_vmfb):
    ran = _run(two_device_vmfb, "vulkan")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().endswith(_result(3)), ran.stdout  # v2, vulkan's decision


def test_the_lowered_table_asks_the_device_and_imports_nothing(tmp_path):
    source, export = _files(tmp_path, _fleet())
    lowered = cli("lower", source, "--policy", "static", "--cache", export, "--device", "all")
    assert lowered.returncode == 0, lowered.stderr
    text = lowered.stdout
    for driver in DEVICES:
        assert f'key("hal.device.id" :: "{driver}") : i1, i1 = false' in text
    assert text.count("util.initializer") == 1
    assert "@autotune." not in text  # no host module: stock iree-run-module loads it
    dispatched = {part.split("(")[0] for part in text.split("flow.dispatch @tagged::@")[1:]}
    assert dispatched == {"v0", "v1", "v2"}  # each device's, and the default
    again = iree_text(parse_module(text, "lowered.mlir"), locations=False)
    assert 'key("hal.device.id" :: "vulkan") : i1, i1 = false' in again  # xDSL reads it back


def test_devices_that_choose_the_default_need_no_question_at_load(tmp_path):
    """Every device of the table chose v0, which the devices it lacks run too."""
    decisions = [_decision("v0", "a" * 32, "local-task"), _decision("v0", "b" * 32, "vulkan")]
    source, export = _files(tmp_path, decisions)
    lowered = cli("lower", source, "--policy", "static", "--cache", export, "--device", "all")
    assert lowered.returncode == 0, lowered.stderr
    assert "hal.device.query" not in lowered.stdout
    assert lowered.stdout.count("flow.dispatch @tagged::@") == 1
    assert "flow.dispatch @tagged::@v0(" in lowered.stdout


def test_a_list_of_devices_keeps_those_it_names(tmp_path):
    decisions = [*_fleet(), _decision("v0", "c" * 32, "cuda")]
    source, export = _files(tmp_path, decisions)
    kept = cli(
        "lower", source, "--policy", "static", "--cache", export, "--device", "local-task,cccc"
    )
    assert kept.returncode == 0, kept.stderr
    assert '"local-task")' in kept.stdout and '"cuda")' in kept.stdout
    assert '"vulkan")' not in kept.stdout
    unknown = cli(
        "lower", source, "--policy", "static", "--cache", export, "--device", "local-task,hip"
    )
    assert unknown.returncode == 1
    assert unknown.stderr.startswith(
        f"error: --device 'hip' names none of the devices whose decisions {export} holds"
    )


def test_several_devices_without_a_choice_name_device_all(tmp_path):
    source, export = _files(tmp_path, _fleet())
    refused = cli("lower", source, "--policy", "static", "--cache", export)
    assert refused.returncode == 1
    assert refused.stderr.rstrip().endswith(
        "or keep each device's with --device all (the module then asks the device at load)"
    )


def test_two_devices_of_one_driver_cannot_share_a_table(tmp_path):
    decisions = [*_fleet(), _decision("v0", "d" * 32, "vulkan")]
    source, export = _files(tmp_path, decisions)
    refused = cli("lower", source, "--policy", "static", "--cache", export, "--device", "all")
    assert refused.returncode == 1
    assert refused.stderr == (
        f"error: {export} holds decisions made on 2 devices of the vulkan driver "
        f"({'b' * 12}, {'d' * 12}), which a module cannot tell apart at load (hal.device.id "
        "is the driver's name); keep one of them with --device (a list of digests' first "
        "characters or drivers)\n"
    )


def test_the_python_api_builds_the_same_table(tmp_path):
    """`lowering.compile(..., target="llvm-cpu,vulkan", device="all")`, run by IREE's own
    Python runtime on local-task: v1, local-task's decision."""
    source, export = _files(tmp_path, _fleet())
    vmfb = compile(
        tagged_module(), target="llvm-cpu,vulkan", policy="static", cache=export, device="all"
    )
    config = rt.Config("local-task")
    context = rt.SystemContext(vm_modules=[rt.VmModule.copy_buffer(config.vm_instance, vmfb)],
                               config=config)  # fmt: skip
    x = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(context.modules.module.run(x).to_host(), x + 2)
    del context


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--target", "llvm-cpu,llvm-cpu"], "invalid choice: 'llvm-cpu,llvm-cpu'"),
        (
            ["--target", "llvm-cpu,vulkan", "--arch", "host"],
            "error: --arch 'host' names 1 architecture(s) for 2 targets (llvm-cpu,vulkan); "
            "give one per target, in the same order, or none",
        ),
    ],
)
def test_several_targets_are_checked_before_any_work(tmp_path, arguments, message):
    source, _ = _files(tmp_path, [])
    out = tmp_path / "out.vmfb"
    refused = cli("compile", source, *arguments, "-o", out)
    assert refused.returncode == 1
    assert message in refused.stderr
    assert not out.exists()
