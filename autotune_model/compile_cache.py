"""Built candidates kept by content: a second tuning run (a larger `--candidates`, another
model with the same dispatch) takes the builds the first one made instead of building them
again.

An entry is one file, `FOLDER/ab/abcdef...` (the first two hex digits of the key shard the
folder), holding a build's `.vmfb` or, for a candidate that did not build, iree-compile's
message: a failed candidate is not built again either. Files are written whole or not at
all (`write_atomically`); a file that is not an entry as written here (truncated, damaged,
another format) is a miss and is written again. A folder that cannot be written costs one
warning (`CompileCacheWarning`) and the builds are then not kept; it never fails a run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.files import write_atomically
from autotune_runtime.cache import default_path

KEY_VERSION = "iree-autotune compiled candidate 1"
"""The first part of every key: a change in what an entry holds, or in how the project
reads iree-compile's output into one, gives the entry a new version (and a new key)."""

_MAGIC = b"iree-autotune compiled 1"
_KINDS = (b"vmfb", b"error")
_KILLED = re.compile(r"\(exit code -(?:2|9|15)\)")
"""A build killed from outside (interrupted, out of memory): not the candidate's fault."""


class CompileCacheWarning(UserWarning):
    """A compile cache that cannot be written: tuning goes on without keeping its builds."""


def default_folder() -> Path:
    """`compiled/` next to the tuning cache (`autotune_runtime.cache.default_path`):
    `$XDG_CACHE_HOME/iree-autotune/compiled`, else `~/.cache/iree-autotune/compiled`."""
    return default_path().parent / "compiled"


@functools.cache
def compiler_version() -> str:
    """The iree-compile that builds: its package's version and IREE's revision (the
    package's metadata where the compiler has no `version` module)."""
    from importlib import metadata

    try:
        from iree.compiler import version

        revisions = ",".join(f"{k}@{v}" for k, v in sorted(version.REVISIONS.items()))
        return f"iree-base-compiler {version.VERSION}{version.PACKAGE_SUFFIX} {revisions}"
    except (ImportError, AttributeError):
        pass
    try:
        return f"iree-base-compiler {metadata.version('iree-base-compiler')}"
    except metadata.PackageNotFoundError:
        return "iree-base-compiler unknown"


@functools.cache
def host_cpu() -> str:
    """This machine's CPU as LLVM's `host` sees it: the architecture, model name and
    feature flags (Linux's /proc/cpuinfo; elsewhere `platform.processor()`)."""
    lines: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() in ("model name", "flags", "Features", "CPU part", "cpu"):
                lines.add(f"{name.strip()}: {value.strip()}")
    except OSError:
        lines.add(platform.processor())
    return "\n".join([platform.machine(), *sorted(lines)])


def cache_key(text: str, flags: Sequence[str]) -> str:
    """The key of a candidate's build: sha256 (hex) over these parts, each named and
    length-prefixed, in this order:

    1. `KEY_VERSION`, the format of an entry;
    2. the IREE compiler's version and revision (`compiler_version`);
    3. the host CPU (`host_cpu`) when a flag builds for `host`
       (`--iree-llvmcpu-target-cpu=host`), else nothing: the flags name the target;
    4. the exact iree-compile flags, in order;
    5. the full text of the candidate's module (its `compilation_info` included).

    Left out, because the build does not depend on them: the dispatch's and candidate's
    names, the model and file it came from, the tuning options (they choose what is
    built, not how), the time, and the machine when the flags name the target. Also left
    out: which machine of a Ray cluster builds (the key is made where tuning runs) and
    iree-compile's environment variables (the project sets none)."""
    host = host_cpu() if any(f.rpartition("=")[2] == "host" for f in flags) else ""
    parts = [
        ("format", KEY_VERSION),
        ("compiler", compiler_version()),
        ("host", host),
        ("flags", json.dumps(list(flags))),
        ("text", text),
    ]
    digest = hashlib.sha256()
    for name, value in parts:
        data = value.encode()
        digest.update(f"{name} {len(data)}\n".encode())
        digest.update(data)
    return digest.hexdigest()


def _entry(kind: bytes, payload: bytes) -> bytes:
    digest = hashlib.sha256(payload).hexdigest().encode()
    return b" ".join([_MAGIC, kind, str(len(payload)).encode(), digest]) + b"\n" + payload


def _read_entry(data: bytes) -> tuple[bytes, bytes] | None:
    """(kind, payload) of an entry as `_entry` writes it, None for anything else."""
    head, newline, payload = data.partition(b"\n")
    fields = head.split(b" ")
    if not newline or len(fields) != 6 or b" ".join(fields[:3]) != _MAGIC:
        return None
    kind, size, digest = fields[3:]
    if kind not in _KINDS or size != str(len(payload)).encode():
        return None
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    return kind, payload


class CompileCache:
    """The builds kept in a folder, by `cache_key`."""

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else default_folder()
        self.writable = True

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / key

    def get(self, key: str) -> tuple[bytes | None, str | None] | None:
        """(vmfb, None) or (None, error) for a key, None when there is no good entry."""
        try:
            found = _read_entry(self.path(key).read_bytes())
        except OSError:
            return None
        if found is None:
            return None
        kind, payload = found
        if kind == b"vmfb":
            return payload, None
        return None, payload.decode(errors="replace")

    def put(self, key: str, vmfb: bytes | None, error: str | None) -> None:
        """Keep a build (or why it failed); a folder that cannot take it warns once."""
        if not self.writable or (error is not None and _KILLED.search(error)):
            return
        kind, payload = (b"vmfb", vmfb or b"") if error is None else (b"error", error.encode())
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, _entry(kind, payload))
        except (OSError, DiagnosticError) as err:
            self.writable = False
            # write_atomically's message ends with the system's reason, as OSError's does
            reason = (err.strerror or str(err)) if isinstance(err, OSError) else err.message
            reason = reason.rpartition(": ")[2]
            warnings.warn(
                f"the compile cache {self.folder} cannot be written ({reason}); built "
                "candidates are not kept in it this run (--no-compile-cache to not use one)",
                CompileCacheWarning,
                stacklevel=2,
            )

    def __repr__(self) -> str:
        return f"CompileCache({os.fspath(self.folder)!r})"
