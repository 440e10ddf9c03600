"""The `autotune` dialect: groups of kernel variants chosen among at run time.

```mlir
autotune.group @matmul variants([@matmul_32x32, @matmul_64x64]) {policy = "online"}
```

A group sits beside its variants: inside a `hal.executable.source` (variants are its
`hal.executable.export`s), inside a `flow.executable` (its `flow.executable.export`s), or
at module level (variants are `util.func` / `func.func` of one function type). It is
dispatched like one export (`flow.dispatch @exe::@matmul[...](...)`) or called like one
function (`util.call @matmul(...)`). docs/dialect.md describes every attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

import autotune_dialect.interop as interop
from autotune_contracts.policy import Policy
from autotune_contracts.stop_rule import GROUP_SETTINGS
from autotune_dialect.group_arguments import (
    bool_argument,
    float_argument,
    integer_argument,
    string_argument,
    symbol_argument,
    variants_argument,
    workloads_argument,
)
from autotune_dialect.group_parameters import (
    PARAMETERS,
    SETTING_PROPERTIES,
    GroupAttributeError,
    PolicyName,
    read_parameters,
    verify_parameters,
)
from autotune_dialect.interop import op_name, symbol_name


@dataclass(frozen=True)
class VariantKind:
    """What a group's variants must be, given where the group sits."""

    container: str
    ops: tuple[str, ...]
    description: str


def _variant_kind(parent: Operation | None) -> VariantKind | None:
    if isinstance(parent, ModuleOp):
        return VariantKind("module", interop.FUNCTIONS, "function")
    if interop.is_executable(parent):
        name = op_name(parent)  # type: ignore[arg-type]
        return VariantKind(name, (interop.EXPORT_OF[name],), "export")
    return None


def type_text(type_: Attribute | None) -> str:
    """A function type as MLIR text, for comparing and for messages."""
    return "?" if type_ is None else interop.mlir_text(type_)


GroupSettingProperties = type(
    "GroupSettingProperties",
    (IRDLOperation,),
    {
        "__doc__": "The group's properties of the stop rule's parameters that a group may set "
        "(`autotune_contracts.stop_rule.GROUP_SETTINGS`), each optional, of the attribute "
        "its kind is held as (`group_parameters.SETTING_PROPERTIES`).",
        **{key: opt_prop_def(attr) for key, attr in SETTING_PROPERTIES.items()},
    },
)

_SETTING_ARGUMENTS: dict[type, Callable[[str, object], Attribute]] = {
    int: integer_argument,
    float: float_argument,
    bool: bool_argument,
}
"""How a Python argument of each kind of stop-rule parameter becomes its property."""


@irdl_op_definition
class GroupOp(GroupSettingProperties):  # type: ignore[misc,valid-type]
    """`autotune.group @name variants([@v1, @v2, ...]) {policy = "...", ...}`.

    A named set of interchangeable variants of one kernel; dispatching or calling the
    group runs the variant that the selection policy picks. Its properties besides the
    name, the variants, the policy, the symbols and the sample workloads are the stop
    rule's parameters that a group may set (`GroupSettingProperties`).
    """

    name = "autotune.group"

    sym_name = prop_def(SymbolNameConstraint())
    variants = prop_def(ArrayAttr[SymbolRefAttr])
    policy = opt_prop_def(PolicyName())
    choice = opt_prop_def(SymbolRefAttr)
    reference = opt_prop_def(SymbolRefAttr)
    expected = opt_prop_def(SymbolRefAttr)
    workloads = opt_prop_def(ArrayAttr)

    traits = traits_def(SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        variants: Sequence[str],
        *,
        policy: str | None = None,
        choice: str | None = None,
        reference: str | None = None,
        expected: str | None = None,
        workloads: Sequence[Sequence[int]] | None = None,
        **settings: int | float | bool | None,
    ):
        """`settings`: the stop rule's parameters that a group may set (`warmup`,
        `min_samples`, ... : `GROUP_SETTINGS`). Raise `TypeError` or `ValueError`, naming
        the argument, for an argument of the wrong Python type or an integer that i64
        does not hold, or an unknown one."""
        unknown = [key for key in settings if key not in GROUP_SETTINGS]
        if unknown:
            raise TypeError(
                f"GroupOp got an unexpected keyword argument '{unknown[0]}'; the stop rule's "
                f"parameters a group may set are {', '.join(GROUP_SETTINGS)}"
            )
        given: dict[str, tuple[object, Callable[[str, object], Attribute]]] = {
            "policy": (policy, string_argument),
            "choice": (choice, symbol_argument),
            "reference": (reference, symbol_argument),
            "expected": (expected, symbol_argument),
            **{
                key: (settings.get(key), _SETTING_ARGUMENTS[declared.kind])
                for key, declared in GROUP_SETTINGS.items()
            },
        }
        properties: dict[str, Attribute | None] = {
            "sym_name": string_argument("sym_name", sym_name),
            "variants": variants_argument(variants),
        }
        for key, (value, convert) in given.items():
            properties[key] = None if value is None else convert(key, value)
        properties["workloads"] = None if workloads is None else workloads_argument(workloads)
        super().__init__(properties=properties)

    # --- accessors -------------------------------------------------------------------

    @property
    def variant_names(self) -> list[str]:
        return [v.root_reference.data for v in self.variants.data]

    @property
    def group_name(self) -> str:
        return self.sym_name.data

    def policy_or(self, default: str) -> Policy:
        """The group's policy; without one, "static" if it names a `choice`, else `default`."""
        if self.policy is not None:
            return Policy(self.policy.data)
        return Policy.STATIC if self.choice is not None else Policy(default)

    def int_param(self, key: str) -> int | None:
        attr = self.properties.get(key)
        return None if attr is None else attr.value.data  # type: ignore[union-attr]

    def sample_workloads(self) -> list[list[int]]:
        if self.workloads is None:
            return []
        return [[w.value.data for w in s.data] for s in self.workloads.data]  # type: ignore

    def siblings(self) -> dict[str, Operation]:
        """Symbols defined beside the group, by name (the group itself excluded)."""
        block = self.parent_block()
        if block is None:
            return {}
        out: dict[str, Operation] = {}
        for op in block.ops:
            name = symbol_name(op)
            if op is not self and name is not None:
                out.setdefault(name, op)
        return out

    def resolve_variants(self) -> list[Operation]:
        """The variant ops, in the group's order (verify first)."""
        siblings = self.siblings()
        return [siblings[name] for name in self.variant_names]

    # --- verification ---------------------------------------------------------------

    def verify_(self) -> None:
        names = self.variant_names
        if not names:
            raise VerifyException(f"group @{self.group_name} must name at least one variant")
        for variant in self.variants.data:
            if variant.nested_references.data:
                raise VerifyException(
                    f"variant {variant} must be a flat symbol (@name) beside the group"
                )
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise VerifyException(f"variant @{name} is listed more than once")
            seen.add(name)
        verify_parameters(self.properties, self.attributes, names)
        parent = self.parent_op()
        kind = _variant_kind(parent)
        if kind is None:
            where = "nothing" if parent is None else f"'{op_name(parent)}'"
            raise VerifyException(
                "expects to be inside a hal.executable.source, a flow.executable or a "
                f"module, not {where}"
            )
        self._verify_top_level(parent)  # type: ignore[arg-type]
        self._verify_runtime_name(parent)  # type: ignore[arg-type]
        siblings = self.siblings()
        if self.group_name in siblings:
            other = siblings[self.group_name]
            raise VerifyException(
                f"@{self.group_name} is also the name of a '{op_name(other)}' in the "
                f"enclosing {kind.container}"
            )
        variants: list[Operation] = []
        for name in names:
            op = siblings.get(name)
            if name == self.group_name:
                raise VerifyException(f"variant @{name} is the group itself")
            if op is None:
                raise VerifyException(
                    f"variant @{name} not found in the enclosing {kind.container}"
                )
            if op_name(op) not in kind.ops:
                raise VerifyException(
                    f"variant @{name} is a '{op_name(op)}', expected "
                    + " or ".join(f"'{t}'" for t in kind.ops)
                )
            variants.append(op)
        self._verify_variants_agree(variants)

    def _verify_top_level(self, container: Operation) -> None:
        """A group's module (its container, or its executable's) is the top-level one.
        `iree-compile` 3.13 builds the code of the top-level module only: a nested
        module's functions are left out of the built module, or fail to build
        (`'stream.tensor.sizeof' op illegal for this phase of lowering`)."""
        module = container if isinstance(container, ModuleOp) else container.parent_op()
        outer = None if module is None else module.parent_op()
        if outer is None:
            return
        if interop.is_executable(outer):
            raise VerifyException(
                "cannot be inside a kernel module; place it beside the exports of the executable"
            )
        name = module.sym_name if isinstance(module, ModuleOp) else None
        which = "" if name is None else f" @{name.data}"
        raise VerifyException(
            f"cannot be inside a nested module{which}: iree-compile builds the top-level "
            "module's code only; place the group, its variants and their uses there"
        )

    def _verify_runtime_name(self, container: Operation) -> None:
        """The runtime and the tuning cache name a group `executable::group`
        (`interface.qualified_group_name`) and split that name at its first `::`: neither
        part may hold one, or a function group `lib::f` would read as group `f` of `lib`."""
        names = [("group", self.group_name)]
        if interop.is_executable(container):
            names.append((op_name(container), symbol_name(container) or ""))
        for what, name in names:
            if "::" in name:
                raise VerifyException(
                    f'{what} name "{name}" must not contain "::", which separates an '
                    "executable's name from its group's in the names the runtime and the "
                    "tuning cache use (executable::group)"
                )

    def _verify_variants_agree(self, variants: list[Operation]) -> None:
        first = variants[0]
        first_name = symbol_name(first)
        if op_name(first) == "hal.executable.export":
            layout = interop.layout_text(first)
            for op in variants[1:]:
                if interop.layout_text(op) != layout:
                    raise VerifyException(
                        f"variant @{symbol_name(op)} has a different layout than "
                        f"@{first_name}; all variants must have the same layout"
                    )
        if interop.is_export(first):
            arities = {symbol_name(op): interop.workload_arity(op) for op in variants}
            known = {n: a for n, a in arities.items() if a is not None}
            if len(set(known.values())) > 1:
                detail = ", ".join(f"@{n}: {a}" for n, a in known.items())
                raise VerifyException(f"variants take different workload counts ({detail})")
            if op_name(first) == "flow.executable.export":
                self._verify_kernel_arities(variants)
                self._verify_kernel_signatures(variants)
            samples = self.sample_workloads()
            if samples and known and len(samples[0]) != next(iter(known.values())):
                raise VerifyException(
                    f"sample workloads have {len(samples[0])} values but the variants take "
                    f"{next(iter(known.values()))}"
                )
        else:
            expected = type_text(interop.function_type(first))
            for op in variants[1:]:
                got = type_text(interop.function_type(op))
                if got != expected:
                    raise VerifyException(
                        f"variant @{symbol_name(op)} of autotune.group @{self.group_name} has "
                        f"type {got}, but @{first_name} has type {expected}; all variants "
                        "must have the same function type"
                    )

    def _verify_kernel_arities(self, variants: list[Operation]) -> None:
        executable = self.parent_op()
        assert executable is not None
        arities: dict[str, int | None] = {}
        for op in variants:
            kernel = interop.kernel_function_name(op)
            if kernel is not None:
                arities[kernel] = interop.kernel_arity(executable, kernel)
        known = {name: n for name, n in arities.items() if n is not None}
        if len(set(known.values())) > 1:
            detail = ", ".join(f"@{name}: {n}" for name, n in known.items())
            raise VerifyException(f"variant kernels take different numbers of arguments ({detail})")

    def _verify_kernel_signatures(self, variants: list[Operation]) -> None:
        """Exports of one group run kernel functions of one type: a dispatch passes the
        same buffers to whichever runs (IREE compiles each kernel on its own and would
        not notice f32 data bound to an f16 argument)."""
        executable = self.parent_op()
        assert executable is not None
        known: list[tuple[Operation, str, str]] = []
        for op in variants:
            kernel = interop.kernel_function_name(op)
            signature = None if kernel is None else interop.kernel_signature(executable, kernel)
            if signature is not None:
                known.append((op, kernel, signature))  # type: ignore[arg-type]
        for op, kernel, signature in known[1:]:
            first, first_kernel, expected = known[0]
            if signature != expected:
                raise VerifyException(
                    f"variant @{symbol_name(op)} of autotune.group @{self.group_name} has type "
                    f"{signature} (kernel function @{kernel}), but @{symbol_name(first)} has "
                    f"type {expected} (kernel function @{first_kernel}); all variants must "
                    "take the same arguments"
                )

    def verify_dispatch(self, dispatch: Operation) -> None:
        """Check that a `flow.dispatch` of this group fits its variants' interface."""
        from autotune_dialect.flow import DispatchOp

        variants = self.resolve_variants_or_none()
        if variants is None:
            return
        first = variants[0]
        if not interop.is_export(first):
            raise VerifyException(
                f"@{self.group_name} is a group of functions; call it with util.call"
            )
        if not isinstance(dispatch, DispatchOp):
            raise VerifyException(
                f"dispatch of group @{self.group_name} has a form the lowering does not support"
            )
        if len(dispatch.entry_points) > 1:
            raise VerifyException(
                f"group @{self.group_name} must be the only entry point of a dispatch"
            )
        arity = interop.workload_arity(first)
        if arity is not None and arity != len(dispatch.workload):
            raise VerifyException(
                f"dispatch of group @{self.group_name} passes {len(dispatch.workload)} "
                f"workload values but its variants take {arity}"
            )
        untied_results = sum(1 for t in dispatch.tied_operand_indices() if t < 0)
        tensors = sum(1 for a in dispatch.arguments if isinstance(a.type, TensorType))
        scalars = len(dispatch.arguments) - tensors
        if op_name(first) == "hal.executable.export":
            layout = interop.layout_text(first)
            if layout is None:
                return
            constants, bindings = interop.layout_counts(layout)
            if tensors + untied_results != bindings:
                raise VerifyException(
                    f"dispatch of group @{self.group_name} binds {tensors + untied_results} "
                    f"buffers ({tensors} operands, {untied_results} results) but the "
                    f"variants' layout has {bindings} bindings"
                )
            if scalars != constants:
                raise VerifyException(
                    f"dispatch of group @{self.group_name} passes {scalars} push constants "
                    f"but the variants' layout has {constants}"
                )
            return
        kernel = interop.kernel_function_name(first)
        executable = first.parent_op()
        if kernel is None or executable is None:
            return
        expected = interop.kernel_arity(executable, kernel)
        given = len(dispatch.arguments) + untied_results
        if expected is not None and expected != given:
            raise VerifyException(
                f"dispatch of group @{self.group_name} passes {given} kernel arguments "
                f"({len(dispatch.arguments)} operands, {untied_results} results) but "
                f"@{kernel} takes {expected}"
            )
        for variant in variants:
            self._verify_dispatch_types(dispatch, variant)

    def _verify_dispatch_types(self, dispatch: Operation, variant: Operation) -> None:
        """Each tensor a dispatch passes or returns has the shape and element type of the
        kernel argument it binds (`!iree_tensor_ext.dispatch.tensor<...:tensor<...>>`):
        IREE does not check it, and a kernel that stores more than the result holds writes
        past it."""
        kernel = interop.kernel_function_name(variant)
        executable = variant.parent_op()
        signature = None
        if kernel is not None and executable is not None:
            signature = interop.kernel_argument_types(executable, kernel)
        if signature is None:
            return
        tied = dispatch.tied_operand_indices()  # type: ignore[attr-defined]
        bound = [("operand", i, a.type) for i, a in enumerate(dispatch.arguments)]  # type: ignore[attr-defined]
        bound += [("result", i, r.type) for i, r in enumerate(dispatch.results) if tied[i] < 0]
        for (what, index, given), kernel_type in zip(bound, signature, strict=False):
            if not isinstance(given, TensorType):
                continue
            held = interop.dispatch_tensor_shape(kernel_type)
            if held is None or interop.shapes_agree(interop.mlir_text(given), held):
                continue
            verb = "stores" if what == "result" else "reads"
            raise VerifyException(
                f"dispatch of group @{self.group_name} has {what} #{index} of type "
                f"{interop.mlir_text(given)}, but variant @{symbol_name(variant)}'s kernel "
                f"@{kernel} {verb} {held} there ({kernel_type})"
            )

    def verify_call(self, call: Operation) -> None:
        """Check that a call of this group has its variants' function type."""
        variants = self.resolve_variants_or_none()
        if variants is None:
            return
        if not interop.is_function(variants[0]):
            raise VerifyException(
                f"@{self.group_name} is a group of exports; dispatch it with flow.dispatch"
            )
        expected = type_text(interop.function_type(variants[0]))
        given = type_text(
            FunctionType.from_lists([a.type for a in call.operands], [r.type for r in call.results])
        )
        if given != expected:
            raise VerifyException(
                f"call of group @{self.group_name} has type {given}, but its variants have "
                f"type {expected}"
            )

    def resolve_variants_or_none(self) -> list[Operation] | None:
        siblings = self.siblings()
        ops = [siblings.get(name) for name in self.variant_names]
        if not ops or any(op is None for op in ops):
            return None  # reported by the group's own verifier
        return ops  # type: ignore[return-value]

    # --- syntax ---------------------------------------------------------------------

    @classmethod
    def from_attributes(
        cls, attributes: Mapping[str, Attribute], written: str | None = None
    ) -> GroupOp:
        """A group from its attributes as MLIR's generic form holds them (`sym_name`,
        `variants` and the parameters; `written`: the group's text, when known, from its
        start); `ValueError` names what is wrong."""
        name = attributes.get("sym_name")
        if not isinstance(name, StringAttr):
            raise GroupAttributeError("requires a 'sym_name' string (the group's name)", "sym_name")
        variants = attributes.get("variants")
        if not isinstance(variants, ArrayAttr) or not all(
            isinstance(v, SymbolRefAttr) for v in variants.data
        ):
            raise GroupAttributeError(
                "expected a list of variant symbols: [@a, @b, ...]", "variants"
            )
        params = {k: v for k, v in attributes.items() if k not in ("sym_name", "variants")}
        op = cls(name.data, [])
        op.properties["variants"] = variants
        definitions = cls.get_irdl_definition().properties
        op.properties.update(read_parameters(params, definitions, written))
        return op

    # The group's syntax is hand-written: xDSL 0.74's declarative format
    # (`$sym_name `variants` `(` $variants `)` attr-dict`, with `ParsePropInAttrDict`)
    # prints and parses the same text, but not the same way. (1) Its `attr-dict` moves the
    # names of properties into properties unchecked and keeps any other name as a
    # discardable attribute, so `min_samples = true` (an i1, which the IntegerAttr
    # property takes) and `polcy = "online"` would be reported by the verifier, at the
    # group, instead of while reading, at the variant list (`FILE:9:30: unknown group
    # attribute 'polcy'`, tests/test_xdsl_opt_errors.py); and `max_samples =
    # 9223372036854775808`, which MLIR's reader turns into the i64 -2^63, needs the text
    # as written (`read_parameters`). (2) An integer literal for a float parameter
    # (`tolerance = 10`) would stay an IntegerAttr, refused by the FloatAttr property.
    # (3) It prints properties in the order the op holds them (as they were written or
    # set), where the group prints them in `PARAMETERS` order. A custom directive
    # doing (1)-(3) would be this parser and printer, moved.
    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        name = parser.parse_symbol_name()
        parser.parse_keyword("variants")
        parser.parse_punctuation("(")
        pos = parser.pos
        variants = parser.parse_attribute()
        parser.parse_punctuation(")")
        params_at = parser.pos
        params = parser.parse_optional_attr_dict()
        written = parser.lexer.input.content[params_at : parser.pos]
        try:
            attributes = {"sym_name": name, "variants": variants, **params}
            return cls.from_attributes(attributes, written)
        except ValueError as err:
            parser.raise_error(str(err), pos)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.group_name)
        printer.print_string(" variants(")
        printer.print_attribute(self.variants)
        printer.print_string(")")
        params = {k: self.properties[k] for k in PARAMETERS if k in self.properties}
        if params:
            printer.print_string(" ")
            printer.print_attr_dict(params)

    # --- notebooks ------------------------------------------------------------------

    def _repr_markdown_(self) -> str:
        """A group in a notebook, as `autotune_bridge.notebook` shows every op (a group
        prints the same in xDSL's syntax and in IREE's)."""
        return f"```mlir\n{str(self).rstrip()}\n```"


Autotune = Dialect("autotune", [GroupOp], [])
