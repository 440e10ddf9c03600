"""The paths written for throughput (docs/benchmarks.md, B9) give what the general ones
give: the word-to-word scan of groups and calls, the generic writer's own printing of
locations, arrays and dictionaries, the flat builders of the project's ops, and the
packages' attributes imported on use."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from iree.compiler import ir
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerAttr,
    NameLoc,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    UnknownLoc,
    f32,
    i32,
)
from xdsl.ir import Block
from xdsl.irdl import IRDLOperation
from xdsl.printer import Printer

from autotune_bridge.generic_text import GenericWriter
from autotune_dialect import flow, group_syntax
from autotune_dialect.iree_ir import iree_context
from autotune_dialect.verbatim import VerbatimAttr, VerbatimType

_TOKENS = ["util.", "func.", "call", " ", "@f", "(", '"', "autotune.group", "x", ".", "%"]
_TOKENS += ["\n", '@"a b"', "call@", "#", "autotune.groupx", "//"]


@settings(max_examples=400, derandomize=True)
@example('%r = util.call @f(%a) : (i32) -> i32\n  func.call @"a b"(%a)')
@example('"call @x(" call @y( .call @z( xcall @w(')
@example('"autotune.group"() <{}> autotune.group @g  x.autotune.group "autotune.group"')
@given(st.lists(st.sampled_from(_TOKENS), max_size=14).map("".join))
def test_word_scan_finds_what_the_patterns_find(text):
    def spans(matches):
        return [(m.start(), m.end()) for m in matches]

    assert spans(group_syntax._matches(group_syntax._CALL, "call", ("util.", "func."), text)) == (
        spans(group_syntax._CALL.finditer(text))
    )
    keyword = group_syntax.KEYWORD
    assert spans(
        group_syntax._matches(group_syntax._GROUP_KEYWORD, keyword, ('"',), text)
    ) == spans(group_syntax._GROUP_KEYWORD.finditer(text))


def _xdsl_print(attr, in_location=False) -> str:
    out = StringIO()
    printer = Printer(stream=out)
    printer.printing_location = in_location
    printer.print_attribute(attr)
    return out.getvalue()


_FILE = FileLineColLoc(StringAttr('dir/"odd" näme.mlir'), IntAttr(12), IntAttr(3))
ATTRIBUTES = [
    _FILE,
    NameLoc(StringAttr("variant @v0 (autotune.group @g)"), _FILE),
    NameLoc(StringAttr("@f"), NameLoc(StringAttr("inner"), _FILE)),
    NameLoc(StringAttr("only a name"), UnknownLoc()),
    ArrayAttr([SymbolRefAttr("e", ["v0"]), IntegerAttr(-1, IndexType()), StringAttr("a\nb")]),
    ArrayAttr([]),
    DictionaryAttr({"json": StringAttr('[{"id": 0}]' * 50), "flag": UnitAttr()}),
    DictionaryAttr({"needs quotes": IntegerAttr(7, i32), "nested": ArrayAttr([UnitAttr()])}),
    StringAttr('tab\there \\ quote"'),
]


def _iree_reading(text: str, is_location: bool) -> str:
    """What IREE reads from attribute or location text, as IREE prints it back (spellings
    of one string differ: `\\22` or `\\"`, UTF-8 or escaped bytes)."""
    with iree_context() as context:
        if not is_location:
            return str(ir.Attribute.parse(text, context))
        module = ir.Module.parse(f'"test.op"() : () -> () loc({text})')
        op = module.body.operations[0]
        return str(op.location)


@pytest.mark.parametrize("attr", ATTRIBUTES, ids=lambda a: type(a).__name__)
def test_writer_prints_attributes_as_xdsl_does(attr):
    is_location = isinstance(attr, FileLineColLoc | NameLoc)
    ours, xdsl = GenericWriter().attribute(attr), _xdsl_print(attr)
    if is_location:
        ours, xdsl = ours.removeprefix("loc(")[:-1], xdsl.removeprefix("loc(")[:-1]
    assert _iree_reading(ours, is_location) == _iree_reading(xdsl, is_location)


def test_writer_prints_locations_inside_locations_as_xdsl_does():
    for loc in ATTRIBUTES[:4]:
        ours, xdsl = GenericWriter().attribute(loc, True), _xdsl_print(loc, True)
        assert _iree_reading(ours, True) == _iree_reading(xdsl, True)


def test_verbatim_attributes_and_types_compare_by_their_text():
    cuda, local = VerbatimAttr('#t<"cuda">'), VerbatimAttr('#t<"local">')
    assert cuda != local
    assert cuda == VerbatimAttr('#t<"cuda">') and hash(cuda) == hash(VerbatimAttr('#t<"cuda">'))
    assert VerbatimType("!a") != VerbatimType("!b")
    writer = GenericWriter()
    assert writer.attribute(ArrayAttr([cuda, local])) == '[#t<"cuda">, #t<"local">]'


def test_flat_builder_matches_the_generic_one():
    tensor = TensorType(f32, [-1])
    block = Block(arg_types=[IndexType(), tensor, IndexType(), IndexType()])
    n, arg, dim, out_dim = block.args
    built = flow.DispatchOp(SymbolRefAttr("e", ["v"]), [n], [arg], [dim], [tensor], [out_dim], [0])
    generic = flow.DispatchOp.__new__(flow.DispatchOp)
    IRDLOperation.__init__(
        generic,
        operands=[[n], [arg], [dim], [out_dim]],
        result_types=[[tensor]],
        properties={
            "entry_points": ArrayAttr([SymbolRefAttr("e", ["v"])]),
            "tied_operands": ArrayAttr([IntegerAttr(0, IndexType())]),
        },
    )
    assert built.properties == generic.properties
    assert list(built.operands) == list(generic.operands)
    assert [r.type for r in built.results] == [r.type for r in generic.results]
    assert list(built.workload) == [n] and list(built.result_dims) == [out_dim]
    built.verify_()


@pytest.mark.parametrize("package", ["autotune_runtime", "autotune_model", "lowering.triton"])
def test_package_names_import_on_use(package):
    module = __import__(package, fromlist=["__all__"])
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'not_there'"):
        module.not_there  # noqa: B018


def test_the_command_line_starts_without_the_runtime_and_the_model_tuner():
    probe = (
        "import sys, autotune_cli.main; "
        "print(sorted(m for m in ('autotune_runtime.session', 'autotune_model.pipeline', "
        "'xdsl.dialects.linalg', 'IPython') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_group_uses_are_checked_with_a_fixed_number_of_scans(monkeypatch):
    """Collecting the sites and checking every other reference to groups index each
    symbol table once, so that a module with many symbols and dispatches lowers in linear
    time (it was one scan of the module per reference)."""
    from autotune_bridge.ir import parse_module
    from autotune_dialect import symbols
    from benchmarks.kernels import many_groups_module
    from lowering.autotune_to_iree import lower_module

    original = symbols._symbols

    def module_scans(count: int) -> int:
        module = parse_module(many_groups_module(count, 2, per_function=count, grouped=1))
        scans = 0

        def counted(table):
            nonlocal scans
            scans += table is module
            return original(table)

        monkeypatch.setattr(symbols, "_symbols", counted)
        lower_module(module, "online")
        monkeypatch.setattr(symbols, "_symbols", original)
        return scans

    assert module_scans(8) == module_scans(32) <= 3


@pytest.mark.parametrize("names", [("e5", "g5_v0"), ("a b", "c"), ('x"y', "z$1"), ("é", "_")])
def test_nested_symbol_references_import_as_the_general_path_reads_them(names):
    from autotune_bridge.importer import Importer, faithful

    context = iree_context()
    with context:
        text = "::".join("@" + group_syntax.mlir_string(name) for name in names)
        attr = ir.Attribute.parse(text)
        fast = Importer(context).attribute(attr)
        assert fast == faithful(str(attr), False, context)
        assert isinstance(fast, SymbolRefAttr)
        assert [fast.root_reference.data, *(n.data for n in fast.nested_references)] == list(names)
