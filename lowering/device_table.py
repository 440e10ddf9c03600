"""`static` groups decided on several devices (`--device all`): the module asks the device
it runs on which it is when it loads, and each site runs that device's decision.

A `util.initializer` asks the first device of the context (`hal.devices.get 0`) whether its
id (`hal.device.id`, the name of its runtime driver: `local-task`, `local-sync`, `vulkan`,
`cuda`, `hip`) is the driver of each device of the table, and stores the row that answers
yes (-1: none) in a global. A site whose decisions differ between devices loads it and runs
its row's variant through the `scf.if` chain the other policies use; a device the table
lacks runs what a `static` build without decisions runs. No host module is needed: the
module runs under `iree-run-module` and IREE's C API.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FunctionType, IndexType, i32
from xdsl.ir import Block, Region, SSAValue

from autotune_contracts.errors import DiagnosticError
from autotune_dialect import hal, util
from lowering.emitter import Emitter
from lowering.groups import Group, Site
from lowering.policies import PolicyLowering, decided_variant
from lowering.state import LoweringState
from lowering.variants import chain, tie_shapes, variant_op

DEVICE_ID = "hal.device.id"
"""The `hal.device.query` category and key whose pattern a device of the table matches."""

_DEVICE_GLOBAL = (-1, "device")
"""The key of the table's global among the state globals (no group owns it)."""


def device_driver(decision: dict) -> str | None:
    """The runtime driver a decision was made on (its `device_info`), if it says."""
    info = decision.get("device_info")
    driver = info.get("driver") if isinstance(info, dict) else None
    return driver if isinstance(driver, str) and driver else None


def device_drivers(decisions: dict[int, list[dict]], decisions_from: str) -> list[str]:
    """The drivers of the devices the decisions were made on (the table's rows), in the
    order they first appear. A decision that names no driver, or two devices of one driver
    (which a module cannot tell apart by its id), is an error."""
    digests: dict[str, str] = {}
    for found in decisions.values():
        for decision in found:
            driver = device_driver(decision)
            if driver is None:
                raise DiagnosticError(
                    f"a decision of {decisions_from} for {decision['group']} names no device "
                    "driver (its device_info); a module that keeps several devices' decisions "
                    "tells devices apart by their driver"
                )
            digests.setdefault(str(decision.get("device") or ""), driver)
    drivers: list[str] = []
    for driver in digests.values():
        if driver in drivers:
            twins = sorted(d[:12] for d, other in digests.items() if other == driver)
            raise DiagnosticError(
                f"{decisions_from} holds decisions made on {len(twins)} devices of the "
                f"{driver} driver ({', '.join(twins)}), which a module cannot tell apart at "
                "load (hal.device.id is the driver's name); keep one of them with --device "
                "(a list of digests' first characters or drivers)"
            )
        drivers.append(driver)
    return drivers


class DeviceTableLowering(PolicyLowering):
    """`static` with several devices' decisions: each site runs its device's variant."""

    def lower_site(self, state: LoweringState, em: Emitter, site: Site) -> list[SSAValue]:
        decisions = state.static_decisions.get(site.group.gid, [])
        default = decided_variant(site, [])
        chosen = [
            decided_variant(site, [d for d in decisions if device_driver(d) == driver])
            for driver in state.device_drivers or []
        ]
        if all(variant == default for variant in chosen):
            return list(em.add(variant_op(site, default)).results)
        variants = site.group.variants
        row = device_row(state, em, site.group)
        index = em.i32(variants.index(default))
        for number, variant in enumerate(chosen):
            if variant != default:
                mine = em.cmp("eq", row, em.i32(number))
                index = em.select(mine, em.i32(variants.index(variant)), index)
        return tie_shapes(em, site, chain(em, index, site))


def device_row(state: LoweringState, em: Emitter, group: Group) -> SSAValue:
    """The row of the device table the module runs on (-1: none), loaded at `em`; the
    global and its initializer are made on first use."""
    if _DEVICE_GLOBAL not in state.globals:
        name = state.fresh("__autotune.device")
        table = util.GlobalOp(name, i32, None, True)
        table.location = group.location(f"@{name}")
        state.globals[_DEVICE_GLOBAL] = table
        initializer = _row_initializer(name, state.device_drivers or [])
        initializer.location = table.location
        state.initializers.append(initializer)
    return em.value(util.GlobalLoadOp(state.globals[_DEVICE_GLOBAL].sym_name.data, i32))


def _row_initializer(name: str, drivers: list[str]) -> util.InitializerOp:
    """`util.initializer` storing in `name` the first row whose driver is the id of the
    context's first device, else -1."""
    block = Block()
    em = Emitter(block)
    device = em.value(hal.DevicesGetOp(em.const(0, IndexType())))
    row = em.i32(-1)
    for number in reversed(range(len(drivers))):
        query = em.add(hal.DeviceQueryOp(device, DEVICE_ID, drivers[number]))
        row = em.select(query.results[1], em.i32(number), row)
    em.add(util.GlobalStoreOp(row, name))
    em.add(util.ReturnOp([]))
    return util.InitializerOp.create(
        regions=[Region(block)], properties={"function_type": FunctionType.from_lists([], [])}
    )
