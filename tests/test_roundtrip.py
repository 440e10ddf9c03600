"""Golden round trip: the project's parse+print, canonicalised by iree-opt, equals iree-opt
on the original file."""

from __future__ import annotations

import pytest
from conftest import DATA, run_iree_opt

from autotune_dialect import parse_module, print_module

CORPUS = sorted((DATA / "roundtrip").glob("*.mlir"))


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 15


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_roundtrip_matches_iree_opt(path, iree_opt):
    original = path.read_text()
    expected = run_iree_opt(iree_opt, original)
    assert expected.returncode == 0, expected.stderr
    ours = print_module(parse_module(original, str(path)))
    got = run_iree_opt(iree_opt, ours)
    assert got.returncode == 0, f"iree-opt rejected our print:\n{got.stderr}\n{ours}"
    assert got.stdout == expected.stdout


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_print_is_a_fixed_point(path):
    once = print_module(parse_module(path.read_text(), str(path)))
    assert print_module(parse_module(once, "printed.mlir")) == once
