"""Input and output files of the command line: text read with located errors, outputs
written whole or not at all."""

from __future__ import annotations

from pathlib import Path

from autotune_dialect.diagnostics import DiagnosticError, SourceLocation


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


def write_atomically(path: str, data: str | bytes) -> None:
    """Write through a temporary file so that a failure leaves no partial output."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
        tmp.replace(target)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise DiagnosticError(f"cannot write {path}: {err.strerror}") from None
