"""A wrong variant is never chosen, and a failing variant does not take the group down."""

from __future__ import annotations

import numpy as np
import pytest
from modules import equivalent_module, faulty_function_group

from autotune_runtime import load as load_module
from autotune_runtime.tuner import TuningWarning
from lowering.driver import compile

X = np.linspace(-1.0, 1.0, 65536, dtype=np.float32)
EXPECTED = X * 0.5 + 1.0


def load(vmfb, **options):
    return load_module(vmfb, device="local-sync", **options)


@pytest.mark.parametrize("policy", ["online", "explicit", "init"])
def test_wrong_fastest_variant_is_never_chosen(policy, tmp_path):
    vmfb = compile(equivalent_module(wrong=2), policy=policy)
    with pytest.warns(TuningWarning, match="k2 of eq::f disagrees with the reference k0"):
        module = load(vmfb, cache=tmp_path / "c.sqlite3", max_samples=6)
        if policy == "explicit":
            module.tune()
        outputs = [module.f(X) for _ in range(40)]
    for out in outputs:  # not one wrong answer, exploration included
        np.testing.assert_allclose(out, EXPECTED, atol=1e-5)
    (stats,) = module.stats()
    assert stats["decision"] in ("k0", "k1")
    wrong = stats["variants"][2]
    assert wrong["rejected"] is True and wrong["eliminated"] is True
    module.close()
    # The rejection is recorded in the cache with the decision.
    again = load(vmfb, cache=tmp_path / "c.sqlite3")
    if policy == "explicit":
        again.tune()
    again.f(X)
    (cached,) = again.stats()
    assert cached["from_cache"] is True
    assert cached["variants"][2]["rejected"] is True
    again.close()


def test_a_correct_group_gets_no_warning(recwarn):
    module = load(compile(equivalent_module(wrong=None)), cache=False, max_samples=4)
    for _ in range(20):
        np.testing.assert_allclose(module.f(X), EXPECTED, atol=1e-5)
    assert not [w for w in recwarn if issubclass(w.category, TuningWarning)]
    assert not any(v["rejected"] for v in module.stats()[0]["variants"])
    module.close()


def test_tolerance_attribute_admits_small_differences():
    text = equivalent_module(wrong=2, group_attrs="{tolerance = 1.0}")
    module = load(compile(text, policy="explicit"), cache=False, max_samples=4)
    module.tune()
    assert not any(v["rejected"] for v in module.stats()[0]["variants"])
    module.close()


def test_failing_variant_is_excluded_and_calls_succeed():
    module = load(compile(faulty_function_group(limit=8)), cache=False, max_samples=3)
    big, small = np.zeros(16, np.float32), np.zeros(8, np.float32)
    with pytest.warns(TuningWarning, match="g1 of g failed at workload \\[16\\]"):
        for _ in range(12):
            np.testing.assert_array_equal(module.call_g(big), np.ones(16, np.float32))
    for _ in range(12):
        np.testing.assert_array_equal(module.call_g(small), np.ones(8, np.float32))
    by_key = {tuple(s["workload"]): s for s in module.stats()}
    assert by_key[(16,)]["variants"][1]["failed"] is True
    assert by_key[(16,)]["decision"] in ("g0", "g2")
    assert by_key[(8,)]["variants"][1]["failed"] is False  # runs fine at its own size
    module.close()


def test_a_failure_outside_exploration_is_raised():
    module = load(compile(faulty_function_group(limit=8), policy="static"), cache=False)
    # static picks g0, which does not fail; call the failing variant's size through it
    np.testing.assert_array_equal(module.call_g(np.zeros(16, np.float32)), np.ones(16))
    module.close()
    failing = faulty_function_group(limit=8, group_attrs="{choice = @g1}")
    module = load(compile(failing), cache=False)
    with pytest.raises(RuntimeError, match="g1 supports sizes up to 8"):
        module.call_g(np.zeros(16, np.float32))
    module.close()


LEAK_CHECK = """
import resource, sys
import numpy as np
sys.path.insert(0, "tests")
from modules import tagged_module
from autotune_runtime import load
from lowering.driver import compile
module = load(compile(tagged_module(size=65536)), device="local-sync", cache=False, max_samples=2)
x = np.zeros(65536, np.float32)
for _ in range(100):
    module.run(x)
assert module.decisions()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(600):
    module.run(x)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 600)
module.close()
"""


def test_committed_online_calls_do_not_grow_memory():
    # Each call returns a 256 KiB result; a leak of one buffer per call would add ~150 MiB.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-c", LEAK_CHECK], capture_output=True, text=True, check=True, cwd=root
    )
    kib_per_call = float(out.stdout.strip().splitlines()[-1])
    assert kib_per_call < 16
