"""The import interface between lowered modules and the `autotune` host module.

Lowered modules declare these functions as `util.func private @autotune.NAME(...)`; IREE
turns them into VM imports of a module named `autotune`, which the runtime provides.
Arguments are all i64: IREE 3.13's Python host modules misread an i64 that follows an i32
(it arrives shifted by 32 bits), so no signature mixes them.

`wN` is the number of workload values that key a decision (the dispatch's workload, or
the dynamic dimensions of a function group's tensor arguments).

| import | arguments | results | meaning |
|---|---|---|---|
| `now_ns` | - | i64 | monotonic clock in nanoseconds |
| `select_wN` | group, w0..wN-1 | variant: i32, committed: i32, validate: i32 | variant to run next for this workload key; committed != 0 once the choice is final; validate != 0 asks the caller to also run the reference variant and `compare` |
| `record_wN` | group, variant, elapsed_ns, w0..wN-1 | - | one timed run of a variant |
| `decide_wN` | group, w0..wN-1 | variant: i32 | commit now to the best variant measured so far (imported by `init` modules built before `__autotune_init` looped; served for them) |
| `decided_wN` | group, w0..wN-1 | variant: i32 | the variant already committed for this key (by the tuning cache or earlier calls), -1 when none (as `decide_wN`) |
| `check_wN` | group, variant, result index, w0..wN-1, view | - | a variant's result on synthetic inputs, compared with the reference variant's |
| `compare_wN` | group, variant, result index, w0..wN-1, view, reference view | - | a variant's result and the reference variant's on the same inputs |

`view` arguments are `!hal.buffer_view` refs and come after the i64 arguments.

Groups are numbered in the order of the metadata function's reflection entry
`autotune.groups` (a JSON list of groups: name, container, variants, policy, parameters,
workload arity, and the names of an explicit group's setter and getter). The metadata
function is `__autotune_metadata` unless the module has a symbol of that name.
"""

from __future__ import annotations

from dataclasses import dataclass

HOST_MODULE = "autotune"
METADATA_FUNCTION = "__autotune_metadata"
METADATA_KEY = "autotune.groups"
TUNE_FUNCTION = "__autotune"
INIT_FUNCTION = "__autotune_init"  # tunes `init` groups; the runtime calls it at load
ENTRY_KEY = "autotune.entry"
"""Reflection key that marks the tuning entry points: `TUNE_ENTRY` or `INIT_ENTRY`."""
TUNE_ENTRY = "tune"
INIT_ENTRY = "init"
# The names above are the ones the lowering asks for: a name a module already uses is
# taken with a suffix (`__autotune_1`), so the runtime finds these functions by their
# reflection (the metadata by METADATA_KEY, the entry points by ENTRY_KEY), not by name.
MAX_WORKLOAD_ARITY = 8


def qualified_group_name(container: str | None, name: str) -> str:
    """A group's name in the metadata and the tuning cache: `executable::group` for a
    group of exports, `group` for a function group (no container)."""
    return name if container is None else f"{container}::{name}"


def split_group_name(qualified: str) -> tuple[str | None, str]:
    """`qualified_group_name`'s container (None for a function group) and group name."""
    container, sep, name = qualified.partition("::")
    return (container, name) if sep else (None, qualified)


@dataclass(frozen=True)
class ImportSignature:
    """One host function: its name, i64 argument count, buffer-view argument count and
    result kinds (`i` i32, `I` i64)."""

    name: str
    num_args: int
    results: str
    num_views: int = 0

    @property
    def calling_convention(self) -> str:
        """IREE's calling convention string, e.g. `0II_ii`."""
        args = "I" * self.num_args + "r" * self.num_views
        return "0" + (args or "v") + "_" + (self.results or "v")


def now_ns() -> ImportSignature:
    return ImportSignature("now_ns", 0, "I")


def select(arity: int) -> ImportSignature:
    return ImportSignature(f"select_w{arity}", 1 + arity, "iii")


def record(arity: int) -> ImportSignature:
    return ImportSignature(f"record_w{arity}", 3 + arity, "")


def decide(arity: int) -> ImportSignature:
    return ImportSignature(f"decide_w{arity}", 1 + arity, "i")


def decided(arity: int) -> ImportSignature:
    return ImportSignature(f"decided_w{arity}", 1 + arity, "i")


def check(arity: int) -> ImportSignature:
    return ImportSignature(f"check_w{arity}", 3 + arity, "", 1)


def compare(arity: int) -> ImportSignature:
    return ImportSignature(f"compare_w{arity}", 3 + arity, "", 2)


def all_imports() -> list[ImportSignature]:
    """Every function the host module must export."""
    out = [now_ns()]
    for arity in range(MAX_WORKLOAD_ARITY + 1):
        out += [
            select(arity),
            record(arity),
            decide(arity),
            decided(arity),
            check(arity),
            compare(arity),
        ]
    return out
