"""Triton configs and the variants compiled from them: what IREE can launch, on which arch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lowering.triton.signature import TritonImportError

TRITON_VERSION = "3.9.0"
"""The triton release the importer is written and tested against (the `triton` extra)."""
PTX_VERSION = 80
"""PTX ISA 8.0 (CUDA 12.0): accepted by CUDA 12 and 13 ptxas and by drivers >= 525."""
ARCHS = {"sm_80": 80, "sm_90": 90}
"""The CUDA architectures the importer compiles for, and their compute capabilities."""
MAX_SHARED = {80: 166912, 90: 232448}
"""Largest dynamic shared memory per block (opt-in): A100 163 KiB, H100 227 KiB."""
METADATA_KEYS = (
    "name",
    "num_warps",
    "num_stages",
    "num_ctas",
    "shared",
    "global_scratch_size",
    "profile_scratch_size",
    "tmem_size",
    "maxnreg",
    "launch_cooperative_grid",
    "launch_pdl",
    "ptx_version",
    "triton_version",
    "hash",
)
"""The entries of Triton's compiled metadata that a variant keeps."""

_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


@dataclass(frozen=True)
class Config:
    """One Triton config: constexpr values and launch options."""

    kwargs: dict[str, Any]
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None

    def describe(self) -> str:
        """`BLOCK_SIZE=256, num_warps=2, num_stages=3`, for messages and comments."""
        values = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        extra = f", maxnreg={self.maxnreg}" if self.maxnreg else ""
        launch = f"num_warps={self.num_warps}, num_stages={self.num_stages}{extra}"
        return f"{values}, {launch}" if values else launch

    def to_json(self) -> dict[str, Any]:
        """The config as a bundle stores it (`from_any` reads it back)."""
        return {
            "kwargs": self.kwargs,
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "num_ctas": self.num_ctas,
            "maxnreg": self.maxnreg,
        }

    @staticmethod
    def from_any(value: Any) -> Config:
        """A `triton.Config`, this class, `{"kwargs": {...}, "num_warps": ...}` or a flat dict
        (`{"BLOCK_SIZE": 256, "num_warps": 2}`)."""
        if isinstance(value, Config):
            return value
        if isinstance(value, Mapping):
            value = dict(value)
            options = {k: value.pop(k) for k in _LAUNCH_OPTIONS if k in value}
            kwargs = value.pop("kwargs", None)
            if kwargs is None:
                kwargs, value = value, {}
            if value:
                raise TritonImportError(f"unknown config keys: {', '.join(map(str, value))}")
            if not isinstance(kwargs, Mapping):
                raise TritonImportError(f"config kwargs {kwargs!r}: expected an object")
            for k, v in options.items():
                if not (isinstance(v, int) and not isinstance(v, bool)) and v is not None:
                    raise TritonImportError(f"config option {k}={v!r}: expected an integer")
            return Config(dict(kwargs), **options)
        if hasattr(value, "kwargs") and hasattr(value, "num_warps"):
            if getattr(value, "pre_hook", None) is not None:
                raise TritonImportError(
                    "a config with a pre_hook cannot be imported: IREE cannot run Python "
                    "before a dispatch"
                )
            return Config(
                dict(value.kwargs),
                value.num_warps,
                value.num_stages,
                getattr(value, "num_ctas", 1) or 1,
                getattr(value, "maxnreg", None),
            )
        raise TritonImportError(f"not a config: {value!r}")


@dataclass(frozen=True)
class Variant:
    """One compiled kernel: a config under one specialization, with Triton's PTX."""

    name: str  # the export name
    config_index: int
    config: Config
    specialization: str  # "aligned" (assumes `divisible`) or "any"
    divisible: tuple[str, ...]  # scalars assumed to be multiples of the divisibility
    ptx: str  # Triton's PTX, unchanged
    metadata: dict[str, Any]
    fallback: str | None = None  # the export taken when the assumption fails

    @property
    def block_size(self) -> int:
        """Threads per block: 32 * num_warps."""
        return 32 * int(self.metadata["num_warps"])

    @property
    def shared(self) -> int:
        """Bytes of dynamic shared memory."""
        return int(self.metadata.get("shared") or 0)

    def to_json(self) -> dict[str, Any]:
        """The variant as a bundle stores it (the bundle adds the path of its PTX)."""
        return {
            "name": self.name,
            "config_index": self.config_index,
            "config": self.config.to_json(),
            "specialization": self.specialization,
            "divisible": list(self.divisible),
            "fallback": self.fallback,
            "metadata": self.metadata,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any], ptx: str) -> Variant:
        """The variant a bundle entry describes, with its PTX text."""
        return Variant(
            name=data["name"],
            config_index=data["config_index"],
            config=Config.from_any(data["config"]),
            specialization=data["specialization"],
            divisible=tuple(data["divisible"]),
            ptx=ptx,
            metadata=dict(data["metadata"]),
            fallback=data.get("fallback"),
        )


def launch_problem(v: Variant, arch: int) -> str | None:
    """Why IREE cannot launch this variant (None when it can); scratch is the adapter's."""
    md = v.metadata
    if int(md.get("num_ctas") or 1) != 1:
        return f"num_ctas={md['num_ctas']}: IREE launches no thread-block clusters"
    if md.get("launch_cooperative_grid"):
        return "needs a cooperative launch, which IREE does not make"
    if md.get("launch_pdl"):
        return "needs programmatic dependent launch, which IREE does not make"
    if md.get("tmem_size"):
        return "uses tensor memory (sm_100), not available on this target"
    if v.shared > MAX_SHARED.get(arch, MAX_SHARED[80]):
        return f"needs {v.shared} bytes of shared memory; sm_{arch} allows {MAX_SHARED[arch]}"
    return None


def group_variants(variants: Sequence[Variant]) -> list[Variant]:
    """The variants a group chooses among: one per config (fallback twins left out)."""
    fallbacks = {v.fallback for v in variants if v.fallback}
    return [v for v in variants if v.name not in fallbacks]
