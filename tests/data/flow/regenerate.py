"""Regenerate the flow-phase corpus: `iree-compile --compile-to=flow` of each source program.

    .venv/bin/python tests/data/flow/regenerate.py

`src/*.mlir` are programs written as frontends emit them (linalg from torch-mlir, StableHLO
from JAX); `NAME.flow.mlir` is what the stock compiler prints for each at the flow phase,
for the llvm-cpu backend on a generic x86-64 CPU (so that the files build and run on any
x86-64 machine), with the locations that name the source lines. The tests read the `.flow.mlir` files and check that regenerating gives
the same text.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
IREE_COMPILE = str(Path(sys.executable).parent / "iree-compile")
FLAGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",
    "--iree-llvmcpu-target-triple=x86_64-unknown-linux-gnu",
    "--compile-to=flow",
    "--mlir-print-debuginfo",
]


def sources() -> list[Path]:
    return sorted((HERE / "src").glob("*.mlir"))


def flow_text(source: Path) -> str:
    """The flow-phase print of a source program, with locations in `src/NAME.mlir`."""
    flags = list(FLAGS)
    if "stablehlo." in source.read_text():
        flags.append("--iree-input-type=stablehlo")
    relative = str(source.relative_to(HERE))
    result = subprocess.run(
        [IREE_COMPILE, relative, *flags, "-o", "-"],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def target(source: Path) -> Path:
    return HERE / f"{source.stem}.flow.mlir"


def main() -> int:
    for source in sources():
        target(source).write_text(flow_text(source))
        print(f"wrote {target(source).relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
