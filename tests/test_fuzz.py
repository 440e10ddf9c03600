"""Fuzzing the lowering: mutated valid inputs either lower to IR that IREE reads, or fail with
a located `DiagnosticError`; never another exception, never a hang.

Seeds are the valid IREE inputs of `tests/data/roundtrip/` (those under 10 KB: the 22 KB one
would dominate the time), the CUDA group modules of `tests/data/cuda/` and modules with groups
from `tests/modules.py`. Mutations: token deletions, swaps and replacements, random values in
place of literals and symbols, random group attributes, truncation and random character
insertions, one to three of them per example.

`make test` runs `CI_EXAMPLES` examples, derandomized (the same ones every run); `make fuzz`
sets `FUZZ_EXAMPLES` (50,000 by default there) and draws new ones each run.

When lowering succeeds, `iree.compiler.ir` parses the output in-process (about 1 ms, against
30-100 ms for an `iree-opt` process). Kernel modules and IREE attributes are kept as text by
design (docs/interop.md), so a mutation inside them can lower "successfully" to IR that IREE
rejects; such a rejection fails the test only when IREE accepts the input itself (each group
replaced by its first variant, i.e. what the `static` lowering emits), so that the fault is
the project's.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from iree.compiler import ir as iree_ir
from modules import faulty_function_group, function_group_module, tagged_module

from autotune_bridge import POLICIES, DiagnosticError
from autotune_dialect.group_parameters import PARAMETERS
from lowering.autotune_to_iree import lower_to_iree

CI_EXAMPLES = 2400
"""Examples per `make test` run, over the three tests below (weights 5:3:4)."""
TOTAL = int(os.environ.get("FUZZ_EXAMPLES", CI_EXAMPLES))
RANDOMIZED = "FUZZ_EXAMPLES" in os.environ
DEADLINE_S = 20.0
"""Wall-clock limit of one example; a normal one takes well under a second."""
FILENAME = str(DATA / "cuda" / "fuzz.mlir")
"""Where the inputs are said to be: relative object paths (`vecadd.ptx`) resolve there."""

SEEDS: dict[str, str] = {
    **{
        p.name: p.read_text()
        for p in sorted((DATA / "roundtrip").glob("*.mlir"))
        if p.stat().st_size < 10_000
    },
    **{p.name: p.read_text() for p in sorted((DATA / "cuda").glob("*.mlir"))},
    "tagged_static": tagged_module(),
    "tagged_dynamic_explicit": tagged_module(
        dynamic=True, group_attrs='{policy = "explicit", workloads = [[16], [64]]}'
    ),
    "function_group_init": function_group_module('{policy = "init"}'),
    "faulty_function_group": faulty_function_group(group_attrs="{reference = @g2}"),
}
GROUP_SEEDS = [name for name, text in SEEDS.items() if "autotune.group" in text]

TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[%@#!^]?[\w$.-]+|->|::|[^\s\w]')
VALUE_TOKEN = re.compile(r'"|[@#%]|-?\d')
GROUP_ATTRS = re.compile(
    r"(autotune\.group\s+@[\w$.]+\s+variants\(\[[^\]\n]*\]\))[ \t]*(\{[^}\n]*\})?"
)
GROUP_KEYS = list(PARAMETERS)

# --- strategies -----------------------------------------------------------------------------

symbols = st.sampled_from(["@v0", "@v1", "@k0", "@g1", "@f2", "@add_64", "@nope", "@a::@b"])
scalars = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "-1", "1", "0.5", "1.0", "true", "unit", "[]", "{}", "i32", "index"]),
    st.text(max_size=6).map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.sampled_from([f'"{p}"' for p in POLICIES]),
    symbols,
)
values = st.one_of(
    scalars,
    st.lists(st.lists(st.integers(-2, 300).map(str), max_size=3), max_size=3).map(
        lambda ws: "[" + ", ".join("[" + ", ".join(w) + "]" for w in ws) + "]"
    ),
    st.sampled_from(
        [
            "tensor<?xf32>",
            "dense<1> : tensor<4xi32>",
            "#hal.pipeline.layout<bindings = []>",
            "#hal.pipeline.binding<storage_buffer>",
            "%0",
            "%arg0",
            "affine_map<(d0) -> (d0)>",
        ]
    ),
)
characters = st.one_of(
    st.sampled_from(list('{}()[]<>:,=@%#!"\\/-^.*?$ \n\t') + ["\x00", "\ufeff", "\u2028", "é"]),
    st.characters(exclude_categories=("Cs",)),
)


def spread(size: int) -> st.SearchStrategy[int]:
    """An index below `size`, spread over the range (Hypothesis favours small integers, which
    would keep mutations in the comments at the top of the seeds); 0 when shrunk."""
    return st.integers(0, 2**32 - 1).map(lambda n: n * 2654435761 % size)


@st.composite
def token_mutation(draw, text: str) -> str:
    """Delete, swap or replace tokens, or put a random value in place of a literal."""
    tokens = [m.span() for m in TOKEN.finditer(text)]
    if not tokens:
        return text
    index = spread(len(tokens))
    kind = draw(st.sampled_from(["delete", "swap", "replace", "value"]))
    start, end = tokens[draw(index)]
    if kind == "delete":
        return text[:start] + text[end:]
    if kind == "value":
        literals = [t for t in tokens if VALUE_TOKEN.match(text, t[0])]
        if literals:
            start, end = draw(st.sampled_from(literals))
        return text[:start] + draw(values) + text[end:]
    other_start, other_end = tokens[draw(index)]
    if kind == "replace":
        return text[:start] + text[other_start:other_end] + text[end:]
    (a, b), (c, d) = sorted([(start, end), (other_start, other_end)])
    if b > c:
        return text
    return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]


@st.composite
def text_mutation(draw, text: str) -> str:
    """Truncate (a third of the time), or insert a random character."""
    position = draw(spread(len(text) + 1))
    if draw(st.integers(0, 2)) == 0:
        return text[:position]
    return text[:position] + draw(characters) + text[position:]


def group_value(key: str, variants: list[str]) -> st.SearchStrategy[str]:
    """Mostly values of the kind `key` takes (some out of range), sometimes anything."""
    small = st.integers(-3, 12).map(str)
    fitting = {
        "policy": st.sampled_from([f'"{p}"' for p in POLICIES] + ['"fast"']),
        "choice": st.sampled_from(variants + ["@nope"]),
        "reference": st.sampled_from(variants + ["@nope"]),
        "warmup": small,
        "min_samples": small,
        "max_samples": small,
        "confidence": st.sampled_from(["0.5", "0.95", "0.0", "1", "1.5", "-0.1", "0.99"]),
        "tolerance": st.sampled_from(["0", "0.01", "1.0", "-1.0", "1e-30", "1e300"]),
        "workloads": st.lists(
            st.lists(st.integers(-1, 300).map(str), min_size=1, max_size=3), max_size=3
        ).map(lambda ws: "[" + ", ".join("[" + ", ".join(w) + "]" for w in ws) + "]"),
    }.get(key, values)
    return st.one_of(fitting, fitting, fitting, fitting, values)


@st.composite
def group_attrs_mutation(draw, text: str) -> str:
    """Replace a group's attribute dictionary by random entries of the known keys."""
    matches = list(GROUP_ATTRS.finditer(text))
    if not matches:
        return text
    match = draw(st.sampled_from(matches))
    variants = re.findall(r"@[\w$.]+", match[1])[1:]
    keys = draw(st.lists(st.sampled_from(GROUP_KEYS), max_size=4, unique=True))
    attrs = ", ".join(f"{key} = {draw(group_value(key, variants))}" for key in keys)
    return text[: match.start()] + match[1] + " {" + attrs + "}" + text[match.end() :]


def mutated(seeds: list[str], mutation) -> st.SearchStrategy[tuple[str, str]]:
    @st.composite
    def build(draw) -> tuple[str, str]:
        text = SEEDS[draw(st.sampled_from(seeds))]
        for _ in range(draw(st.integers(1, 3))):
            text = draw(mutation(text))
        return text, draw(st.sampled_from(POLICIES))

    return build()


# --- the property ---------------------------------------------------------------------------


class ExampleTimeout(Exception):
    pass


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail an example that runs longer than `seconds` (SIGALRM: main thread, Unix)."""

    def expired(signum, frame):
        raise ExampleTimeout(f"example ran longer than {seconds} s (a hang?)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class IREEReader:
    """In-process `iree.compiler.ir` parsing (and verification) of module text."""

    def __init__(self):
        self.context = None
        self.uses = 0

    def error(self, text: str) -> str | None:
        """None if IREE reads `text`, else its first diagnostic."""
        if self.context is None or self.uses >= 500:  # bound what one context accumulates
            # A multithreaded context deadlocks when a worker thread reports a diagnostic
            # while the parsing thread holds the GIL.
            self.context = iree_ir.Context()
            self.context.enable_multithreading(False)
            self.uses = 0
        self.uses += 1
        try:
            iree_ir.Module.parse(text, self.context)
        except iree_ir.MLIRError as err:
            return str(err)
        except Exception as err:  # IREE's own failures: `iterator_types = [0, ...]` in a
            return repr(err)  # linalg.generic raises std::bad_alloc (iree-opt crashes)
        return None


IREE = IREEReader()

GROUP_DEFINITION = re.compile(
    r"^[ \t]*autotune\.group\s+@([\w$.]+)\s+variants\(\[\s*@([\w$.]+)[^\n]*\n?", re.MULTILINE
)


def without_groups(text: str) -> str:
    """`text` with each group removed and its uses naming its first variant."""
    for match in reversed(list(GROUP_DEFINITION.finditer(text))):
        text = text[: match.start()] + text[match.end() :]
        use = re.compile(r"(?<=[\s:{,])@" + re.escape(match[1]) + r"(?=[\[(\s,}])")
        text = use.sub("@" + match[2], text)
    return text


def check(text: str, policy: str) -> None:
    with deadline(DEADLINE_S):
        try:
            lowered = lower_to_iree(text, policy=policy, filename=FILENAME)
        except DiagnosticError as err:
            first = err.render().split("\n", 1)[0]
            assert re.match(rf"({re.escape(FILENAME)}:\d+:\d+: )?error: \S", first), first
            return
        rejected = IREE.error(lowered)
        if rejected is not None:
            assert IREE.error(without_groups(text)) is not None, (
                f"the project lowered input that IREE reads to IR that it rejects:\n{rejected}"
            )


def fuzz_settings(weight: int) -> settings:
    return settings(
        max_examples=max(1, TOTAL * weight // 12),
        deadline=None,
        derandomize=not RANDOMIZED,
        database=None if not RANDOMIZED else settings.default.database,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


@fuzz_settings(5)
@given(mutated(list(SEEDS), token_mutation))
def test_token_mutations(case):
    check(*case)


@fuzz_settings(3)
@given(mutated(list(SEEDS), text_mutation))
def test_truncations_and_insertions(case):
    check(*case)


@fuzz_settings(4)
@given(mutated(GROUP_SEEDS, group_attrs_mutation))
def test_group_attribute_values(case):
    check(*case)


# --- the oracle's own checks ----------------------------------------------------------------


def test_seeds_lower_to_ir_that_iree_reads():
    for name, text in SEEDS.items():
        for policy in POLICIES if name in GROUP_SEEDS else POLICIES[:1]:
            lowered = lower_to_iree(text, policy=policy, filename=FILENAME)
            assert IREE.error(lowered) is None, (name, policy)


def test_without_groups_gives_ir_that_iree_reads():
    for name in GROUP_SEEDS:
        assert IREE.error(without_groups(SEEDS[name])) is None, name


def test_deadline_interrupts_a_hang():
    with pytest.raises(ExampleTimeout), deadline(0.2):
        while True:
            pass
