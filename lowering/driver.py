"""Compile driver: lowered IR to a `.vmfb` with the stock `iree-compile` of the wheel.

`iree-compile` runs as a child process in a session of its own that the kernel ends when
this process dies (however it dies: interrupted, terminated or killed), so that no
compile outlives the command that started it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iree.compiler.tools.binaries import find_tool

from autotune_contracts.errors import DiagnosticError, SourceLocation, shorten_literals
from autotune_contracts.policy import Policy
from autotune_dialect.diagnostics import named_value
from lowering.autotune_to_iree import lower_to_iree
from lowering.target_devices import TargetChoices, joined_device_flags, paired_archs, split_targets

TARGETS = ("llvm-cpu", "cuda", "rocm", "vulkan")
DEFAULT_CUDA_ARCH = "sm_80"
CUDA_ARCHS = (
    "sm_60",
    "sm_61",
    "sm_62",
    "sm_70",
    "sm_72",
    "sm_75",
    "sm_80",
    "sm_86",
    "sm_87",
    "sm_89",
    "sm_90",
    "sm_120",
    "sm_121",
)
"""CUDA architectures iree-compile 3.13 builds for (probed: others are refused, or are
accepted and then fail with "missing GPU target", or are passed on unchecked)."""
CUDA_EXTERNAL_ONLY = frozenset({"sm_90"})
"""Architectures iree-compile 3.13 has no code generator for: only `hal.executable.source`
kernels (PTX objects) build for them ("missing GPU target" otherwise)."""
DEFAULT_ROCM_ARCH = "gfx942"
ROCM_ARCHS = (
    "gfx908",
    "gfx90a",
    "gfx942",
    "gfx950",
    "gfx1100",
    "gfx1101",
    "gfx1103",
    "gfx1150",
    "gfx1151",
    "gfx1200",
    "gfx1201",
    "gfx1250",
)
"""AMD GPU architectures iree-compile 3.13 builds for (probed: others, such as gfx906,
gfx1030 or gfx1102, are refused with "Unknown ROCM target")."""
DEFAULT_VULKAN_ARCH = "vp_android_baseline_2022"
"""iree-compile's own Vulkan target (SPIR-V 1.3, no subgroup operations, 128 threads a
workgroup), which Mesa's llvmpipe runs. Others are GPU families or chips (`ampere`,
`rdna3`, `valhall4`, `adreno`, `gfx1100`, `sm_86`, `llvmpipe`, ...), checked by asking
iree-compile (`vulkan_arch_problem`)."""
_VULKAN_ARCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_UNKNOWN_VULKAN = re.compile(r"Unknown Vulkan target '")
_CPU_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
_UNKNOWN_CPU = re.compile(r"is not a recognized processor|^Unknown CPU for target", re.MULTILINE)
_ACCEPTED_CPUS = re.compile(r"^List of accepted CPUs: (.*)$", re.MULTILINE)
_CRASHED_PASS = re.compile(r"::(\w+Pass)::runOnOperation\(\)")
_REFUSED_FLAG = re.compile(r"^iree-compile: (.*?)(?:\s+Try: '.*--help')?$", re.MULTILINE)
"""A line where iree-compile refuses its command line (an unknown flag, a bad value)."""


def _shown(text: str) -> str:
    """A user's string quoted for a message (control characters escaped, long ones cut)."""
    return repr(text if len(text) <= 64 else text[:64] + "...")


def _known_arch(kind: str, arch: str, known: Sequence[str], more: str = "") -> str:
    """`arch`, where it is one iree-compile 3.13 builds for (`known`), else an error
    listing them (and `more` after the list)."""
    if arch not in known:
        raise DiagnosticError(
            f"unknown {kind} architecture {_shown(str(arch))}; iree-compile 3.13 builds for "
            + ", ".join(known)
            + more
        )
    return arch


def check_target(target: str, arch: str | None = None) -> str:
    """The architecture to build `target` for (its default when `arch` is None), once
    both are known to iree-compile; else a `DiagnosticError` listing what is accepted.

    `cuda` takes one of `CUDA_ARCHS`, `rocm` one of `ROCM_ARCHS`; `llvm-cpu` takes `host`
    or a CPU name that iree-compile's LLVM knows (asked once per name: `cpu_problem`);
    `vulkan` a target iree-compile knows (`vulkan_arch_problem`). Several targets
    (`llvm-cpu,vulkan`, `lowering.target_devices`) take one `arch` each, or none."""
    if isinstance(target, str) and "," in target:
        return _checked_targets(target, arch)
    if target not in TARGETS:
        raise DiagnosticError(
            f"unknown target {_shown(str(target))}; expected one of {', '.join(TARGETS)}"
        )
    if target == "rocm":
        return _known_arch("ROCm", DEFAULT_ROCM_ARCH if arch is None else arch, ROCM_ARCHS)
    if target == "vulkan":
        return _checked_vulkan_arch(DEFAULT_VULKAN_ARCH if arch is None else arch)
    if target == "cuda":
        external = f" ({', '.join(sorted(CUDA_EXTERNAL_ONLY))}: hal.executable.source kernels only)"
        return _known_arch(
            "CUDA", DEFAULT_CUDA_ARCH if arch is None else arch, CUDA_ARCHS, external
        )
    arch = "host" if arch is None else arch
    if arch == "host":
        return arch
    if not isinstance(arch, str) or _CPU_NAME.fullmatch(arch) is None:
        raise DiagnosticError(
            f"{_shown(str(arch))} is not a CPU name; expected 'host' or a CPU name that LLVM "
            "knows (letters, digits and - _ . +), such as x86-64-v3 or znver4"
        )
    problem = cpu_problem(arch)
    if problem is not None:
        raise DiagnosticError(problem)
    return arch


def _checked_targets(target: str, arch: str | None) -> str:
    """The architectures of several targets, joined by commas, each checked."""
    if target not in TargetChoices(TARGETS):
        raise DiagnosticError(
            f"unknown targets {_shown(target)}; expected some of {', '.join(TARGETS)}, each "
            "once, joined by commas (llvm-cpu,vulkan)"
        )
    targets = split_targets(target)
    archs = paired_archs(targets, arch)
    return ",".join(check_target(t, a) for t, a in zip(targets, archs, strict=True))


@functools.cache
def cpu_problem(cpu: str) -> str | None:
    """Why iree-compile refuses `cpu` for `llvm-cpu` (its own list of the CPUs it accepts),
    or None. It is asked with a module of one empty function (half a second)."""
    _, _, log = run_iree_compile(
        "util.func public @f() {\n  util.return\n}\n",
        [*_flags("llvm-cpu", cpu), "--compile-to=hal"],
    )
    return _cpu_refusal(log, cpu)


def _checked_vulkan_arch(arch: str) -> str:
    if not isinstance(arch, str) or _VULKAN_ARCH.fullmatch(arch) is None:
        raise DiagnosticError(
            f"{_shown(str(arch))} is not a Vulkan target name; expected e.g. "
            f"{DEFAULT_VULKAN_ARCH} (the default), ampere, rdna3 or valhall4"
        )
    problem = None if arch == DEFAULT_VULKAN_ARCH else vulkan_arch_problem(arch)
    if problem is not None:
        raise DiagnosticError(problem)
    return arch


@functools.cache
def vulkan_arch_problem(arch: str) -> str | None:
    """Why iree-compile refuses `arch` as a Vulkan target, or None. It is asked with a
    module of one elementwise dispatch (a second); an unknown target makes it crash after
    saying so (`Unknown Vulkan target`)."""
    probe = (
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %b = arith.addf %a, %a : tensor<4xf32>\n  return %b : tensor<4xf32>\n}\n"
    )
    _, _, log = run_iree_compile(probe, [*_flags("vulkan", arch), "--compile-to=hal"])
    if _UNKNOWN_VULKAN.search(log) is None:
        return None
    return (
        f"iree-compile does not know the Vulkan target {_shown(arch)}; it knows "
        f"{DEFAULT_VULKAN_ARCH} (the default), GPU families such as ampere, rdna3, valhall4 "
        "or adreno, and chips such as gfx1100 or sm_86"
    )


def _cpu_refusal(log: str, cpu: str) -> str | None:
    """The message for a compiler log that says the CPU is unknown, else None."""
    if _UNKNOWN_CPU.search(log) is None:
        return None
    accepted = _ACCEPTED_CPUS.search(log)
    known = f"; it accepts host or one of: {accepted.group(1).strip()}" if accepted else ""
    return f"iree-compile does not know the CPU {_shown(cpu)} (llvm-cpu){known}"


def _flags(target: str, arch: str) -> list[str]:
    if "," in target:
        pairs = zip(split_targets(target), arch.split(","), strict=True)
        return joined_device_flags([_flags(t, a) for t, a in pairs])
    if target == "llvm-cpu":
        return [
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            f"--iree-llvmcpu-target-cpu={arch}",
        ]
    if target == "rocm":
        return ["--iree-hal-target-device=hip", f"--iree-rocm-target={arch}"]
    if target == "vulkan":
        return ["--iree-hal-target-device=vulkan", f"--iree-vulkan-target={arch}"]
    return ["--iree-hal-target-device=cuda", f"--iree-cuda-target={arch}"]


_USER_FLAGS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "user_flags", default=()
)


@contextlib.contextmanager
def user_flags(flags: Sequence[str]) -> Iterator[None]:
    """While the block runs, every build of a target (`target_flags`, `compile_lowered`)
    passes `flags` on to iree-compile after the target's own: the user's flags, for a
    command that runs many builds (tune-model: candidates, option sets, the stock build)."""
    token = _USER_FLAGS.set(tuple(flags))
    try:
        yield
    finally:
        _USER_FLAGS.reset(token)


def target_flags(target: str, arch: str | None = None) -> list[str]:
    """`iree-compile` flags selecting a target (llvm-cpu: the host CPU unless `arch`),
    checked first (`check_target`), and the user's (`user_flags`)."""
    return [*_flags(target, check_target(target, arch)), *_USER_FLAGS.get()]


def object_search_flags(folders: Sequence[str | Path]) -> list[str]:
    """The flags that have iree-compile look for relative object paths in `folders`, in
    order; a folder that does not exist is refused (it would be passed over silently)."""
    flags = []
    for folder in folders:
        if not Path(folder).is_dir():
            problem = "is not a folder" if Path(folder).exists() else "does not exist"
            raise DiagnosticError(f"object search path {folder} {problem}")
        flags.append(f"--iree-hal-executable-object-search-path={Path(folder).resolve()}")
    return flags


@functools.cache
def compile_args_problem(target: str, arch: str, args: tuple[str, ...]) -> str | None:
    """Why iree-compile refuses the extra flags `args` (its own words), or None. It is
    asked with a module of one empty function, so that a wrong flag is refused before
    any work rather than failing every build."""
    if not args:
        return None
    code, _, log = run_iree_compile(
        "util.func public @f() {\n  util.return\n}\n",
        [*_flags(target, arch), *args, "--compile-to=input"],
    )
    return _flag_refusal(log) if code != 0 else None


def _flag_refusal(log: str) -> str | None:
    """iree-compile's words where it refused its command line, else None."""
    lines = [m.group(1).strip() for m in _REFUSED_FLAG.finditer(log)]
    return "iree-compile refused its flags: " + " ".join(lines) if lines else None


def compile_lowered(
    text: str,
    target: str = "llvm-cpu",
    arch: str | None = None,
    object_dir: str | Path | None = None,
    extra_args: Sequence[str] | None = None,
    source: str | None = None,
    filename: str | None = None,
    object_search: Sequence[str | Path] = (),
) -> bytes:
    """Compile IREE input IR; any `error:` diagnostic fails, even with exit code 0.

    Relative object paths resolve against `object_dir` (the input's folder), then each
    folder of `object_search`. Errors are reported at the place their op came from
    (`compiler_error`): `source`, the text of the user's file `filename`, gives the line
    shown under one in that file."""
    arch = check_target(target, arch)
    flags = [*_flags(target, arch), *_USER_FLAGS.get()]
    folders = [object_dir] if object_dir is not None else []
    flags += object_search_flags([*folders, *object_search])
    flags += extra_args or []
    flags += _LOCATION_FLAGS
    returncode, result, log = run_iree_compile(text, flags)
    context = _Context(text, source, filename, target, arch)
    if target == "llvm-cpu" and (refusal := _cpu_refusal(log, arch)) is not None:
        raise DiagnosticError(refusal)  # LLVM's warning, then a crash or a build for no CPU
    if returncode != 0:
        raise compiler_error(log, context) or DiagnosticError(failure_summary(log, returncode))
    check_diagnostics(log, text, context)
    return result


_LOCATION_FLAGS = ["--mlir-print-debuginfo", "--mlir-print-local-scope"]
"""The op that iree-compile shows under an error (`see current operation:`) then carries
its whole location, with the names of generated code."""


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


SPEC_FLAG = "--iree-codegen-tuning-spec-path"
"""The `iree-compile` flag that applies a tuning spec (a transform library of configurations)."""

SERIAL = "--mlir-disable-threading"


def _spec_loaded_on_one_thread(flags: list[str]) -> list[str]:
    """`flags`, compiling on one thread where they apply a tuning spec: iree-compile 3.13 can
    hang for good when it loads the spec while it configures executables on several threads
    (seen: a worker waiting on the transform library's lock, in
    `getOrLoadTransformLibraryModule`, with the other threads idle)."""
    if SERIAL in flags or not any(f.startswith(SPEC_FLAG) for f in flags):
        return flags
    return [*flags, SERIAL]


def run_iree_compile(text: str, flags: list[str]) -> tuple[int, bytes, str]:
    """(exit code, the module, what iree-compile printed) for IR text and flags."""
    flags = _spec_loaded_on_one_thread(flags)
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


def check_diagnostics(log: str, lowered: str = "", context: _Context | None = None) -> None:
    """Fail on any `error:` line that iree-compile printed; pass other output on."""
    error = compiler_error(log, context or _Context(lowered))
    if error is not None:
        error.message = f"iree-compile reported an error: {error.message}"
        raise error
    if log.strip():
        sys.stderr.write(shorten_literals(log))


def failure_summary(report: str, returncode: int) -> str:
    """One line for an `iree-compile` failure that printed no `error:` diagnostic: its
    words where it refused its command line (a wrong flag), else (a crash) its exit code
    and the compiler pass it died in, when the stack dump names one."""
    refusal = _flag_refusal(report)
    if refusal is not None:
        return refusal
    where = _CRASHED_PASS.search(report)
    return (
        "iree-compile "
        + (f"crashed in {where.group(1)}" if where else "failed")
        + f" (exit code {returncode}); `iree-autotune lower` writes the IR it was given"
    )


def first_error(log: str) -> str | None:
    """The first `error:` diagnostic of a compiler log, with its location."""
    for entry in _diagnostics(log):
        if entry.severity == "error":
            return (f"{entry.where}: " if entry.where else "") + entry.message
    return None


# --- diagnostics at the user's place ----------------------------------------------------

_HEADER = re.compile(
    r"^(?:(?P<where>[^\n]*?): )?(?P<severity>error|warning|note|remark): (?P<message>.*)$"
)
_FILE_LINE_COL = re.compile(r"^(.*):(\d+):(\d+)$")
_STDIN = "<stdin>"
"""The name iree-compile gives to the text it reads (the lowered module)."""
_LOCATION_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)$", re.MULTILINE)
_TRAILING_LOC = re.compile(r" loc\((.*)\)$")


@dataclass
class _Context:
    """What maps a compiler diagnostic back to the user: the lowered text iree-compile
    read, the user's text and file name, the target and architecture."""

    lowered: str = ""
    source: str | None = None
    filename: str | None = None
    target: str | None = None
    arch: str | None = None


@dataclass
class _Diagnostic:
    severity: str
    where: str | None
    message: str
    body: list[str] = field(default_factory=list)
    """The lines printed after it: the source line and caret, an op (`see current
    operation:`)."""


def _diagnostics(log: str) -> list[_Diagnostic]:
    """The diagnostics of a compiler log, each with the lines that follow it."""
    found: list[_Diagnostic] = []
    for line in log.splitlines():
        header = _HEADER.match(line)
        if header is not None:
            found.append(
                _Diagnostic(header["severity"], header["where"], header["message"].rstrip())
            )
        elif found:
            found[-1].body.append(line)
    return found


class CompilerError(DiagnosticError):
    """An iree-compile error at the user's place, with the notes that say how it was
    reached (`called from`)."""

    def __init__(self, message, location=None, source=None, notes=()):
        super().__init__(message, location, source)
        self.notes: list[tuple[SourceLocation | None, str]] = list(notes)

    def render(self) -> str:
        text = super().render()
        for where, note in self.notes:
            note = shorten_literals(note)
            text += f"\n{where}: note: {note}" if where is not None else f"\nnote: {note}"
        return text


def compiler_error(log: str, context: _Context) -> CompilerError | None:
    """The first error of a compiler log at the user's `file:line:col`, naming the
    generated code it is in or was reached through; None when the log has no error.

    iree-compile shows the file location of an op; the op shown under the error carries
    its whole location (`_LOCATION_FLAGS`), whose names say which code the lowering
    generated. A place in the lowered text itself (`<stdin>`: an op printed without its
    location, such as an implicit terminator) is mapped to the nearest op that has one."""
    entries = _diagnostics(log)
    first = next((i for i, e in enumerate(entries) if e.severity == "error"), None)
    if first is None:
        return None
    error = entries[first]
    notes = []
    for entry in entries[first + 1 :]:
        if entry.severity != "note":
            break
        notes.append(entry)
    aliases = dict(_LOCATION_ALIAS.findall(context.lowered))
    where, place_names, unmapped = _place(error.where, context, aliases)
    own, through = _names_of_shown_op(notes, aliases)
    if not own and not through:
        own = place_names or _names_at(where, aliases)
    shown = context.source if where is not None and where.filename == context.filename else None
    message = named_value(error.message, where, shown)
    if unmapped:
        message += f" (at {unmapped})"
    if own:
        message += f" (code generated here: {_listed(own)})"
    if through:
        message += f" (called through: {_listed(through)})"
    message += _cuda_hint(message, context)
    called_from = []
    for note in notes:
        if note.message.startswith("called from"):
            note_where, _, note_unmapped = _place(note.where, context, aliases)
            called_from.append(
                (note_where, note.message + (f" ({note_unmapped})" if note_unmapped else ""))
            )
    return CompilerError(message, where, shown, called_from)


def model_error(log: str, model: str, filename: str) -> CompilerError | None:
    """The first error of iree-compile's log for a model it read from its input stream
    (`<stdin>`), at its place in the model's file `filename`, with the source line."""
    renamed = _STDIN_PLACE.sub(lambda m: f'"{filename}"' if m[1] else filename, log)
    return compiler_error(renamed, _Context(model, model, filename))


_STDIN_PLACE = re.compile(r'(")?' + re.escape(_STDIN) + r'(?(1)")(?=:\d+:\d+)')
"""`<stdin>:L:C`, and `"<stdin>":L:C` where a message prints an op with its location."""


def _place(
    where: str | None, context: _Context, aliases: dict[str, str]
) -> tuple[SourceLocation | None, list[str], str | None]:
    """A diagnostic's place as (location, names of generated code there, a description
    of a place in the lowered text that could not be mapped)."""
    if where is None:
        return None, [], None
    match = _FILE_LINE_COL.match(where)
    if match is None:  # `<unknown>:0`: no place
        return None, [], None
    name, line, column = match[1], int(match[2]), int(match[3])
    if name != _STDIN:
        return SourceLocation(name, line, column), [], None
    body = _lowered_location(context.lowered, line)
    parsed = _parse_location(body, aliases) if body is not None else None
    if parsed is None or parsed.file is None:
        return None, [], f"line {line} of the lowered module, which `iree-autotune lower` writes"
    return parsed.file, parsed.names, None


def _lowered_location(lowered: str, line: int) -> str | None:
    """The location of the op at a line of the lowered text: that line's `loc(...)`, else
    the first one after it that is not nested deeper (the closing line of the op whose
    header or region it is)."""
    lines = lowered.split("\n")
    if not 1 <= line <= len(lines):
        return None
    limit = None
    for text in lines[line - 1 :]:
        stripped = text.lstrip()
        if not stripped:
            continue
        indent = len(text) - len(stripped)
        if limit is not None and indent > limit:
            continue
        limit = indent if limit is None else min(limit, indent)
        found = _TRAILING_LOC.search(text)
        if found is not None:
            return found.group(1)
    return None


@dataclass
class _Location:
    file: SourceLocation | None
    """The file location MLIR shows for it (the first one, as MLIR finds it)."""
    names: list[str]
    """Names on the op's own location (generated code)."""
    through: list[str]
    """Names on the locations of its callers (inlined calls)."""


def _parse_location(text: str, aliases: dict[str, str], depth: int = 0) -> _Location | None:
    """Read MLIR location syntax (what is inside `loc(...)`): file locations, names,
    call sites, fused locations, aliases; None if it is not understood."""
    text = text.strip()
    if depth > 64:
        return None
    if text in aliases:
        return _parse_location(aliases[text], aliases, depth + 1)
    if text.startswith("loc(") and text.endswith(")"):
        return _parse_location(text[4:-1], aliases, depth + 1)
    if text == "unknown":
        return _Location(None, [], [])
    if text.startswith('"'):
        end = _string_end(text)
        if end is None:
            return None
        name = _unescape(text[1:end])
        rest = text[end + 1 :]
        if rest.startswith("(") and rest.endswith(")"):
            inner = _parse_location(rest[1:-1], aliases, depth + 1)
            if inner is None:
                return None
            return _Location(inner.file, [name, *inner.names], inner.through)
        if rest == "":
            return _Location(None, [name], [])
        place = re.fullmatch(r":(\d+):(\d+)(?: to :?\d+(?::\d+)?)?", rest)
        if place is None:
            return None
        return _Location(SourceLocation(name, int(place[1]), int(place[2])), [], [])
    if text.startswith("callsite(") and text.endswith(")"):
        parts = _split_top(text[len("callsite(") : -1], " at ")
        if len(parts) != 2:
            return None
        callee = _parse_location(parts[0], aliases, depth + 1)
        caller = _parse_location(parts[1], aliases, depth + 1)
        if callee is None or caller is None:
            return None
        return _Location(
            callee.file or caller.file,
            callee.names,
            [*callee.through, *caller.names, *caller.through],
        )
    if text.startswith("fused"):
        start = text.find("[")
        if start < 0 or not text.endswith("]"):
            return None
        members = [
            _parse_location(part, aliases, depth + 1)
            for part in _split_top(text[start + 1 : -1], ", ")
        ]
        known = [m for m in members if m is not None]
        files = [m.file for m in known if m.file is not None]
        return _Location(
            files[0] if files else None,
            [n for m in known for n in m.names],
            [n for m in known for n in m.through],
        )
    return None


def _string_end(text: str) -> int | None:
    """The index of the quote that closes the string `text` starts with."""
    i = 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return None


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m[1], 16)), text).replace('\\"', '"')


def _split_top(text: str, separator: str) -> list[str]:
    """`text` split at `separator` where it is outside strings and brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            end = _string_end(text[i:])
            i += (end if end is not None else len(text)) + 1
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _names_of_shown_op(
    notes: list[_Diagnostic], aliases: dict[str, str]
) -> tuple[list[str], list[str]]:
    """Names on the location of the op shown under an error (`see current operation:`):
    its own, and those of the calls it was inlined through."""
    for note in notes:
        if not note.message.startswith("see current operation"):
            continue
        lines = [line for line in ([note.message, *note.body]) if line.strip()]
        if len(lines) >= 2 and set(lines[-1].strip()) == {"^"}:
            lines = lines[:-2]  # the source line and caret iree-compile shows under it
        if not lines:
            continue
        found = _TRAILING_LOC.search(lines[-1].rstrip())
        parsed = _parse_location(found.group(1), aliases) if found else None
        if parsed is not None:
            return _unique(parsed.names), _unique(parsed.through)
    return [], []


def _names_at(where: SourceLocation | None, aliases: dict[str, str]) -> list[str]:
    """Names of the generated code whose file location is `where` (when the op itself
    was not shown: each name the lowering gave to code at that place)."""
    if where is None:
        return []
    names = []
    for body in aliases.values():
        parsed = _parse_location(body, aliases)
        if parsed is not None and parsed.names and parsed.file == where:
            names.extend(parsed.names)
    return _unique(names)


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _listed(names: list[str]) -> str:
    return "; ".join(names[:4]) + ("; ..." if len(names) > 4 else "")


def _cuda_hint(message: str, context: _Context) -> str:
    """Why CUDA code generation fails for an architecture IREE only links kernels for."""
    if (
        context.target == "cuda"
        and context.arch in CUDA_EXTERNAL_ONLY
        and "missing GPU target" in message
    ):
        return (
            f"; iree-compile 3.13 generates no code for {context.arch}: only "
            "hal.executable.source kernels build for it"
        )
    return ""


def compile(  # noqa: A001 - the public name the API promises
    text: str,
    target: str = "llvm-cpu",
    arch: str | None = None,
    filename: str | Path = "<input>",
    policy: str = Policy.ONLINE,
    cache: str | Path | None = None,
    extra_args: Sequence[str] | None = None,
    device: str | None = None,
    object_search: Sequence[str | Path] = (),
) -> bytes:
    """Lower autotune IR and compile it to a `.vmfb` for `target`, with the extra
    iree-compile flags `extra_args`.

    Object files named by relative paths resolve against the folder of `filename`, then
    each folder of `object_search`, in order.
    `device` chooses among the devices whose decisions `cache` holds (`lower_to_iree`).
    """
    arch = check_target(target, arch)
    object_search_flags(object_search)  # before any work: a wrong folder is refused
    lowered = lower_to_iree(
        text,
        policy=policy,
        cache=cache,
        filename=str(filename),
        target=target,
        device=device,
        object_search=object_search,
    )
    folder = Path(filename).parent if str(filename) != "<input>" else None
    return compile_lowered(
        lowered, target, arch, folder, extra_args, text, str(filename), object_search
    )
