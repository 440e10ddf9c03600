"""`ImportedKernel`: a kernel's compiled variants for one arch, its adapted PTX and module, and
its bundle (metadata JSON + Triton's raw PTX), from which the module is rebuilt without triton.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune_contracts.errors import DiagnosticError
from autotune_contracts.files import write_atomically
from lowering.ptx_abi import AdaptedKernel, adapt_kernel, merge
from lowering.triton.emit import module_text
from lowering.triton.signature import KernelSpec, TritonImportError
from lowering.triton.variants import PTX_VERSION, TRITON_VERSION, Variant, group_variants

BUNDLE_FORMAT = "iree-autotune.triton/1"
"""The `format` of a bundle's JSON."""


@dataclass(frozen=True)
class ImportedKernel:
    """A kernel's compiled variants for one architecture; builds the PTX and the module."""

    spec: KernelSpec
    arch: str
    variants: tuple[Variant, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (config description, reason)
    triton_version: str = TRITON_VERSION
    ptx_version: int = PTX_VERSION

    # -- PTX -----------------------------------------------------------------------------

    def adapted(self) -> list[AdaptedKernel]:
        """Every variant adapted to IREE's ABI (scratch refused or dropped, renamed,
        pointers first)."""
        out = []
        for v in self.variants:
            out.append(
                adapt_kernel(
                    v.ptx,
                    v.name,
                    self.spec.kernel_args,
                    pointers=self.spec.pointers,
                    outputs=self.spec.outputs,
                    global_scratch_size=int(v.metadata.get("global_scratch_size") or 0),
                    profile_scratch_size=int(v.metadata.get("profile_scratch_size") or 0),
                )
            )
            block = out[-1].block_size
            if block is not None and block != (v.block_size, 1, 1):
                raise TritonImportError(
                    f"{v.name}: .reqntid {block} does not match num_warps "
                    f"{v.metadata['num_warps']} (expected {v.block_size} threads)"
                )
        roles = {tuple((p.arg, p.role) for p in k.params) for k in out}
        if len(roles) > 1:
            raise TritonImportError(
                "the configs disagree on which pointers the kernel writes; declare the outputs"
            )
        return out

    def ptx(self) -> str:
        """One PTX module holding every variant's adapted entry."""
        return merge(self.adapted()).text()

    # -- the module ----------------------------------------------------------------------

    def mlir(self, ptx_path: str | None = None) -> str:
        """The `.mlir` module. `ptx_path`: reference the PTX at this path (relative to the
        .mlir) instead of embedding it."""
        return module_text(
            self.spec,
            self.variants,
            self.adapted(),
            arch=self.arch,
            triton_version=self.triton_version,
            ptx_version=self.ptx_version,
            skipped=self.skipped,
            ptx_path=ptx_path,
        )

    def write(self, path: str | Path, embed: bool = True) -> list[Path]:
        """Write the module (and, unless `embed`, its PTX beside it as `<stem>.ptx`)."""
        path = Path(path)
        written = []
        ptx_path = None
        if not embed:
            ptx_file = path.with_suffix(".ptx")
            _write_atomic(ptx_file, self.ptx())
            written.append(ptx_file)
            ptx_path = ptx_file.name
        _write_atomic(path, self.mlir(ptx_path))
        written.insert(0, path)
        return written

    # -- bundles -------------------------------------------------------------------------

    def bundle(self) -> dict[str, Any]:
        """The bundle's JSON data (variants without their PTX paths)."""
        return {
            "format": BUNDLE_FORMAT,
            "arch": self.arch,
            "triton_version": self.triton_version,
            "ptx_version": self.ptx_version,
            "spec": self.spec.to_json(),
            "variants": [v.to_json() for v in self.variants],
            "skipped": [{"config": c, "reason": r} for c, r in self.skipped],
        }

    def save_bundle(
        self, path: str | Path, raw_dir: str = "raw", compress: bool = True
    ) -> list[Path]:
        """Write the metadata JSON at `path` and each variant's raw Triton PTX under
        `raw_dir` (relative to it; gzip'd unless `compress` is false): enough to rebuild the
        module without triton."""
        path = Path(path)
        data = self.bundle()
        written = []
        for v, entry in zip(self.variants, data["variants"], strict=True):
            rel = f"{raw_dir}/{path.name.removesuffix('.json')}.{v.name}.ptx"
            rel += ".gz" if compress else ""
            (path.parent / raw_dir).mkdir(parents=True, exist_ok=True)
            _write_atomic(path.parent / rel, v.ptx)
            written.append(path.parent / rel)
            entry["ptx"] = rel
        _write_atomic(path, json.dumps(data, indent=1) + "\n")
        return [path, *written]

    @staticmethod
    def load_bundle(path: str | Path) -> ImportedKernel:
        """The kernel a bundle (written by `save_bundle`) holds; needs no triton."""
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise TritonImportError(f"cannot read bundle {path}: {err}") from None
        if not isinstance(data, Mapping) or data.get("format") != BUNDLE_FORMAT:
            raise TritonImportError(f"{path} is not a {BUNDLE_FORMAT} bundle")
        try:
            return _from_bundle(data, path.parent)
        except (KeyError, TypeError, ValueError) as err:
            detail = f"no {err}" if isinstance(err, KeyError) else str(err)
            raise TritonImportError(f"{path} is not a valid bundle ({detail})") from None

    @property
    def group_variants(self) -> list[Variant]:
        """The variants the group chooses among (one per config; twins are fallbacks)."""
        return group_variants(self.variants)


def _from_bundle(data: Mapping[str, Any], folder: Path) -> ImportedKernel:
    variants = tuple(Variant.from_json(v, _read_text(folder / v["ptx"])) for v in data["variants"])
    return ImportedKernel(
        spec=KernelSpec.from_json(data["spec"]),
        arch=data["arch"],
        variants=variants,
        skipped=tuple((s["config"], s["reason"]) for s in data.get("skipped", [])),
        triton_version=data.get("triton_version", TRITON_VERSION),
        ptx_version=data.get("ptx_version", PTX_VERSION),
    )


def _read_text(path: Path) -> str:
    """A text file, gunzipped when its name ends in .gz."""
    try:
        raw = path.read_bytes()
        return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
        raise TritonImportError(f"cannot read {path}: {err.strerror or err}") from None


def _write_atomic(path: Path, data: str) -> None:
    """Write whole or not at all (gzip'd, reproducibly, for a .gz name)."""
    payload = gzip.compress(data.encode(), mtime=0) if path.suffix == ".gz" else data
    try:
        write_atomically(str(path), payload)
    except DiagnosticError as err:
        raise TritonImportError(err.message) from None
