"""iree-compile flags from the command line: the RFC's example (iree-org/iree#13848, PTX
kernels in a `hal.executable.source` whose object is named by a relative path) compiles
with its object in a folder given by `--object-search-path`, and is refused naming the
object without it; `--iree-compile-arg` reaches iree-compile, and one it refuses is its
own message, exit status 1, no traceback, no output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA
from vmfb_cuda import cuda_exports

CLI = Path(sys.executable).parent / "iree-autotune"
KERNELS = DATA / "cuda"  # vecadd.ptx
RFC = DATA / "semi_affine" / "rfc_ptx.mlir"


def run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *map(str, argv)], capture_output=True, text=True)


@pytest.fixture
def rfc_example(tmp_path: Path) -> Path:
    """The RFC's example in a folder of its own, naming its object `vecadd.ptx`, which
    is elsewhere (tests/data/cuda)."""
    folder = tmp_path / "model"
    folder.mkdir()
    path = folder / "rfc.mlir"
    text = RFC.read_text()
    assert 'path = "../cuda/vecadd.ptx"' in text
    path.write_text(text.replace("../cuda/vecadd.ptx", "vecadd.ptx"))
    return path


@pytest.mark.parametrize("policy", ["online", "static"])
def test_the_rfc_example_compiles_with_its_object_found_in_the_search_path(
    rfc_example, tmp_path, policy
):
    out = tmp_path / "rfc.vmfb"
    argv = ["compile", rfc_example, "--target", "cuda", "--arch", "sm_80", "--policy", policy]
    made = run(*argv, "--object-search-path", KERNELS, "-o", out)
    assert made.returncode == 0, made.stderr
    exports, ptx = cuda_exports(out.read_bytes())
    assert ptx == [(KERNELS / "vecadd.ptx").read_text()]
    expected = ["add_64"] if policy == "static" else ["add_64", "add_128"]
    assert [e.name for e in exports] == expected
    assert [e.block_dims for e in exports] == [(64, 1, 1), (128, 1, 1)][: len(expected)]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        # online: the group's fingerprint (the tuning cache key) reads the object
        ("online", 'cannot read object file "vecadd.ptx" of @exe (No such file or directory'),
        # static: no fingerprint; iree-compile itself cannot load it
        (
            "static",
            'object file could not be loaded: #hal.executable.object<{path = "vecadd.ptx"}>',
        ),
    ],
)
def test_without_the_search_path_the_missing_object_is_named(
    rfc_example, tmp_path, policy, message
):
    out = tmp_path / "rfc.vmfb"
    argv = ["compile", rfc_example, "--target", "cuda", "--policy", policy, "-o", out]
    failed = run(*argv)
    assert failed.returncode == 1
    assert message in failed.stderr and "Traceback" not in failed.stderr
    assert failed.stderr.startswith(f"{rfc_example}:6:3: error: ")
    assert not out.exists()


def test_lower_reads_the_object_from_the_search_path_for_the_fingerprint(rfc_example, tmp_path):
    without = run("lower", rfc_example)
    assert without.returncode == 1 and 'cannot read object file "vecadd.ptx"' in without.stderr
    lowered = run("lower", rfc_example, "--object-search-path", KERNELS)
    assert lowered.returncode == 0, lowered.stderr
    # the same key (the tuning cache's) as with the object next to the file
    beside = tmp_path / "beside"
    beside.mkdir()
    (beside / "rfc.mlir").write_text(rfc_example.read_text())
    (beside / "vecadd.ptx").write_bytes((KERNELS / "vecadd.ptx").read_bytes())
    by_file = run("lower", beside / "rfc.mlir")
    fingerprint = r"\22fingerprint\22: \22"
    key = lowered.stdout.split(fingerprint)[1][:32]
    assert key == by_file.stdout.split(fingerprint)[1][:32]


def test_a_search_path_that_does_not_exist_is_refused(rfc_example, tmp_path):
    out = tmp_path / "rfc.vmfb"
    failed = run(
        "compile",
        rfc_example,
        "--target",
        "cuda",
        "--object-search-path",
        tmp_path / "no",
        "-o",
        out,
    )
    assert failed.returncode == 1
    assert failed.stderr == f"error: object search path {tmp_path / 'no'} does not exist\n"


def test_an_extra_flag_reaches_iree_compile(rfc_example, tmp_path):
    dump = tmp_path / "sources"
    out = tmp_path / "rfc.vmfb"
    made = run(
        "compile",
        rfc_example,
        "--target",
        "cuda",
        "--object-search-path",
        KERNELS,
        f"--iree-compile-arg=--iree-hal-dump-executable-sources-to={dump}",
        "-o",
        out,
    )
    assert made.returncode == 0, made.stderr
    (source,) = dump.iterdir()
    assert source.name == "module_exe.mlir"
    assert "hal.executable.export public @add_64" in source.read_text()


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--iree-no-such-flag", "Unknown command line argument '--iree-no-such-flag'."),
        ("--iree-hal-memoization=maybe", "'maybe' is invalid value for boolean argument!"),
    ],
)
def test_a_flag_iree_compile_refuses_is_its_message(rfc_example, tmp_path, flag, message):
    out = tmp_path / "rfc.vmfb"
    argv = ["compile", rfc_example, "--target", "cuda", "--object-search-path", KERNELS]
    failed = run(*argv, f"--iree-compile-arg={flag}", "-o", out)
    assert failed.returncode == 1
    assert failed.stderr.startswith("error: iree-compile refused its flags: ")
    assert message in failed.stderr and "Traceback" not in failed.stderr
    assert not out.exists()


# --- tune-model: the user's flags reach every build it runs ----------------------------------


def test_tune_model_passes_the_users_flags_to_every_build(tmp_path, monkeypatch):
    from dataclasses import replace

    from small_models import MLP, SMALL, assert_computes_the_mlp, fake_benchmark

    import autotune_model.bench as bench
    import autotune_model.tuning_setup as tuning_setup
    import lowering.driver as driver
    from autotune_model import tune_model

    dump = tmp_path / "sources"
    flag = f"--iree-hal-dump-executable-sources-to={dump}"
    commands: list[list[str]] = []
    real = driver.run_iree_compile

    def recording(text, flags, *args, **kwargs):
        commands.append(list(flags))
        return real(text, flags, *args, **kwargs)

    for module in (driver, bench, tuning_setup):
        monkeypatch.setattr(module, "run_iree_compile", recording)
    options = replace(SMALL, compile_args=(flag,), compile_cache=False)
    tuned = tune_model(MLP, options, benchmark_job=fake_benchmark)
    builds = [c for c in commands if any(f.startswith("--iree-hal-target-device") for f in c)]
    assert len(builds) >= 4  # the stock build, candidates, the tuned module...
    assert all(flag in c for c in builds), [c for c in builds if flag not in c]
    assert any(dump.glob("*.mlir"))
    assert_computes_the_mlp(tuned.vmfb)
    assert flag not in driver.target_flags("llvm-cpu")  # outside tune_model: none


def test_tune_model_refuses_a_flag_iree_compile_refuses_before_any_work(tmp_path):
    model = tmp_path / "mlp.mlir"
    model.write_text((DATA / "flow" / "src" / "mlp.mlir").read_text())
    out = tmp_path / "mlp.vmfb"
    result = run("tune-model", model, "-o", out, "--iree-compile-arg=--iree-nope")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "iree-compile refused its flags: Unknown command line argument '--iree-nope'" in (
        result.stderr
    )
    assert not out.exists()
