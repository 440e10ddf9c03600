"""Files of the command lines: text inputs read with located errors, outputs written whole
or not at all with the permissions of any new file."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Sequence
from pathlib import Path

from autotune_contracts.errors import DiagnosticError, SourceLocation


def read_source(path: str) -> str:
    """A text input file; not UTF-8 is an error located at the first bad byte."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise DiagnosticError(f"cannot read {path}: {err.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        # Located at the first byte that is not UTF-8, like any other input error.
        before = data[: err.start].decode("utf-8")
        where = SourceLocation.from_offset(path, before, len(before))
        message = f"{path} is not UTF-8 text (invalid byte 0x{data[err.start]:02x})"
        raise DiagnosticError(message, where, data.decode("utf-8", "replace")) from None


Named = tuple[str, "str | Path | None"]
"""A file a command line names: the option or argument that names it, and its path
(None or "-": none, or a standard stream)."""


def _same(a: Path, b: Path) -> bool:
    """Whether two paths are one file: the same file where both exist (links, other
    spellings), else the same absolute path."""
    try:
        return a.samefile(b)
    except OSError:
        return a.resolve() == b.resolve()


def refuse_overwrite(inputs: Sequence[Named], outputs: Sequence[Named]) -> None:
    """Before any work: an output that is one of the inputs, or two outputs that are one
    file, is an error naming both (writing would destroy the input, or leave one output
    where the other should be)."""
    given_inputs = [(name, Path(p)) for name, p in inputs if p not in (None, "-")]
    given_outputs = [(name, Path(p)) for name, p in outputs if p not in (None, "-")]
    for index, (name, path) in enumerate(given_outputs):
        for other, source in given_inputs:
            if _same(path, source):
                raise DiagnosticError(
                    f"{name} {path} is the {other} file: it would be overwritten; write the "
                    "output elsewhere"
                )
        for other, earlier in given_outputs[:index]:
            if _same(path, earlier):
                raise DiagnosticError(
                    f"{name} {path} and {other} {earlier} are one file: name two files"
                )


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """A temporary file next to `path` to write the output into; it replaces `path` when
    the block ends without an exception, and is removed otherwise.

    The temporary file is created as `open` creates files (mode 0666 less the umask), not
    0600 as `tempfile.mkstemp` would, so the output is readable as any other file the user
    writes. A `path` that exists and is not a regular file (a pipe, `/dev/stdout`, a device)
    is written in place: renaming over it would replace the pipe or device node itself.
    Raises `OSError` when the folder cannot be written."""
    target = Path(path)
    if target.exists() and not target.is_file():
        yield target
        return
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        break
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to `path` through `atomic_output`; a failure is a
    `DiagnosticError` naming the file, and leaves no partial output."""
    try:
        with atomic_output(path) as tmp:
            if isinstance(data, bytes):
                tmp.write_bytes(data)
            else:
                tmp.write_text(data, encoding="utf-8")
    except OSError as err:
        raise DiagnosticError(f"cannot write {path}: {err.strerror or err}") from None
