"""Where an `online` site keeps its committed choices: a global for a static workload key,
a table for a dynamic one, read on every call and stored by the site's exploration
function once the host commits."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import FunctionType, IndexType, i32, i64
from xdsl.ir import Block, Region, SSAValue

from autotune_dialect import util
from lowering.emitter import Emitter

TABLE_SLOTS = 64
"""Slots of a site's table of committed dynamic workload keys: a call at a key that its
slot holds runs the committed variant without a host call. A key's slot is a hash of its
values; a call at a key whose slot another key holds goes to the exploration function,
whose host `select` answers at once where the key is decided (the tuning cache, or a
commit made earlier), and the key then takes the slot. Before, a site remembered the last
4 committed keys (most recent first): a stream over 40 decided sizes went to the host on
90% of its calls, and a function with a fast path left it on each of them."""

HASH_MULTIPLIER = -7046029254386353131
"""2**64 / the golden ratio (0x9E3779B97F4A7C15) as a signed i64: multiplicative (Fibonacci)
hashing spreads sizes that are multiples of powers of two over every slot."""


@dataclass(frozen=True)
class ChoiceGlobal:
    """A static key's committed choice: an `i32` global, negative until committed."""

    name: str

    def load(self, em: Emitter, key: list[SSAValue]) -> tuple[SSAValue, SSAValue]:
        """The choice stored (an `i32`) and whether it is committed (an `i1`)."""
        choice = em.value(util.GlobalLoadOp(self.name, i32))
        return choice, em.cmp("sge", choice, em.i32(0))

    def store(self, em: Emitter, key: list[SSAValue], variant: SSAValue) -> None:
        """Commit `variant` (an `i32`)."""
        em.add(util.GlobalStoreOp(variant, self.name))


@dataclass(frozen=True)
class ChoiceTable:
    """A dynamic key's committed choices: a global `!util.list<i64>` of `TABLE_SLOTS`
    slots, each the choice + 1 (0: empty) and the key's `arity` values; made by an
    initializer of its own when the module loads."""

    name: str
    arity: int

    def _slot(self, em: Emitter, key: list[SSAValue]) -> tuple[SSAValue, SSAValue]:
        """The table and the index of the key's slot's first element."""
        table = em.value(util.GlobalLoadOp(self.name, util.list_type("i64")))
        hashed = em.i64(0)
        for value in key:
            mixed = em.binary(arith.XOrIOp, hashed, value)
            hashed = em.binary(arith.MuliOp, mixed, em.i64(HASH_MULTIPLIER))
        shift = em.i64(64 - (TABLE_SLOTS - 1).bit_length())  # the top bits: the slot
        slot = em.binary(arith.ShRUIOp, hashed, shift)
        first = em.binary(arith.MuliOp, slot, em.i64(self.arity + 1))
        return table, em.value(arith.IndexCastOp(first, IndexType()))

    def _at(self, em: Emitter, first: SSAValue, offset: int) -> SSAValue:
        if not offset:
            return first
        return em.binary(arith.AddiOp, first, em.const(offset, IndexType()))

    def load(self, em: Emitter, key: list[SSAValue]) -> tuple[SSAValue, SSAValue]:
        """The choice stored in `key`'s slot and whether the slot holds `key` (the key's
        values as `i64`)."""
        table, first = self._slot(em, key)
        held = em.value(util.ListGetOp(table, first, i64))
        conditions = [em.cmp("sgt", held, em.i64(0))]
        for i, value in enumerate(key):
            stored = em.value(util.ListGetOp(table, self._at(em, first, i + 1), i64))
            conditions.append(em.cmp("eq", stored, value))
        choice = em.binary(arith.SubiOp, held, em.i64(1))
        return em.value(arith.TruncIOp(choice, i32)), em.all_of(conditions)

    def store(self, em: Emitter, key: list[SSAValue], variant: SSAValue) -> None:
        """Commit `variant` at `key`: the key takes its slot."""
        table, first = self._slot(em, key)
        held = em.binary(arith.AddiOp, em.value(arith.ExtSIOp(variant, i64)), em.i64(1))
        em.add(util.ListSetOp(table, first, held))
        for i, value in enumerate(key):
            em.add(util.ListSetOp(table, self._at(em, first, i + 1), value))

    def initializer(self) -> util.InitializerOp:
        """`util.initializer` making the table: its slots, all empty."""
        block = Block()
        em = Emitter(block)
        size = em.const(TABLE_SLOTS * (self.arity + 1), IndexType())
        table = em.value(util.ListCreateOp(size, util.list_type("i64")))
        em.add(util.ListResizeOp(table, size))
        em.add(util.GlobalStoreOp(table, self.name))
        em.add(util.ReturnOp([]))
        return util.InitializerOp.create(
            regions=[Region(block)], properties={"function_type": FunctionType.from_lists([], [])}
        )


CommittedChoice = ChoiceGlobal | ChoiceTable
"""Where a site reads (and its exploration function stores) committed choices."""
