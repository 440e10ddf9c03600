"""Compile driver: lowered IR to a `.vmfb` with the stock `iree-compile` of the wheel.

`iree-compile` runs as a child process in a session of its own that the kernel ends when
this process dies (however it dies: interrupted, terminated or killed), so that no
compile outlives the command that started it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from iree.compiler.tools.binaries import find_tool

from autotune_dialect.diagnostics import DiagnosticError
from lowering.autotune_to_iree import lower_to_iree

TARGETS = ("llvm-cpu", "cuda")
DEFAULT_CUDA_ARCH = "sm_80"
_ERROR_LINE = re.compile(r"^(?P<where>[^\n]*?:\d+:\d+: )?error: (?P<message>.*)$", re.MULTILINE)
_CRASHED_PASS = re.compile(r"::(\w+Pass)::runOnOperation\(\)")


def target_flags(target: str, arch: str | None = None) -> list[str]:
    """`iree-compile` flags selecting a target (llvm-cpu: the host CPU unless `arch`)."""
    if target == "llvm-cpu":
        return [
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            f"--iree-llvmcpu-target-cpu={arch or 'host'}",
        ]
    if target == "cuda":
        return ["--iree-hal-target-device=cuda", f"--iree-cuda-target={arch or DEFAULT_CUDA_ARCH}"]
    raise DiagnosticError(f"unknown target '{target}'; expected one of {', '.join(TARGETS)}")


def compile_lowered(
    text: str,
    target: str = "llvm-cpu",
    arch: str | None = None,
    object_dir: str | Path | None = None,
    extra_args: list[str] | None = None,
) -> bytes:
    """Compile IREE input IR; any `error:` diagnostic fails, even with exit code 0."""
    flags = target_flags(target, arch)
    if object_dir is not None:
        flags.append(f"--iree-hal-executable-object-search-path={Path(object_dir).resolve()}")
    flags += extra_args or []
    returncode, result, log = run_iree_compile(text, flags)
    if returncode != 0:
        error = first_error(log)
        raise DiagnosticError(
            failure_summary(log, returncode) if error is None else name_generated_code(error, text)
        )
    check_diagnostics(log, text)
    return result


# Run in the child instead of a `preexec_fn` (Python code between fork and exec may
# deadlock when this process has other threads, as a pool of compile jobs does): ask the
# kernel to kill it when its parent dies, check that the parent has not died already,
# then become the tool.
_LAUNCHER = """
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
os.execv(sys.argv[2], sys.argv[2:])
"""


def _command(tool: str, *args: str) -> list[str]:
    """The command line that runs `tool`, killed with this process on Linux."""
    if sys.platform.startswith("linux"):
        return [sys.executable, "-c", _LAUNCHER, str(os.getpid()), tool, *args]
    return [tool, *args]


def run_iree_compile(text: str, flags: list[str]) -> tuple[int, bytes, str]:
    """(exit code, the module, what iree-compile printed) for IR text and flags."""
    with tempfile.TemporaryDirectory(prefix="iree-autotune-") as folder:
        output = Path(folder) / "module.vmfb"
        process = subprocess.Popen(
            _command(find_tool("iree-compile"), "-", *flags, "-o", str(output)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            log, _ = process.communicate(text.encode())
        except BaseException:  # interrupted: the compile must not live on
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        module = output.read_bytes() if output.exists() else b""
    return process.returncode, module, log.decode(errors="replace")


def check_diagnostics(log: str, lowered: str = "") -> None:
    """Fail on any `error:` line that iree-compile printed; pass other output on."""
    error = first_error(log)
    if error is not None:
        raise DiagnosticError(
            f"iree-compile reported an error: {name_generated_code(error, lowered)}"
        )
    if log.strip():
        sys.stderr.write(log)


def failure_summary(report: str, returncode: int) -> str:
    """One line for an `iree-compile` failure that printed no `error:` diagnostic (a
    crash): its exit code and the compiler pass it died in, when the stack dump names one."""
    where = _CRASHED_PASS.search(report)
    return (
        "iree-compile "
        + (f"crashed in {where.group(1)}" if where else "failed")
        + f" (exit code {returncode}); `iree-autotune lower` writes the IR it was given"
    )


_LOCATION_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)$", re.MULTILINE)
_FILE_LINE_COL = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)$')
_NAMED = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$')
_WHERE = re.compile(r"^(.*?):(\d+):(\d+): ")


def name_generated_code(error: str, lowered: str) -> str:
    """An `iree-compile` error at a place where the lowering generated code names that
    code: `file:line:col: message (in variant @v1 (autotune.group @g))`. iree-compile
    prints only the file location of such code (a `NameLoc` in the lowered text)."""
    where = _WHERE.match(error)
    if where is None or not lowered:
        return error
    aliases = dict(_LOCATION_ALIAS.findall(lowered))

    def file_location(body: str, depth: int = 0) -> tuple[str, str, str] | None:
        """The file location MLIR shows for a location: the callee of a call site, the
        first of a fused location, the inner location of a name."""
        body = aliases.get(body, body)
        if depth > 16:
            return None
        if (plain := _FILE_LINE_COL.match(body)) is not None:
            return plain.group(1), plain.group(2), plain.group(3)
        if body.startswith("callsite(") and " at " in body:
            return file_location(body[len("callsite(") : body.index(" at ")], depth + 1)
        if body.startswith("fused[") and body.endswith("]"):
            return file_location(body[len("fused[") : -1].split(", ")[0], depth + 1)
        if (named := _NAMED.match(body)) is not None:
            return file_location(named.group(2), depth + 1)
        return None

    names: set[str] = set()
    for body in aliases.values():
        named = _NAMED.match(body)
        if named is not None and file_location(named.group(2)) == where.groups():
            names.add(named.group(1))
    if not names:
        return error
    listed = "; ".join(sorted(names)[:4]) + ("; ..." if len(names) > 4 else "")
    # The place may also be the user's own op (e.g. the kernel a variant was copied from).
    return f"{error} (code generated here: {listed})"


def first_error(log: str) -> str | None:
    """The first `error:` diagnostic of a compiler log, with its location."""
    match = _ERROR_LINE.search(log)
    if match is None:
        return None
    return (match.group("where") or "") + match.group("message")


def compile(  # noqa: A001 - the public name the API promises
    text: str,
    target: str = "llvm-cpu",
    arch: str | None = None,
    filename: str | Path = "<input>",
    policy: str = "online",
    cache: str | Path | None = None,
    extra_args: list[str] | None = None,
) -> bytes:
    """Lower autotune IR and compile it to a `.vmfb` for `target`.

    Object files named by relative paths resolve against the folder of `filename`.
    """
    lowered = lower_to_iree(text, policy=policy, cache=cache, filename=str(filename), target=target)
    folder = Path(filename).parent if str(filename) != "<input>" else None
    return compile_lowered(lowered, target, arch, folder, extra_args)
