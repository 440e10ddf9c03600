"""What users must be able to trust of an interrupted command: ending `iree-autotune`
(SIGINT, SIGTERM, SIGKILL) ends the `iree-compile` it started and leaves no output; Ctrl-C
while `tune` or `run` (or the Python API) tunes ends it, stores nothing unfinished and
exits 130.

One regression test per reproduced failure (docs/runtime.md and docs/lowering.md say what is
guaranteed)."""

from __future__ import annotations

import pytest


def _children(pid: int, name: str) -> list[int]:
    """Pids of the processes named `name` whose parent is `pid` (Linux /proc)."""
    from pathlib import Path

    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            comm = fields[0].split("(", 1)[1]
            ppid = int(fields[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and comm == name:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_ending_iree_autotune_ends_its_iree_compile(how, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from benchmarks.kernels import many_groups_module

    source = tmp_path / "many.mlir"
    source.write_text(many_groups_module(60, 4, per_function=10))
    tool = str(Path(sys.executable).parent / "iree-autotune")
    proc = subprocess.Popen(
        [tool, "compile", str(source), "-o", str(tmp_path / "m.vmfb")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    children: list[int] = []
    while not children and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        children = _children(proc.pid, "iree-compile")
    assert children, "iree-compile did not start"
    os.kill(proc.pid, getattr(signal, how))
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in children), f"iree-compile outlived iree-autotune ({how})"
    assert not (tmp_path / "m.vmfb").exists()


# --- Ctrl-C while tuning: nothing unfinished is stored, exit status 130 ----------------------
#
# Ctrl-C while the VM runs a module's function raises `KeyboardInterrupt` in the next Python
# code, a host callback: the VM ended the call with an error of its own ("Exception raised
# from Python module: Traceback ..."), which was taken for a failing variant: the variant was
# excluded, tuning went on and stored its decision, and the command exited 0.


def _record_interrupted_at(run: int, how: str):
    """A `Tuner` whose host callback `record` is interrupted at its `run`-th call: it
    raises `KeyboardInterrupt` (`how="raise"`), sends the process SIGINT ("signal") or
    raises `SystemExit(3)` ("exit")."""
    import os
    import signal

    from autotune_runtime.tuner import Tuner

    class InterruptedTuner(Tuner):
        records = 0

        def record(self, *args, **kwargs):
            InterruptedTuner.records += 1
            if InterruptedTuner.records == run:
                if how == "raise":
                    raise KeyboardInterrupt
                if how == "exit":
                    raise SystemExit(3)
                os.kill(os.getpid(), signal.SIGINT)
            return super().record(*args, **kwargs)

    return InterruptedTuner


@pytest.mark.parametrize("how", ["raise", "signal", "exit"])
def test_an_interrupt_in_a_host_callback_is_raised_not_a_failed_variant(how, vmfbs, tmp_path):
    import warnings

    from command_line import decisions

    from autotune_runtime import load

    path = tmp_path / "c.sqlite3"
    module = load(
        vmfbs["explicit"],
        device="local-sync",
        cache=path,
        tuner_class=_record_interrupted_at(4, how),
    )
    try:
        expected = SystemExit if how == "exit" else KeyboardInterrupt
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(expected) as raised:
                module.tune()
        assert not caught, [str(w.message) for w in caught]
        if how == "exit":
            assert raised.value.code == 3
        ((_, key), state), *others = module.tuner.states.items()
        assert not others and key == ()
        assert state.decision is None
        assert [v.failed or v.eliminated for v in state.variants] == [False] * 3
        assert sum(v.runs for v in state.variants) == 3  # the 4th run was not recorded
        assert module.tuner.in_flight is None
        assert list(module.cache.entries()) == []
        # What was measured stands: tuning again finishes and stores the decision.
        module.tune()
        assert state.decision is not None
        assert [v.failed for v in state.variants] == [False] * 3
    finally:
        module.close()
    assert [(group, variant) for *_, group, _, variant in decisions(path)] == [
        ("tagged::add", f"v{state.decision}")
    ]


def test_sigint_as_a_decision_is_written_leaves_it_stored_and_known(vmfbs, tmp_path):
    """The decision is stored whole and known to the tuner, or not at all: SIGINT while
    it is written is raised once it is."""
    import os
    import signal

    from command_line import decisions

    from autotune_runtime import TuningCache, load

    class SignalledAsWritten(TuningCache):
        def commit(self, entry):
            stored = super().commit(entry)
            os.kill(os.getpid(), signal.SIGINT)
            return stored

    path = tmp_path / "c.sqlite3"
    module = load(vmfbs["explicit"], device="local-sync", cache=SignalledAsWritten(path))
    try:
        with pytest.raises(KeyboardInterrupt):
            module.tune()
        (state,) = module.tuner.states.values()
        assert state.decision is not None and not state.adopted
        assert module.decisions() == {("tagged::add", ()): f"v{state.decision}"}
    finally:
        module.close()
    assert [(group, variant) for *_, group, _, variant in decisions(path)] == [
        ("tagged::add", f"v{state.decision}")
    ]


# A module whose last explicit group is slow (2048x2048 matmuls on one thread, seconds per
# variant): a signal sent once the small groups before it are decided lands while it tunes.
SLOW_GROUP = "mm2048::matmul"
SMALL_GROUPS = {"mm32::matmul", "mm64::matmul"}
ONLINE_GROUP = "online2048::matmul"


@pytest.fixture(scope="module")
def slow_vmfb(tmp_path_factory):
    """The explicit groups mm32, mm64, mm2048 (tuned in this order) and an online group
    online2048 (entry `@online_2048`), three tile-size variants each."""
    import re

    from benchmarks.kernels import matmul_module
    from lowering.driver import compile

    tiles = ("t16", "t32", "t64")
    explicit = matmul_module(sizes=(32, 64, 2048), tiles=tiles)
    online = matmul_module(sizes=(2048,), tiles=tiles).replace("mm2048", "online2048")
    online = online.replace("@matmul_2048", "@online_2048")
    online = re.sub(
        r"(autotune\.group @matmul variants\(\[[^\]]*\]\))", r'\1 {policy = "online"}', online
    )
    body = online.removeprefix("module {\n").removesuffix("}\n")
    path = tmp_path_factory.mktemp("slow") / "slow.vmfb"
    path.write_bytes(compile(explicit.removesuffix("}\n") + body + "}\n", policy="explicit"))
    return path


def _stored(cache) -> set[str]:
    """The groups the cache file holds a decision for (read as SQLite, read-only)."""
    import sqlite3

    if not cache.exists():
        return set()
    conn = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    try:
        return {row[0] for row in conn.execute("SELECT grp FROM decisions")}
    except sqlite3.Error:  # not created yet
        return set()
    finally:
        conn.close()


def _mapped(pid: int, path) -> bool:
    """Whether process `pid` has the file `path` mapped (the runtime maps the module)."""
    try:
        with open(f"/proc/{pid}/maps") as maps:
            return str(path) in maps.read()
    except OSError:
        return False


def _interrupt(args: list[str], ready, delay: float):
    """`iree-autotune ARGS` sent SIGINT `delay` seconds after `ready(pid)` first holds."""
    import os
    import signal
    import subprocess
    import time

    from conftest import IREE_AUTOTUNE

    proc = subprocess.Popen(
        [IREE_AUTOTUNE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while not ready(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, ("it ended before it was interrupted", proc.communicate())
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"still running 60 s after SIGINT (the interrupt was swallowed): {err}")
    return proc.returncode, out, err


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_during_tune_stores_nothing_unfinished(slow_vmfb, tmp_path):
    """SIGINT at several moments while `tune` measures the slow group: exit status 130,
    one line, the decisions finished before it kept, none for the slow group; a cache
    file in which nothing was finished is left byte for byte as it was."""
    cache = tmp_path / "c.sqlite3"
    for delay in (0.0, 0.4, 1.2):
        for leftover in tmp_path.glob("c.sqlite3*"):
            leftover.unlink()
        rc, out, err = _interrupt(
            ["tune", str(slow_vmfb), "--device", "local-sync", "--cache", str(cache)],
            lambda _pid: SMALL_GROUPS <= _stored(cache),
            delay,
        )
        assert rc == 130, (delay, out, err)
        assert out == ""
        assert err == (
            f"error: interrupted; nothing was stored for {SLOW_GROUP} [] (not finished); the 2 "
            f"decisions finished before the interrupt are kept in {cache} (mm32::matmul [], "
            "mm64::matmul [])\n"
        ), delay
        assert _stored(cache) == SMALL_GROUPS
    # The small groups' decisions are in the cache now: tuning starts at the slow group.
    before = cache.read_bytes()
    for delay in (0.5, 1.5):
        rc, out, err = _interrupt(
            ["tune", str(slow_vmfb), "--device", "local-sync", "--cache", str(cache)],
            lambda pid: _mapped(pid, slow_vmfb),
            delay,
        )
        assert rc == 130, (delay, out, err)
        assert err == f"error: interrupted; nothing was stored for {SLOW_GROUP} [] (not finished)\n"
        assert cache.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite3"]


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_during_run_stores_nothing_unfinished(slow_vmfb, tmp_path):
    cache = tmp_path / "c.sqlite3"
    ones = "2048x2048xf32=1"
    for delay in (0.5, 1.5):
        args = ["run", str(slow_vmfb), "--function", "online_2048", "--input", ones]
        args += ["--input", ones, "--repeat", "1000", "--device", "local-sync"]
        rc, out, err = _interrupt(
            [*args, "--cache", str(cache)], lambda pid: _mapped(pid, slow_vmfb), delay
        )
        assert rc == 130, (delay, out, err)
        assert out == ""
        assert (
            err == f"error: interrupted; nothing was stored for {ONLINE_GROUP} [] (not finished)\n"
        )
        assert _stored(cache) == set()


@pytest.mark.parametrize("loading", ["autotune_contracts.errors", "numpy", "xdsl"])
def test_ctrl_c_while_the_command_is_still_loading_is_one_line_and_status_130(loading):
    """SIGINT as the program imports what it needs (seen in `-X importtime`'s lines, which
    name each module as its import ends): one line, exit 130, no traceback of an import."""
    import os
    import re
    import signal
    import subprocess

    from conftest import IREE_AUTOTUNE

    child = subprocess.Popen(
        [IREE_AUTOTUNE, "--help"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert child.stderr is not None
    seen = []
    for line in child.stderr:
        seen.append(line)
        if re.search(rf"\|\s+{re.escape(loading)}$", line.rstrip()):
            child.send_signal(signal.SIGINT)
            break
    else:
        raise AssertionError(f"{loading} was never imported: {''.join(seen)[-2000:]}")
    rest = child.stderr.read()
    assert child.wait(timeout=60) == 130, rest
    messages = [ln for ln in rest.splitlines() if not ln.startswith("import time:")]
    assert messages == ["error: interrupted"]
