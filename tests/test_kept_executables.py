"""Executables without groups stay IREE's ops through `lower` (`read_module(...,
keep_plain_executables=True)`): the lowered text is the same as when every op is imported
into xDSL, errors are the same, and copies of IREE's ops are put back rather than their
text being made and read again."""

from __future__ import annotations

import pytest

from autotune_bridge.bridge import iree_text, to_iree
from autotune_bridge.ir import parse_module
from autotune_contracts.errors import DiagnosticError
from autotune_dialect.iree_ir import iree_context
from autotune_dialect.verbatim import VerbatimOp
from benchmarks.kernels import many_groups_module
from lowering.autotune_to_iree import lower_module, lower_to_iree

FILENAME = "/models/few groups.mlir"


def _imported_lowering(text: str, filename: str = FILENAME, locations: bool = True) -> str:
    """The lowered text with every op imported into xDSL."""
    module = parse_module(text, filename)
    lower_module(module, "online")
    return iree_text(module, locations=locations, source=text)


def _deferred(module) -> list[VerbatimOp]:
    return [
        op for op in module.body.ops if isinstance(op, VerbatimOp) and op.kept_iree_op() is not None
    ]


@pytest.mark.parametrize("grouped", [0, 2, 6])
def test_lowering_keeping_plain_executables_gives_the_same_text(grouped):
    text = many_groups_module(6, 3, per_function=3, grouped=grouped)
    lowered = lower_to_iree(text, filename=FILENAME)
    assert lowered == _imported_lowering(text)
    assert '"-":' not in lowered  # copied ops name the user's file
    assert f'loc("{FILENAME}":' in lowered


@pytest.mark.parametrize(
    "filename", ['dir with "quotes"/ünïcode.mlir', "back\\slash\ttab.mlir", "-", "a.mlir"]
)
def test_odd_file_and_symbol_names_come_back_as_when_imported(filename):
    """Copied ops' locations are renamed in the printed text: the file's name is quoted
    as IREE prints it (`\\22`, `\\C3\\BC`), as the imported path's are."""
    text = (
        many_groups_module(3, 2, per_function=3, grouped=1)
        .replace("@e1 ", '@"odd name\\22.1" ')
        .replace("@e1::", '@"odd name\\22.1"::')
        .replace("@g1_v0", '@"g1 v0"')
    )
    lowered = lower_to_iree(text, filename=filename)
    assert 'flow.executable private @"odd name\\22.1"' in lowered
    assert lowered == _imported_lowering(text, filename)


def test_plain_executables_are_put_back_without_making_their_text():
    text = many_groups_module(5, 2, per_function=5, grouped=1)
    module = parse_module(text, FILENAME, keep_plain_executables=True)
    deferred = _deferred(module)
    assert [op.attributes["sym_name"].data for op in deferred] == ["e1", "e2", "e3", "e4"]
    assert deferred[0].kept_export_names() == frozenset({"g1_v0", "g1_v1"})
    lower_module(module, "online", verify_input=False)
    without_locations = iree_text(module, locations=False, source=text)
    assert all(op.stored_text is None for op in deferred)
    assert without_locations == _imported_lowering(text, locations=False)


def test_another_context_gets_the_text_of_deferred_executables():
    text = many_groups_module(3, 2, per_function=3, grouped=1)
    module = parse_module(text, FILENAME, keep_plain_executables=True)
    written = str(to_iree(module, iree_context()))  # not the context IREE's ops live in
    assert all(op.stored_text is not None for op in _deferred(module))
    assert "@g2_v1" in written and "verbatim.kept" not in written
    copy = _deferred(module)[0].clone()
    assert copy.kept_iree_op() is None and copy.text == _deferred(module)[0].text


def _error(text: str, keep: bool) -> str:
    with pytest.raises(DiagnosticError) as caught:
        parse_module(text, FILENAME, keep_plain_executables=keep)
    return str(caught.value)


_RUN = "  util.func public @run0("

BAD_MODULES = {
    "a dispatch of a missing export": (
        "@e2::@g2_v0",
        "@e2::@g2_v9",
        "entry point @e2::@g2_v9 not found",
    ),
    "an export without its kernel function": (
        "func.func @g2_v1(",
        "func.func @g2_vX(",
        "runs kernel function @g2_v1, which the executable's module does not define",
    ),
    "a group inside a kernel module": (
        "    builtin.module {\n      func.func @g2_v0(",
        "    builtin.module {\n      autotune.group @inner variants([@g2_v0])\n"
        "      func.func @g2_v0(",
        "cannot be inside a kernel module",
    ),
    # The group's verifier reads what the executable is: it is imported, not kept.
    "a module-level group naming plain executables": (
        _RUN,
        "  autotune.group @mg variants([@e1, @e2])\n" + _RUN,
        "variant @e1 is a 'flow.executable'",
    ),
    "a group named like a plain executable": (
        _RUN,
        "  util.func private @k(%a: tensor<16xf32>) -> tensor<16xf32> {\n"
        "    util.return %a : tensor<16xf32>\n  }\n"
        "  autotune.group @e2 variants([@k])\n" + _RUN,
        "duplicate symbol @e2",
    ),
}


@pytest.mark.parametrize("case", BAD_MODULES, ids=list(BAD_MODULES))
def test_errors_in_plain_executables_are_reported_as_when_imported(case):
    old, new, expected = BAD_MODULES[case]
    text = many_groups_module(3, 2, per_function=3, grouped=1)
    assert old in text
    message = _error(text.replace(old, new), keep=True)
    assert expected in message
    assert message == _error(text.replace(old, new), keep=False)


def test_stand_ins_that_do_not_all_come_back_fall_back_to_text(monkeypatch):
    from autotune_bridge import bridge

    text = many_groups_module(4, 2, per_function=4, grouped=2)
    monkeypatch.setattr(bridge, "put_back", lambda parsed, kept: False)
    assert lower_to_iree(text, filename=FILENAME) == _imported_lowering(text)


def test_modules_with_resources_keep_their_resource_names():
    """Reading the rewritten module in the context of the input would rename its
    `dense_resource`s (their names are taken there): such modules are written as text."""
    text = many_groups_module(3, 2, per_function=3, grouped=1).replace(
        "  util.func public @run0(",
        "  util.global private @weights = dense_resource<weights_blob> : tensor<4xf32>\n"
        "  util.func public @run0(",
    )
    module = parse_module(text, FILENAME, keep_plain_executables=True)
    assert not _deferred(module)
    lowered = lower_to_iree(text, filename=FILENAME)
    assert "dense_resource<weights_blob>" in lowered
    assert lowered == _imported_lowering(text)


def test_every_executable_and_kernel_module_comes_back_as_a_copy(monkeypatch):
    """Plain executables and the kernel modules of executables with groups are all put
    back as copies of IREE's ops (none is read again from text)."""
    from autotune_bridge import bridge

    copied: list[int] = []
    original = bridge.put_back

    def counted(parsed, kept):
        copied.append(len(kept))
        return original(parsed, kept)

    monkeypatch.setattr(bridge, "put_back", counted)
    text = many_groups_module(5, 2, per_function=5, grouped=2)
    assert lower_to_iree(text, filename=FILENAME) == _imported_lowering(text)
    assert copied == [3 + 2]  # three plain executables, two kernel modules


def test_ops_verified_by_the_import_are_not_verified_again_but_later_changes_are():
    """`parse_module` passes the ops the import verified to `verify_module`, once: a
    later verification checks every op again."""
    from autotune_bridge.ir import verify_module
    from autotune_dialect.flow import DispatchOp
    from autotune_dialect.verbatim import VerbatimAttr

    text = many_groups_module(2, 2, per_function=2, grouped=2)
    module = parse_module(text, FILENAME)
    assert not hasattr(module, "checked_at_import")
    dispatch = next(op for op in module.walk() if isinstance(op, DispatchOp))
    dispatch.properties["entry_points"] = VerbatimAttr("not a list of symbols")
    with pytest.raises(DiagnosticError):
        verify_module(module, text)


def test_parse_module_verifies_each_imported_dispatch_once(monkeypatch):
    from autotune_dialect.flow import DispatchOp

    calls: list[DispatchOp] = []
    original = DispatchOp.verify_

    def counted(self):
        calls.append(self)
        return original(self)

    monkeypatch.setattr(DispatchOp, "verify_", counted)
    module = parse_module(many_groups_module(3, 2, per_function=3, grouped=1), FILENAME)
    dispatches = [op for op in module.walk() if isinstance(op, DispatchOp)]
    assert len(dispatches) == 3
    assert sorted(map(id, calls)) == sorted(map(id, dispatches))


def test_a_module_with_copied_executables_compiles_and_computes(tmp_path):
    """iree-compile builds the lowered module with IREE's own executables copied back,
    and it computes what the kernels say: every executable adds its first kernel's
    constant (the static policy runs a group's first variant)."""
    import numpy as np

    from autotune_runtime import load
    from lowering.driver import compile

    text = many_groups_module(3, 2, per_function=3, grouped=1)
    vmfb = compile(text, policy="static", filename=str(tmp_path / "few.mlir"))
    module = load(vmfb, device="local-sync", cache=False)
    x = np.arange(16, dtype=np.float32)
    tags = [float(g * 2 + 1) for g in range(3)]  # kernel @g<g>_v0 adds g * variants + 1
    np.testing.assert_allclose(np.asarray(module.run0(x)), x + sum(tags))
    module.close()
