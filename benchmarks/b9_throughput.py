"""B9 lowering throughput: `iree-autotune lower` against `iree-opt` reading the same file.

The input is B1's largest module (1000 executables with a group of 4 variants each, about
5 MB; `kernels.many_groups_module`) with its groups written in MLIR's generic form, so that
the stock `iree-opt` reads the very same bytes (`--allow-unregistered-dialect`). Both run as
a user runs them, as commands in a fresh process, timed by the wall clock from start to
exit: `iree-autotune lower IN -o OUT` (parse, lower, print through IREE) and
`iree-opt --allow-unregistered-dialect IN -o /dev/null` (parse, verify, print). `ROUNDS`
runs each, alternating, so that the slow and fast spells of a shared machine fall on both;
the ratio is the median of `lower` over the median of `iree-opt` (goal: at most 10).
The detail also has the seconds per MB of input, the start of a Python process that imports
the command (`python_start_s`), and where the time of one `lower` goes (`stages`), measured
in this process.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import CaseResult, Settings

GROUPS = 1000
VARIANTS = 4
PER_FUNCTION = 10
ROUNDS = 3
GOAL = 10.0
_GROUP = re.compile(r"autotune\.group @(\w+) variants\(\[([^\]]*)\]\)")


def generic_groups(text: str) -> str:
    """The module with every `autotune.group` in MLIR's generic form."""
    return _GROUP.sub(
        lambda m: (
            f'"autotune.group"() <{{sym_name = "{m.group(1)}", variants = [{m.group(2)}]}}>'
            " : () -> ()"
        ),
        text,
    )


def wall_seconds(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed:\n{done.stderr[-2000:]}")
    return seconds


def stages(source: Path) -> dict:
    """Seconds of each stage of one lowering, in this process: IREE reads the input
    (`iree_read`), the module is imported into xDSL and verified (`import`), lowered
    (`lower`) and written as generic text (`write`), which IREE parses, verifies and prints
    (`iree_print`). The two IREE stages are C++; the others are Python."""
    from iree.compiler import ir

    from autotune_dialect.bridge import iree_context, parse_iree
    from autotune_dialect.generic_text import generic_text
    from autotune_dialect.importer import Importer
    from autotune_dialect.ir import deep_recursion, verify_module
    from lowering.autotune_to_iree import cyclic_gc_paused, lower_module

    text = source.read_text()
    seconds = {}
    with cyclic_gc_paused(), deep_recursion():
        start = time.perf_counter()
        context = iree_context()
        parsed = parse_iree(text, str(source), context)
        seconds["iree_read"] = time.perf_counter() - start
        start = time.perf_counter()
        with context:
            module = Importer(context, text, str(source)).module(parsed)
        verify_module(module, text)
        seconds["import"] = time.perf_counter() - start
        start = time.perf_counter()
        lower_module(module, "online", None, source.parent, verify_input=False)
        seconds["lower"] = time.perf_counter() - start
        start = time.perf_counter()
        written = generic_text(module)
        seconds["write"] = time.perf_counter() - start
        start = time.perf_counter()
        with iree_context():
            lowered = ir.Module.parse(written)
        lowered.operation.get_asm(enable_debug_info=True, assume_verified=True)
        seconds["iree_print"] = time.perf_counter() - start
    return {k: round(v, 3) for k, v in seconds.items()}


def run(settings: Settings) -> CaseResult:
    from iree.compiler.tools.binaries import find_tool

    from benchmarks.kernels import many_groups_module

    groups = 100 if settings.quick else GROUPS
    source = settings.scratch / f"throughput{groups}.mlir"
    source.write_text(
        generic_groups(many_groups_module(groups, VARIANTS, per_function=PER_FUNCTION))
    )
    lowered = settings.scratch / f"throughput{groups}.lowered.mlir"
    autotune = str(Path(sys.executable).parent / "iree-autotune")
    iree_opt = find_tool("iree-opt")
    lower_runs, opt_runs = [], []
    for _ in range(ROUNDS):
        lower_runs.append(wall_seconds([autotune, "lower", str(source), "-o", str(lowered)]))
        opt_runs.append(
            wall_seconds([iree_opt, "--allow-unregistered-dialect", str(source), "-o", "/dev/null"])
        )
    lower_s, opt_s = statistics.median(lower_runs), statistics.median(opt_runs)
    python_start = statistics.median(
        wall_seconds([sys.executable, "-c", "import lowering.cli"]) for _ in range(ROUNDS)
    )
    mb = source.stat().st_size / 1e6
    ratio = lower_s / opt_s
    print(
        f"  B9 {mb:.1f} MB: lower {lower_s:.2f} s, iree-opt {opt_s:.2f} s, ratio {ratio:.1f}",
        flush=True,
    )
    detail = {
        "groups": groups,
        "input_mb": round(mb, 2),
        "lowered_mb": round(lowered.stat().st_size / 1e6, 2),
        "lower_s": round(lower_s, 3),
        "iree_opt_s": round(opt_s, 3),
        "lower_runs_s": [round(s, 3) for s in lower_runs],
        "iree_opt_runs_s": [round(s, 3) for s in opt_runs],
        "lower_s_per_mb": round(lower_s / mb, 3),
        "stages_s": stages(source),
        "python_start_s": round(python_start, 3),
        "goal": GOAL,
    }
    return CaseResult(
        id="B9",
        title="lowering throughput",
        ratio=ratio,
        meaning=f"`iree-autotune lower` / `iree-opt` wall time on the same {mb:.1f} MB file",
        detail=detail,
    )
