"""The parameters of an `autotune.group`: their names, what each takes, and their checks.

A group's attributes besides its name and variants are its parameters (`PARAMETERS`: the
policy, `choice`, `reference` and `expected`, the stop rule's parameters that a group may
set, and sample workloads). The stop rule's are declared once, in
`autotune_contracts.stop_rule` (`GROUP_SETTINGS`: kind, default, range); their properties
(`SETTING_PROPERTIES`), kind checks and range checks here are made from that declaration.
They are checked twice. Reading a group from its
attributes (`read_parameters`) refuses an unknown name or a value of the wrong kind with a
`GroupAttributeError` that names the key, which the syntax reports at that key. Verifying a
group (`verify_parameters`) refuses values out of range, a `choice`, `reference` or
`expected` that is not a variant, an `expected` with the `static` policy, and sample
counts the runtime's stop rule would refuse. Which names are policies is the `policy`
property's constraint (`PolicyName`), which xDSL checks with the group's other properties.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import AttrConstraint, BaseAttr, PropertyDef, VerificationContext
from xdsl.irdl.constraints import IntConstraint
from xdsl.utils.exceptions import VerifyException

from autotune_contracts.policy import POLICIES, Policy
from autotune_contracts.stop_rule import GROUP_SETTINGS, StopRule

_INT_PARAMS = tuple(k for k, s in GROUP_SETTINGS.items() if s.kind is int)
_FLOAT_PARAMS = tuple(k for k, s in GROUP_SETTINGS.items() if s.kind is float)
_NUMBER_PARAMS = tuple(k for k in GROUP_SETTINGS if k in (*_INT_PARAMS, *_FLOAT_PARAMS))
_BOOL_PARAMS = tuple(k for k, s in GROUP_SETTINGS.items() if s.kind is bool)
_SYMBOL_PARAMS = ("choice", "reference", "expected")
PARAMETERS = ("policy", *_SYMBOL_PARAMS, *_NUMBER_PARAMS, "workloads", *_BOOL_PARAMS)
"""Every attribute a group accepts besides its name and variants: the policy, the
symbols, the stop rule's numbers, sample workloads, the stop rule's switches."""

SETTING_PROPERTIES: dict[str, type[Attribute]] = {
    **{k: IntegerAttr for k in _INT_PARAMS},
    **{k: FloatAttr for k in _FLOAT_PARAMS},
    **{k: BoolAttr for k in _BOOL_PARAMS},
}
"""The attribute each of the stop rule's group parameters is held as (an i64 integer, an
f64 float, a boolean): the group's optional properties of these names."""


class GroupAttributeError(ValueError):
    """A group attribute that is missing, unknown or of the wrong kind."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class PolicyName(AttrConstraint[StringAttr]):
    """A string naming a member of `Policy`: what a group's `policy` holds. xDSL checks it
    with the group's other properties, before the group's own verifier runs (`verify_`), so
    an unknown policy is reported before a fault of the variant list."""

    KIND: ClassVar[BaseAttr[StringAttr]] = BaseAttr(StringAttr)
    """What the value must be before its name is read: a string. Reading a group checks
    this much (`read_parameters`); an unknown name is the verifier's to report, at the
    group."""

    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        self.KIND.verify(attr, constraint_context)
        assert isinstance(attr, StringAttr)
        if attr.data not in POLICIES:
            raise VerifyException(
                f'unknown policy "{attr.data}"; expected one of '
                + ", ".join(f'"{p}"' for p in POLICIES)
            )

    def get_bases(self) -> set[type[Attribute]]:
        return {StringAttr}

    def mapping_type_vars(
        self, type_var_mapping: Mapping[TypeVar, AttrConstraint | IntConstraint]
    ) -> PolicyName:
        return self


def unknown_attribute(key: str) -> str:
    return f"unknown group attribute '{key}'; expected one of {', '.join(PARAMETERS)}"


_DESCRIBE: dict[str, str] = {
    "policy": 'a string (e.g. "online")',
    **{k: "a variant symbol (e.g. @v1)" for k in _SYMBOL_PARAMS},
    "workloads": "a list of lists of integers (e.g. [[128, 128]])",
    **{k: "true or false" for k in _BOOL_PARAMS},
    **{k: "an integer" for k in _INT_PARAMS},
    **{k: "a number" for k in _FLOAT_PARAMS},
}
"""What each group parameter expects, as messages say it."""


def read_parameters(
    given: Mapping[str, Attribute],
    definitions: Mapping[str, PropertyDef],
    written: str | None = None,
) -> dict[str, Attribute]:
    """A group's parameters as its properties hold them, from its attributes as MLIR's
    generic form holds them (`definitions`: the group's property definitions; `written`:
    the group's text, when known, from its start). A float parameter written as an
    untyped integer (`10`) is that number."""
    params = dict(given)
    for key, value in given.items():
        if key not in PARAMETERS:
            raise GroupAttributeError(unknown_attribute(key), key)
        if key in (*_INT_PARAMS, *_FLOAT_PARAMS) and isinstance(value, IntegerAttr):
            _check_integer(key, value, written)
        if key in _FLOAT_PARAMS and isinstance(value, IntegerAttr):
            if value.type != i64:  # typed, so meant as an integer (`1 : i32`)
                raise GroupAttributeError(
                    f"group attribute '{key}' expects a float (e.g. 0.95), but "
                    f"{value.value.data} : {value.type} is an integer",
                    key,
                )
            params[key] = FloatAttr(float(value.value.data), f64)  # `10`: the number
            continue
        constraint = definitions[key].constr
        if isinstance(constraint, PolicyName):
            constraint = PolicyName.KIND
        if not constraint.verifies(value):
            raise GroupAttributeError(f"group attribute '{key}' expects {_DESCRIBE[key]}", key)
    return params


def _written_integer(key: str, written: str | None) -> tuple[str, int] | None:
    """The integer literal written for `key` in `written` (as written, and its value)."""
    if written is None:
        return None
    match = re.search(rf"\b{re.escape(key)}\s*=\s*(-?\s*(?:0x[0-9a-fA-F]+|[0-9]+))", written)
    if match is None:
        return None
    literal = match.group(1)
    return literal, int(literal.replace(" ", ""), 0)


def _check_integer(key: str, value: IntegerAttr, written: str | None) -> None:
    """A boolean is no number, and an integer literal whose type does not hold it is out
    of range: MLIR reads `true` as an i1 and `9223372036854775808` as the i64 of the same
    bits, -9223372036854775808 (which would be reported as below the minimum)."""
    if value.type == i1:
        said = "true" if value.value.data else "false"
        raise GroupAttributeError(
            f"group attribute '{key}' expects {_DESCRIBE[key]}, not a boolean ({said})", key
        )
    found = _written_integer(key, written)
    if found is None or found[1] == value.value.data:
        return
    literal, number = found
    type_ = value.type
    assert isinstance(type_, IntegerType)
    width = type_.width.data
    unsigned = type_.signedness.data == Signedness.UNSIGNED
    low, high = (0, 2**width - 1) if unsigned else (-(2 ** (width - 1)), 2 ** (width - 1) - 1)
    if not low <= number <= high:
        raise GroupAttributeError(
            f"group attribute '{key}' is {literal}, out of range for {type_} ({low} to {high})",
            key,
        )


def verify_parameters(
    properties: Mapping[str, Attribute],
    attributes: Mapping[str, Attribute],
    variants: Sequence[str],
) -> None:
    """Check a group's parameter values (`properties`; `attributes`: its discardable
    attributes, which must be none; `variants`: its variants' names)."""
    if attributes:
        raise VerifyException(unknown_attribute(next(iter(attributes))))
    for key in _SYMBOL_PARAMS:
        ref = properties.get(key)
        if ref is not None and ref.root_reference.data not in variants:  # type: ignore
            raise VerifyException(f"{key} {ref} is not one of the group's variants")
    policy = properties.get("policy")
    choice = properties.get("choice")
    if choice is not None and policy is not None and policy.data != Policy.STATIC:  # type: ignore[attr-defined]
        raise VerifyException('choice is only meaningful with policy "static"')
    if properties.get("expected") is not None and (
        choice is not None or (policy is not None and policy.data == Policy.STATIC)  # type: ignore[attr-defined]
    ):
        raise VerifyException(
            'expected is not meaningful with policy "static" (its choice is fixed); it names '
            'the variant an "online", "explicit" or "init" group is expected to choose'
        )
    _verify_settings(properties)
    workloads = properties.get("workloads")
    if workloads is not None:
        sizes = set()
        for sample in workloads.data:  # type: ignore[attr-defined]
            if not isinstance(sample, ArrayAttr) or not all(
                isinstance(w, IntegerAttr) and w.value.data >= 0 for w in sample.data
            ):
                # (0: an offset a loop's first step passes, an empty batch)
                raise VerifyException("workloads must be a list of lists of non-negative integers")
            sizes.add(len(sample.data))
        if len(sizes) > 1:
            raise VerifyException("every sample workload must have the same length")


def _number(properties: Mapping[str, Attribute], key: str) -> int | float | None:
    attr = properties.get(key)
    return None if attr is None else attr.value.data  # type: ignore[attr-defined]


def _verify_settings(properties: Mapping[str, Attribute]) -> None:
    """Each of the stop rule's parameters the group sets is in its declared range, and
    the sample counts with the runtime's defaults make a rule it accepts."""
    given = {key: _number(properties, key) for key in GROUP_SETTINGS if key in properties}
    for key, value in given.items():
        declared = GROUP_SETTINGS[key]
        if declared.kind is not bool and not declared.holds(value):  # type: ignore[arg-type]
            raise VerifyException(f"{key} must be {declared.range_text()}")
    lo, hi = given.get("min_samples"), given.get("max_samples")
    if lo is not None and hi is not None and lo > hi:
        raise VerifyException(f"min_samples ({lo}) must not exceed max_samples ({hi})")
    _verify_stop_rule(given)  # type: ignore[arg-type]


def _verify_stop_rule(given: dict[str, int | float]) -> None:
    """The group's parameters with the runtime's defaults for those it leaves out
    (`StopRule`): the rule the runtime will build must be valid, or tuning fails at run
    time (min_samples = 50 alone is above the default max_samples of 30)."""
    try:
        rule = StopRule().with_overrides(given)
    except ValueError:
        rule = None
    if rule is not None:
        return
    defaults = StopRule()
    lo = given.get("min_samples", defaults.min_samples)
    hi = given.get("max_samples", defaults.max_samples)
    said = {
        key: f"{value}" if key in given else f"{value}, the runtime's default"
        for key, value in (("min_samples", lo), ("max_samples", hi))
    }
    raise VerifyException(
        f"min_samples ({said['min_samples']}) must not exceed max_samples "
        f"({said['max_samples']}); give max_samples >= {lo}"
    )
