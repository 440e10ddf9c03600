"""`module.settled()`: every online group the calls reached has decided for every workload
key it has seen. `decisions()` is not empty once the first group decides, so a loop on it
stops while the module's other groups still explore."""

from __future__ import annotations

import numpy as np
from modules import tagged_chain_module

from autotune_runtime import load
from autotune_runtime.tuner import Tuner
from lowering.driver import compile

TIMES_NS = {
    "e0::add": [1000.0, 5000.0, 5000.0],  # the others 5x slower: decided in a few calls
    "e1::add": [1000.0, 1010.0, 1020.0],  # within the noise: decided after many samples
}


def chain_costs(seed: int = 0) -> type[Tuner]:
    """A `Tuner` whose measured times are `TIMES_NS[group][variant]`, with 5% seeded noise."""
    rng = np.random.default_rng(seed)

    class Costs(Tuner):
        def record(self, gid, variant, elapsed_ns, key, waited_ns=0.0):
            base = TIMES_NS[self.groups[gid].qualified_name][variant]
            super().record(gid, variant, base * (1.0 + 0.05 * rng.standard_normal()), key)

    return Costs


def test_settled_waits_for_every_group_where_decisions_stops_at_the_first():
    vmfb = compile(tagged_chain_module([None, None]))
    with load(vmfb, "local-sync", cache=False, tuner_class=chain_costs()) as module:
        assert not module.settled()  # no call has reached a group yet
        x = np.zeros(16, np.float32)
        calls, first_decision = 0, None
        while not module.settled() and calls < 500:
            module.run(x)
            calls += 1
            decided = module.decisions()
            if decided and first_decision is None:
                first_decision = calls
            assert module.settled() == (len(decided) == 2), (calls, decided)
        # The old loop, `while not module.decisions()`, would have stopped at the first
        # decision, with e1 still exploring.
        assert first_decision is not None and first_decision < calls
        decisions = module.decisions()
        assert set(decisions) == {("e0::add", ()), ("e1::add", ())}
        assert decisions[("e0::add", ())] == "g0_v0"
        explored = {s["group"]: s["explored_calls"] for s in module.stats()}
        assert explored["e0::add"] < explored["e1::add"]


def test_a_module_without_online_groups_is_settled():
    vmfb = compile(tagged_chain_module([None]), policy="explicit")
    with load(vmfb, "local-sync", cache=False) as module:
        assert module.settled()  # its calls tune nothing: `tune()` does
        assert module.decisions() == {}
