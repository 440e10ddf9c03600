"""`iree-autotune import-triton` through the installed console script: modules rebuilt
from bundles per arch, one-line errors for broken bundles and bad kernel and config specs,
configs from JSON and Python files, the pinned `triton` extra. The messages without triton
are checked with a `triton` package that fails to import placed first on PYTHONPATH, so they
run whether or not triton is installed; only `test_import_with_triton_*` needs triton. The
documented commands run in test_triton_docs.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import IREE_AUTOTUNE, ROOT
from triton_data import (
    ARCHS,
    TRITON,
    bundle,
    bundle_path,
)

from lowering.triton import (
    Config,
    TritonImportError,
    load_configs,
)
from lowering.triton.loader import load, locate, parse_reference

# --- the command line ------------------------------------------------------------------------------


def _cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IREE_AUTOTUNE, "import-triton", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=env,
    )


def test_cli_rebuilds_from_bundles_per_arch(tmp_path):
    result = _cli(
        "--from-bundle",
        str(bundle_path("vecadd", "sm_80")),
        "--from-bundle",
        str(bundle_path("vecadd", "sm_90")),
        "-o",
        str(tmp_path / "vecadd.mlir"),
        "--ptx-file",
    )
    assert result.returncode == 0, result.stderr
    for arch in ARCHS:
        mlir = tmp_path / f"vecadd.{arch}.mlir"
        assert mlir.read_text() == bundle("vecadd", arch).mlir(f"vecadd.{arch}.ptx")
        assert (tmp_path / f"vecadd.{arch}.ptx").read_text() == (
            TRITON / f"vecadd.{arch}.ptx"
        ).read_text()
    assert not (tmp_path / "vecadd.mlir").exists()


def test_broken_bundles_are_one_line_errors(tmp_path):
    shutil.copytree(TRITON / "raw", tmp_path / "raw")
    data = json.loads(bundle_path("vecadd", "sm_80").read_text())
    del data["spec"]
    (tmp_path / "nospec.json").write_text(json.dumps(data))
    data = json.loads(bundle_path("vecadd", "sm_80").read_text())
    data["variants"][0]["ptx"] = "bad.ptx.gz"
    (tmp_path / "bad.ptx.gz").write_bytes(b"not gzip")
    (tmp_path / "badptx.json").write_text(json.dumps(data))
    for name, message in [
        ("nospec.json", f"{tmp_path / 'nospec.json'} is not a valid bundle (no 'spec')"),
        ("badptx.json", f"cannot read {tmp_path / 'bad.ptx.gz'}: Not a gzipped file (b'no')"),
    ]:
        result = _cli("--from-bundle", str(tmp_path / name), "-o", str(tmp_path / "out.mlir"))
        assert (result.returncode, result.stderr) == (1, f"error: {message}\n")
    assert not (tmp_path / "out.mlir").exists()


def _triton_installed() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


MATMUL_ARGS = (
    "--signature",
    "a_ptr=*fp16[M,K], b_ptr=*fp16[K,N], c_ptr=*fp16[M,N], M=i32:M, N=i32:N, K=i32:K, "
    "stride_am=i32:K, stride_ak=1, stride_bk=i32:N, stride_bn=1, stride_cm=i32:N, stride_cn=1",
    "--grid",
    "cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)",
)
VECADD_ARGS = (
    "--signature",
    "x_ptr=*fp32[n], y_ptr=*fp32[n], output_ptr=*fp32[n], n_elements=i32:n",
    "--grid",
    "cdiv(n, BLOCK_SIZE)",
)
NO_TRITON = (
    "error: triton is not installed: install iree-autotune[triton] "
    "(pip install 'iree-autotune[triton]', triton==3.9.0)\n"
)


@pytest.fixture
def without_triton(tmp_path) -> dict[str, str]:
    """An environment in which `import triton` fails, whether or not triton is installed."""
    shadow = tmp_path / "no-triton"
    (shadow / "triton").mkdir(parents=True)
    (shadow / "triton" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'triton'\", name='triton')\n"
    )
    return {**os.environ, "PYTHONPATH": str(shadow)}


@pytest.mark.parametrize(
    "kernel", ["examples.triton.matmul:matmul_kernel", "examples/triton/matmul.py:matmul_kernel"]
)
def test_cli_finds_the_kernel_from_the_current_folder_then_asks_for_triton(
    kernel, tmp_path, without_triton
):
    out = tmp_path / "matmul.mlir"
    result = _cli(kernel, *MATMUL_ARGS, "-o", str(out), cwd=ROOT, env=without_triton)
    assert (result.returncode, result.stderr) == (1, NO_TRITON)
    assert not out.exists()
    # The same command where no examples/ folder is: the kernel is looked up from there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = _cli(kernel, *MATMUL_ARGS, "-o", str(out), cwd=elsewhere, env=without_triton)
    assert result.returncode == 1
    if ":" in kernel and "/" not in kernel:
        assert result.stderr == (
            f"error: {kernel}: no module named 'examples' in the current folder ({elsewhere}) "
            "or on the Python path; run from the folder that holds it, or give "
            "path/to/file.py:matmul_kernel\n"
        )
    else:
        assert result.stderr == f"error: {kernel}: no file examples/triton/matmul.py\n"


@pytest.mark.parametrize(
    ("kernel", "extra", "message"),
    [
        (
            "examples.triton.vecadd",
            (),
            "kernel 'examples.triton.vecadd': expected module.path:NAME or path/to/file.py:NAME",
        ),
        (
            "examples.triton.vecadd:1st",
            (),
            "kernel 'examples.triton.vecadd:1st': expected module.path:NAME or "
            "path/to/file.py:NAME",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "CONFIGS"),
            "--configs 'CONFIGS': expected a JSON list, FILE.json, module.path:NAME or "
            "path/to/file.py:NAME",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "missing.json"),
            "--configs: cannot read missing.json: No such file or directory",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", '[{"BLOCK_SIZE": 256'),
            "--configs: the text is not valid JSON: Expecting ',' delimiter: line 1 column 20 "
            "(char 19)",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", '[{"BLOCK_SIZE": 256, "num_warps": "two"}]'),
            "config option num_warps='two': expected an integer",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "examples/triton/configs.py:CONFIGS"),
            "examples/triton/configs.py:CONFIGS: no file examples/triton/configs.py",
        ),
        (
            "examples.triton.vecadd:add_kernel",
            ("--configs", "examples.triton.tuning:CONFIGS"),
            "examples.triton.tuning:CONFIGS: no module named 'examples.triton.tuning' in the "
            f"current folder ({ROOT}) or on the Python path; run from the folder that holds "
            "it, or give path/to/file.py:CONFIGS",
        ),
    ],
)
def test_bad_kernel_and_config_specs_are_one_line_errors(
    kernel, extra, message, tmp_path, without_triton
):
    out = tmp_path / "vecadd.mlir"
    result = _cli(kernel, *VECADD_ARGS, *extra, "-o", str(out), cwd=ROOT, env=without_triton)
    assert (result.returncode, result.stderr) == (1, f"error: {message}\n")
    assert not out.exists()


def test_configs_from_json_files_and_python_files(tmp_path, monkeypatch):
    configs = [{"BLOCK_SIZE": 256, "num_warps": 2}, {"kwargs": {"BLOCK_SIZE": 64}, "num_stages": 1}]
    expected = [Config({"BLOCK_SIZE": 256}, num_warps=2), Config({"BLOCK_SIZE": 64}, num_stages=1)]
    (tmp_path / "configs.json").write_text(json.dumps(configs))
    monkeypatch.chdir(tmp_path)
    assert load_configs("configs.json") == expected
    assert load_configs("@configs.json") == expected
    assert load_configs(json.dumps(configs)) == expected
    assert load_configs(json.dumps(configs[0])) == expected[:1]
    # A Python list of dicts, by module path (from the current folder) or file path.
    (tmp_path / "tuning").mkdir()
    (tmp_path / "tuning" / "__init__.py").write_text("")
    (tmp_path / "tuning" / "sets.py").write_text(f"CONFIGS = {configs!r}\nOTHER = 3\n")
    (tmp_path / "broken.py").write_text("CONFIGS = [\n")
    path_before = list(sys.path)
    try:
        for ref in ("tuning.sets:CONFIGS", "tuning/sets.py:CONFIGS"):
            found = parse_reference(ref, "--configs")
            locate(found)
            assert [Config.from_any(c) for c in load(found)] == expected
            assert sys.path == path_before
        with pytest.raises(TritonImportError, match=r"tuning.sets has no attribute 'MISSING'$"):
            load(parse_reference("tuning.sets:MISSING", "--configs"))
        with pytest.raises(TritonImportError, match=r"cannot load broken.py: SyntaxError: "):
            load(parse_reference("broken.py:CONFIGS", "--configs"))
        assert sys.path == path_before
    finally:
        for name in ("tuning", "tuning.sets", "sets"):
            sys.modules.pop(name, None)


def test_triton_extra_is_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["triton"] == ["triton==3.9.0"]


@pytest.mark.skipif(
    not _triton_installed(), reason="triton not installed (pip install iree-autotune[triton])"
)
@pytest.mark.parametrize("arch", ARCHS)
def test_import_with_triton_reproduces_shipped_vecadd(arch):
    from lowering.triton import import_triton

    shipped = bundle("vecadd", arch)
    spec = shipped.spec
    (k,) = import_triton(
        spec.kernel,
        [a.spec() for a in spec.args],
        grid=[g.text for g in spec.grid],
        configs="examples.triton.vecadd:CONFIGS",
        archs=(arch,),
        samples=spec.samples,
    ).values()
    assert k.ptx() == shipped.ptx()
    assert k.mlir("x.ptx") == shipped.mlir("x.ptx")
