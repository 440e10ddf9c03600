"""Where an `online` site keeps its committed choices: a global for a static workload key,
a table for a dynamic one, read on every call and stored by the site's exploration
function once the host commits."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import FunctionType, IndexType, i1, i32, i64
from xdsl.ir import Block, Region, SSAValue

from autotune_dialect import util
from lowering.emitter import Emitter

TABLE_SETS = 128
"""Sets of a site's table of committed dynamic workload keys, each of `TABLE_WAYS` slots: a
call at a key that a slot of its set holds runs the committed variant without a host call.
A key's set is a hash of its values; a call at a key that its set does not hold goes to
the exploration function, whose host `select` answers at once where the key is decided (the
tuning cache, or a commit made earlier), and the key then takes the set's first slot (its
holder moving to the second). Before, a site remembered the last 4 committed keys (most
recent first): a stream over 40 decided sizes went to the host on 90% of its calls, and a
function with a fast path left it on each of them; then one slot per key's hash in 64: 10
of B8's 40 sizes shared a slot with another, and 23% of the stream's calls went to the host
(of 40 keys hashed into 128 sets of 2, a set is asked to hold 3 or more about once in 200
streams)."""
TABLE_WAYS = 2
TABLE_SLOTS = TABLE_SETS * TABLE_WAYS

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

    def _ways(self, em: Emitter, key: list[SSAValue]) -> tuple[SSAValue, list[SSAValue]]:
        """The table and the index of the first element of each slot of the key's set."""
        table = em.value(util.GlobalLoadOp(self.name, util.list_type("i64")))
        hashed = em.i64(0)
        for value in key:
            mixed = em.binary(arith.XOrIOp, hashed, value)
            hashed = em.binary(arith.MuliOp, mixed, em.i64(HASH_MULTIPLIER))
        shift = em.i64(64 - (TABLE_SETS - 1).bit_length())  # the top bits: the set
        first = em.binary(
            arith.MuliOp, em.binary(arith.ShRUIOp, hashed, shift), em.i64(self.width * TABLE_WAYS)
        )
        first = em.value(arith.IndexCastOp(first, IndexType()))
        return table, [self._at(em, first, way * self.width) for way in range(TABLE_WAYS)]

    @property
    def width(self) -> int:
        """Elements of a slot: the choice + 1, then the key's values."""
        return self.arity + 1

    def _at(self, em: Emitter, first: SSAValue, offset: int) -> SSAValue:
        if not offset:
            return first
        return em.binary(arith.AddiOp, first, em.const(offset, IndexType()))

    def _read(self, em: Emitter, table: SSAValue, first: SSAValue) -> list[SSAValue]:
        """A slot's elements (`i64`)."""
        return [
            em.value(util.ListGetOp(table, self._at(em, first, i), i64)) for i in range(self.width)
        ]

    def _holds(self, em: Emitter, slot: list[SSAValue], key: list[SSAValue]) -> SSAValue:
        """Whether a slot's elements are a committed choice at `key`."""
        held = [em.cmp("sgt", slot[0], em.i64(0))]
        return em.all_of(held + [em.cmp("eq", a, b) for a, b in zip(slot[1:], key, strict=True)])

    def load(self, em: Emitter, key: list[SSAValue]) -> tuple[SSAValue, SSAValue]:
        """The choice stored for `key` in its set and whether the set holds `key` (the
        key's values as `i64`)."""
        table, ways = self._ways(em, key)
        first, second = (self._read(em, table, way) for way in ways)
        in_first, in_second = self._holds(em, first, key), self._holds(em, second, key)
        held = em.select(in_first, first[0], second[0])
        choice = em.binary(arith.SubiOp, held, em.i64(1))
        found = em.binary(arith.OrIOp, in_first, in_second)
        return em.value(arith.TruncIOp(choice, i32)), found

    def store(self, em: Emitter, key: list[SSAValue], variant: SSAValue) -> None:
        """Commit `variant` at `key`: where the set's second slot holds the key, there;
        else in the first slot, whose holder (another key) moves to the second."""
        table, ways = self._ways(em, key)
        first, second = (self._read(em, table, way) for way in ways)
        held = em.binary(arith.AddiOp, em.value(arith.ExtSIOp(variant, i64)), em.i64(1))
        new = [held, *key]
        in_second = self._holds(em, second, key)
        other = em.binary(
            arith.AndIOp,
            em.cmp("sgt", first[0], em.i64(0)),
            em.binary(arith.XOrIOp, self._holds(em, first, key), em.const(1, i1)),
        )
        moved = [em.select(other, a, b) for a, b in zip(first, second, strict=True)]
        to_first = [em.select(in_second, a, b) for a, b in zip(first, new, strict=True)]
        to_second = [em.select(in_second, a, b) for a, b in zip(new, moved, strict=True)]
        for way, values in zip(ways, (to_first, to_second), strict=True):
            for i, value in enumerate(values):
                em.add(util.ListSetOp(table, self._at(em, way, i), value))

    def initializer(self) -> util.InitializerOp:
        """`util.initializer` making the table: its slots, all empty."""
        block = Block()
        em = Emitter(block)
        size = em.const(TABLE_SLOTS * self.width, IndexType())
        table = em.value(util.ListCreateOp(size, util.list_type("i64")))
        em.add(util.ListResizeOp(table, size))
        em.add(util.GlobalStoreOp(table, self.name))
        em.add(util.ReturnOp([]))
        return util.InitializerOp.create(
            regions=[Region(block)], properties={"function_type": FunctionType.from_lists([], [])}
        )


CommittedChoice = ChoiceGlobal | ChoiceTable
"""Where a site reads (and its exploration function stores) committed choices."""
