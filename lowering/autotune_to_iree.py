"""`autotune-to-iree`: expand every group and every dispatch or call of it into IREE input IR.

Per policy (docs/lowering.md has the emitted IR):

- `static`: the dispatch names the chosen variant directly; no imports, no globals.
- `online`: selection state in `util.global`s; while a workload key is unsettled each call
  asks the host (`select`), runs that one variant on the real inputs between two clock
  reads with a fence wait, and reports the time (`record`); once the host commits, the
  choice is stored and later calls load it and branch, with no host call and no fence.
- `explicit`: an exported `__autotune` function tunes every key on synthetic inputs
  (static shapes, or the group's sample `workloads`); dispatches use the stored choice, or
  the reference variant before tuning. Exported `__autotune_set_*` / `__autotune_get_*`
  set and read a group's choice.
- `init`: the same tuning loop in an exported `__autotune_init` function that the runtime
  calls when it loads the module; keys the tuning cache has decided are not measured
  again.

The variants are selected with a nested `scf.if` chain (one branch per variant, any count).
A function whose online groups name the variant each is `expected` to settle on also gets
a fast path that runs those directly while every site has chosen them (`lowering.fast_path`).
Each policy's lowering is a `PolicyLowering` (`lowering.policies`), chosen by `LOWERINGS`;
the run's state is a `LoweringState` (`lowering.state`), passed to every step.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from autotune_bridge.bridge import iree_text
from autotune_bridge.ir import deep_recursion, parse_module, verify_module
from autotune_contracts.errors import DiagnosticError
from autotune_contracts.policy import POLICIES, Policy
from autotune_dialect.symbols import symbol_index
from lowering.decisions import keeps_several_devices, load_decisions, match_decisions
from lowering.device_table import DeviceTableLowering, device_drivers
from lowering.discovery import check_call_cycles, check_other_uses, collect_groups, collect_sites
from lowering.emitter import Emitter
from lowering.exploration import OnlineLowering
from lowering.fast_path import finish_fast_paths, plan_fast_paths
from lowering.groups import ObjectFolders, Site
from lowering.module_output import finish_module
from lowering.policies import PolicyLowering, StaticLowering
from lowering.state import LoweringState
from lowering.synthetic import ExplicitLowering, InitLowering
from lowering.target_checks import check_buildable

LOWERINGS: dict[Policy, PolicyLowering] = {
    Policy.ONLINE: OnlineLowering(),
    Policy.EXPLICIT: ExplicitLowering(),
    Policy.INIT: InitLowering(),
    Policy.STATIC: StaticLowering(),
}
"""The lowering of each policy; their `finish` runs in this order."""
DEVICE_TABLE = DeviceTableLowering()
"""`static` groups' lowering where several devices' decisions are kept (`--device all`)."""


def lower_groups(
    module: ModuleOp,
    policy: str,
    decisions: list[dict] | None,
    base_dir: Path | ObjectFolders | None = None,
    decisions_from: str = "the tuning cache file",
    device: str | None = None,
) -> None:
    """Lower every group of `module` and its sites in place; groups that name no policy
    have `policy`. `decisions` (from `decisions_from`; those of `device`, where a file
    holds several devices') fix the `static` choices; `device` `all` (or a list) keeps
    several devices' decisions, chosen among at load (`lowering.device_table`)."""
    if policy not in POLICIES:
        raise DiagnosticError(f'unknown policy "{policy}"; expected one of ' + ", ".join(POLICIES))
    state = LoweringState.of(module, Policy(policy), base_dir)
    state.groups = collect_groups(module, state.default_policy)
    if not state.groups:
        return
    check_call_cycles(module, state.groups.values())
    with symbol_index():  # the IR does not change until the sites are lowered
        sites = collect_sites(module, state.groups)
        check_other_uses(module, {site.op for site in sites})
    state.static_decisions = match_decisions(
        state.groups.values(), decisions or [], decisions_from, state.base_dir, device
    )
    if keeps_several_devices(device):
        state.device_drivers = device_drivers(state.static_decisions, decisions_from)
    for group in state.groups.values():
        LOWERINGS[group.policy].prepare(state, group)
    fast_paths = plan_fast_paths(state, sites)
    for site in sites:
        lower_site(state, site)
    finish_fast_paths(state, fast_paths)
    for lowering in LOWERINGS.values():
        lowering.finish(state, sites)
    finish_module(state)


def lower_site(state: LoweringState, site: Site) -> None:
    """Replace a site's op with what its group's policy makes of it."""
    op = site.op
    block = op.parent_block()
    assert block is not None
    em = Emitter(block, op, site.group.location("selection", op))
    lowering = LOWERINGS[site.group.policy]
    if site.group.policy == Policy.STATIC and state.device_drivers is not None:
        lowering = DEVICE_TABLE
    results = lowering.lower_site(state, em, site)
    Rewriter.replace_op(op, [], results)


def lower_module(
    module: ModuleOp,
    policy: str = Policy.ONLINE,
    cache: str | Path | None = None,
    base_dir: str | Path | ObjectFolders | None = None,
    verify_input: bool = True,
    decisions: list[dict] | None = None,
    device: str | None = None,
) -> None:
    """Lower every group of `module` in place (the module must verify).

    `base_dir` is where relative object paths resolve (for the groups' fingerprints).
    `decisions`, when given, are those of `cache` that the `static` choices follow (else
    all of them, read from it; `device` chooses among the devices it holds decisions of).
    What the lowering creates is verified by IREE when the
    module is printed (`print_module`)."""
    with deep_recursion():
        if verify_input:
            verify_module(module)
        folder = (
            base_dir if base_dir is None or isinstance(base_dir, ObjectFolders) else Path(base_dir)
        )
        decisions = load_decisions(cache) if decisions is None else decisions
        lower_groups(module, policy, decisions, folder, str(cache), device)


def object_folders(
    filename: str, object_search: Sequence[str | Path]
) -> Path | ObjectFolders | None:
    """Where the relative object paths of the file `filename` resolve: its folder (the
    working folder for `<input>`), then each folder of `object_search`."""
    folder = Path(filename).parent if filename != "<input>" else None
    if not object_search:
        return folder
    return ObjectFolders((folder or Path.cwd(), *(Path(f) for f in object_search)))


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a module is parsed, lowered and printed.

    IR is a graph of reference cycles (ops, blocks and regions point at their parents) that
    stays alive until the end, so every full collection meanwhile walks an ever larger heap
    and frees nothing: 9 of them took 3 s of 36 s at 1000 groups (docs/benchmarks.md, B1).
    Reference counting still frees everything else at once; cycles dropped meanwhile are
    collected by the first collection after the pause.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def lower_to_iree(
    text: str,
    policy: str = Policy.ONLINE,
    cache: str | Path | None = None,
    filename: str = "<input>",
    target: str | None = None,
    locations: bool = True,
    device: str | None = None,
    object_search: Sequence[str | Path] = (),
) -> str:
    """Parse, lower and print: autotune IR in, IREE input IR out. With a `target`, also
    check that every executable can be built for it (`lowering.target_checks`). With
    `locations` (the default) every op names its place in the input (`loc(...)`), so that
    `iree-compile` reports errors in the user's file. `device` chooses the device whose
    decisions of `cache` fix the `static` choices, where it holds several devices'.
    Relative object paths resolve against the folder of `filename`, then each folder of
    `object_search`."""
    with cyclic_gc_paused(), deep_recursion():
        module = parse_module(text, filename, keep_plain_executables=True)
        if target is not None:
            check_buildable(module, target, text)
        base_dir = object_folders(filename, object_search)
        try:
            lower_module(  # the parse verified the module
                module, policy, cache, base_dir, verify_input=False, device=device
            )
        except DiagnosticError as err:
            if err.location is not None and err.source is None:
                err.source = text  # show the source line under the message, as parse errors do
            raise
        return iree_text(module, locations=locations, source=text)


@dataclass(frozen=True)
class AutotuneToIREEPass(ModulePass):
    """Lower `autotune.group`s and their dispatches to IREE input IR."""

    name = "autotune-to-iree"

    policy: str = Policy.ONLINE
    """Policy of groups that name none: online, explicit, init or static."""
    cache: str | None = None
    """Tuning-cache export (JSON) whose decisions fix the `static` choice."""
    base_dir: str | None = None
    """Folder that relative object paths resolve against (default: the working folder)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Lower `op`. A bad option or input is xDSL's `PassFailedException` holding the
        located message, which `xdsl-opt` with the project's plug-in prints as a diagnostic,
        without a traceback (docs/interop.md)."""
        try:
            lower_module(op, self.policy, self.cache, self.base_dir)
        except DiagnosticError as err:
            raise PassFailedException(err.render()) from None


__all__ = ["AutotuneToIREEPass", "lower_module", "lower_to_iree"]
