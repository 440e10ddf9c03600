"""B9 lowering throughput: `iree-autotune lower` against `iree-opt` reading the same file.

The input is B1's largest module (1000 executables with a group of 4 variants each, about
5 MB; `kernels.many_groups_module`) with its groups written in MLIR's generic form, so that
the stock `iree-opt` reads the very same bytes (`--allow-unregistered-dialect`). It is the
worst case: every executable is a group and every dispatch a site. A second file of the
same executables, of which only `TYPICAL_GROUPS` have a group (the others dispatched
directly, as in a model with a few tuned kernels), is measured the same way (`typical`). Both run as
a user runs them, as commands in a fresh process, timed by the wall clock from start to
exit: `iree-autotune lower IN -o OUT` (parse, lower, print through IREE) and
`iree-opt --allow-unregistered-dialect IN -o /dev/null` (parse, verify, print). `ROUNDS`
runs each, alternating, so that the slow and fast spells of a shared machine fall on both;
the ratio is the median of `lower` over the median of `iree-opt` (goal: at most 10).
The detail also has the seconds per MB of input, the start of a Python process that imports
the command (`python_start_s`), where the time of one `lower` goes (`stages`), measured
in this process, how many ops the lowering makes (`generated_ops`) and how long xDSL takes
to build as many of its simplest ops (`bare_build_s`): what any lowering that builds its
code as xDSL ops spends at least.
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
TYPICAL_GROUPS = 10
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


def bare_build_seconds(count: int) -> float:
    """Seconds xDSL takes to build `count` constants (its simplest op) into a block."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr, i32
    from xdsl.ir import Block

    value, block = IntegerAttr(0, i32), Block()
    start = time.perf_counter()
    for _ in range(count):
        block.add_op(arith.ConstantOp.create(result_types=[i32], properties={"value": value}))
    return time.perf_counter() - start


def stages(source: Path) -> tuple[dict, int]:
    """Seconds of each stage of one lowering, in this process, as `lower` runs it: IREE
    reads the input (`iree_read`), the module is imported into xDSL (executables without
    groups stay IREE's) and verified (`import`), lowered (`lower`) and written as generic
    text (`write`), which IREE parses, puts its own executables back into, and prints
    (`iree_print`). The two IREE stages are C++; the others are Python. Also the number of
    ops the lowering made."""
    from iree.compiler import ir

    from autotune_bridge.bridge import parse_iree, put_back
    from autotune_bridge.generic_text import generic_text
    from autotune_bridge.importer import Importer
    from autotune_bridge.ir import deep_recursion, verify_module
    from autotune_dialect.iree_ir import iree_context
    from lowering.autotune_to_iree import cyclic_gc_paused, lower_module

    text = source.read_text()
    seconds = {}
    with cyclic_gc_paused(), deep_recursion():
        start = time.perf_counter()
        context = iree_context()
        parsed = parse_iree(text, str(source), context)
        seconds["iree_read"] = time.perf_counter() - start
        start = time.perf_counter()
        importer = Importer(context, text, str(source), True)
        with context:
            module = importer.module(parsed)
        verify_module(module, text, importer.checked)
        seconds["import"] = time.perf_counter() - start
        imported = sum(1 for _ in module.walk())
        start = time.perf_counter()
        lower_module(module, "online", None, source.parent, verify_input=False)
        seconds["lower"] = time.perf_counter() - start
        generated = sum(1 for _ in module.walk()) - imported
        start = time.perf_counter()
        kept: list = []
        written = generic_text(module, kept=kept)
        seconds["write"] = time.perf_counter() - start
        start = time.perf_counter()
        with context:
            lowered = ir.Module.parse(written).operation
            put_back(lowered, kept)
        lowered.get_asm(enable_debug_info=True, assume_verified=True)
        seconds["iree_print"] = time.perf_counter() - start
    return {k: round(v, 3) for k, v in seconds.items()}, generated


def compare(source: Path, lowered: Path) -> dict:
    """`ROUNDS` runs of `iree-autotune lower` and of `iree-opt` on `source`, alternating:
    wall seconds of each run, medians and their ratio."""
    from iree.compiler.tools.binaries import find_tool

    autotune = str(Path(sys.executable).parent / "iree-autotune")
    iree_opt = find_tool("iree-opt")
    lower_runs, opt_runs = [], []
    for _ in range(ROUNDS):
        lower_runs.append(wall_seconds([autotune, "lower", str(source), "-o", str(lowered)]))
        opt_runs.append(
            wall_seconds([iree_opt, "--allow-unregistered-dialect", str(source), "-o", "/dev/null"])
        )
    lower_s, opt_s = statistics.median(lower_runs), statistics.median(opt_runs)
    return {
        "input_mb": round(source.stat().st_size / 1e6, 2),
        "lower_s": round(lower_s, 3),
        "iree_opt_s": round(opt_s, 3),
        "lower_runs_s": [round(s, 3) for s in lower_runs],
        "iree_opt_runs_s": [round(s, 3) for s in opt_runs],
        "ratio": round(lower_s / opt_s, 2),
    }


def run(settings: Settings) -> CaseResult:
    from benchmarks.kernels import many_groups_module

    groups = 100 if settings.quick else GROUPS
    source = settings.scratch / f"throughput{groups}.mlir"
    source.write_text(
        generic_groups(many_groups_module(groups, VARIANTS, per_function=PER_FUNCTION))
    )
    lowered = settings.scratch / f"throughput{groups}.lowered.mlir"
    dense = compare(source, lowered)
    typical_source = settings.scratch / f"throughput{groups}.typical.mlir"
    typical_source.write_text(
        generic_groups(
            many_groups_module(groups, VARIANTS, per_function=PER_FUNCTION, grouped=TYPICAL_GROUPS)
        )
    )
    typical = compare(typical_source, settings.scratch / f"throughput{groups}.typical.lowered.mlir")
    python_start = statistics.median(
        wall_seconds([sys.executable, "-c", "import autotune_cli.main"]) for _ in range(ROUNDS)
    )
    mb = dense["input_mb"]
    print(
        f"  B9 {mb:.1f} MB: lower {dense['lower_s']:.2f} s, iree-opt {dense['iree_opt_s']:.2f} s, "
        f"ratio {dense['ratio']:.1f}; {TYPICAL_GROUPS} groups: {typical['ratio']:.1f}",
        flush=True,
    )
    stage_seconds, generated = stages(source)
    detail = {
        "groups": groups,
        **{k: v for k, v in dense.items() if k != "ratio"},
        "lowered_mb": round(lowered.stat().st_size / 1e6, 2),
        "lower_s_per_mb": round(dense["lower_s"] / mb, 3),
        "stages_s": stage_seconds,
        "python_start_s": round(python_start, 3),
        "generated_ops": generated,
        "bare_build_s": round(bare_build_seconds(generated), 3),
        "typical": {"groups": TYPICAL_GROUPS, **typical},
        "goal": GOAL,
    }
    return CaseResult(
        id="B9",
        title="lowering throughput",
        ratio=dense["lower_s"] / dense["iree_opt_s"],
        meaning=f"`iree-autotune lower` / `iree-opt` wall time on the same {mb:.1f} MB file",
        detail=detail,
    )
