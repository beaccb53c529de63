"""The targets a tool schema can be converted for, as sets of named operations.

Each target is the list of operations that make any schema acceptable by that
provider's documented rules (docs/schemas.md has the rules and their sources);
the rules can list more operations after a target, or only operations
(``target: none``). Operation names are what every recorded change cites.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import get_args

from bridge_rules.model import SchemaOperation, SchemaTarget

OPERATIONS: tuple[str, ...] = get_args(SchemaOperation)
"""Every operation, named as rule files write them (``schemas.operations``)."""

Target = str
TARGETS: tuple[Target, ...] = tuple(t for t in get_args(SchemaTarget) if t != "none")
DEFAULT_TARGET: Target = "anthropic"

_COMMON = ("upgrade-draft4", "flatten-root-union", "root-object")

_OPS: dict[Target, tuple[str, ...]] = {
    "anthropic": _COMMON,
    "openai-strict": (
        "inline-refs",
        *_COMMON,
        "merge-allof",
        "oneof-to-anyof",
        "untyped-as-json",
        "open-maps-as-json",
        "close-objects",
        "require-all",
        "describe-refused",
    ),
    "gemini": (
        "inline-refs",
        *_COMMON,
        "merge-allof",
        "oneof-to-anyof",
        "const-to-enum",
        "enum-as-strings",
        "nullable-keyword",
        "untyped-as-json",
        "open-maps-as-json",
        "describe-refused",
    ),
    "bedrock": ("inline-refs", *_COMMON, "merge-allof", "oneof-to-anyof", "untyped-as-json"),
}

_OPENAI_REFUSED = frozenset(
    {
        "minLength",
        "maxLength",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "default",
        "examples",
        "title",
        "$schema",
        "$id",
        "$comment",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
    }
)
OPENAI_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "anyOf",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
    }
)


@dataclass(frozen=True)
class Profile:
    """A target's operations plus the extra ones the rules list, and its keyword rules."""

    target: Target | None
    operations: tuple[str, ...]
    ref_depth: int = 3

    def has(self, op: str) -> bool:
        return op in self.operations

    def refused(self, key: str, value: object) -> bool:
        """Whether ``describe-refused`` moves ``key`` (with ``value``) into the description."""
        if not self.has("describe-refused"):
            return False
        if self.target == "gemini":
            return key not in GEMINI_KEYWORDS
        if key == "format":
            return value not in OPENAI_FORMATS
        if key == "pattern":
            return isinstance(value, str) and _LOOKAROUND.search(value) is not None
        return key in _OPENAI_REFUSED


_LOOKAROUND = re.compile(r"\(\?<?[=!]")


def profile(target: Target | None, extra: tuple[str, ...] = ()) -> Profile:
    """The profile of ``target`` (None: only ``extra``), with ``extra`` after its own."""
    own = _OPS[target] if target is not None else ()
    return Profile(target, tuple(dict.fromkeys([*own, *extra])))


# ------------------------------------------------------------ tool names
_NAME_RULES: dict[Target, tuple[re.Pattern[str], str]] = {
    "anthropic": (re.compile(r"[a-zA-Z0-9_-]{1,64}"), "a-z A-Z 0-9 _ -, 1 to 64 characters"),
    "openai-strict": (re.compile(r"[a-zA-Z0-9_-]{1,64}"), "a-z A-Z 0-9 _ -, 1 to 64 characters"),
    "bedrock": (re.compile(r"[a-zA-Z0-9_-]{1,64}"), "a-z A-Z 0-9 _ -, 1 to 64 characters"),
    "gemini": (
        re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}"),
        "a letter or _ first, then a-z A-Z 0-9 _ . : -, at most 64 characters",
    ),
}


_LETTER_FIRST: frozenset[str] = frozenset({"gemini"})


def name_letter_first(target: str | None) -> bool:
    """Whether ``target``'s names must start with a letter or ``_`` (Gemini's do): what
    ``wire_names.on_invalid: shorten`` must also meet there."""
    return target in _LETTER_FIRST


def name_problem(target: Target, name: str) -> str | None:
    """Why ``target`` refuses the tool name ``name`` (a phrase after "name X"), or None."""
    pattern, rule = _NAME_RULES[target]
    if pattern.fullmatch(name):
        return None
    return f"is not accepted by {target} ({rule})"
