"""How one tool call's arguments move between the agent's schema and a converted one.

A conversion that changes what the model may send (an optional field made
nullable-required, a map sent as JSON text, a number enum sent as strings, a root
union flattened into one object) records a :class:`Shape` beside the converted
schema: a tree that mirrors the schema where something differs, and is the
identity everywhere else. ``forward`` takes a value valid against the agent's
schema to one valid against the converted schema (history replay); ``restore``
takes what the model sent back to the agent's own shape. Both are pure and never
raise on an unexpected value: what they do not recognise passes unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_KIND_DEPTH = 16
ALL_KINDS = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def kind_of(value: Any) -> str:
    """The JSON type of a value, as a schema's ``type`` names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def kinds(schema: Any, depth: int = 0) -> frozenset[str]:
    """The JSON types a schema node can take (all of them when it does not say)."""
    if not isinstance(schema, dict):
        return ALL_KINDS if schema is not False else frozenset()
    kind = schema.get("type")
    if isinstance(kind, str):
        out = {kind}
    elif isinstance(kind, list):
        out = {k for k in kind if isinstance(k, str)}
    elif "enum" in schema and isinstance(schema["enum"], list):
        out = {kind_of(v) for v in schema["enum"]}
    elif "const" in schema:
        out = {kind_of(schema["const"])}
    elif isinstance(schema.get("anyOf"), list):
        if depth > _KIND_DEPTH:
            return ALL_KINDS
        branches = schema["anyOf"]
        out = set().union(*(kinds(b, depth + 1) for b in branches)) if branches else set()
    elif "properties" in schema:
        out = {"object"}
    elif "items" in schema:
        out = {"array"}
    else:
        return ALL_KINDS
    if schema.get("nullable") is True:
        out.add("null")
    if "number" in out:
        out.add("integer")
    return frozenset(out)


def accepts(kinds: frozenset[str], value: Any) -> bool:
    kind = kind_of(value)
    return kind in kinds or (kind == "integer" and "number" in kinds)


@dataclass(frozen=True, eq=False)
class Shape:
    """One schema node's difference between the agent's shape and the wire's.

    ``kinds``/``wire_kinds`` say which JSON values the node takes on each side, so a
    union picks the branch a value belongs to; ``keys`` are an object's declared
    properties, for the same purpose.
    """

    kinds: frozenset[str] = ALL_KINDS
    wire_kinds: frozenset[str] = ALL_KINDS
    keys: frozenset[str] | None = None
    item_kinds: frozenset[str] = ALL_KINDS
    wire_item_kinds: frozenset[str] = ALL_KINDS
    """An array branch's items' kinds on each side: a union picks a list's branch by them."""
    json_text: bool = False
    """The value travels as JSON text (a string the model writes)."""
    wrap: str | None = None
    """A root that is not an object travels as the one property of that name."""
    props: Mapping[str, Shape] = field(default_factory=dict)
    nulled: frozenset[str] = frozenset()
    """Optional properties made required and nullable: a ``null`` there means absent."""
    closed: frozenset[str] | None = None
    """An object the agent's schema closes (``additionalProperties: false``) that the target
    cannot close (Gemini): keys it does not declare are dropped on the way back."""
    optional: frozenset[str] = frozenset()
    """Optional properties sent as JSON text: text that is not a value of their type is
    dropped (absent is what the agent's schema allows there)."""
    items: Shape | None = None
    strings: Mapping[str, Any] | None = None
    """A non-string enum or const sent as strings: wire string -> the agent's value."""
    branches: tuple[Shape, ...] = ()
    variants: tuple[str, Mapping[str, frozenset[str]]] | None = None
    """A flattened root union: the discriminator, and each of its values' own keys."""

    @property
    def identity(self) -> bool:
        return (
            not self.json_text
            and self.wrap is None
            and not self.props
            and not self.nulled
            and not self.optional
            and self.closed is None
            and self.items is None
            and self.strings is None
            and not self.branches
            and self.variants is None
        )

    # ------------------------------------------------------------ forward
    def forward(self, value: Any) -> Any:
        """A value in the agent's shape -> the converted schema's shape."""
        return self._forward_node(value if self.wrap is None else {self.wrap: value})

    def _forward_node(self, value: Any) -> Any:
        if self.json_text:
            try:
                return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            except (RecursionError, TypeError, ValueError):
                return value
        if self.strings is not None:
            for text, original in self.strings.items():
                if _same(original, value):
                    return text
            return value
        if self.branches:
            branch = _pick(self.branches, value, wire=False)
            return value if branch is None else branch._forward_node(value)
        if isinstance(value, dict) and (self.props or self.nulled):
            out = {
                k: self.props[k]._forward_node(v) if k in self.props else v
                for k, v in value.items()
            }
            for name in self.nulled:
                out.setdefault(name, None)
            return out
        if isinstance(value, list) and self.items is not None:
            return [self.items._forward_node(v) for v in value]
        return value

    # ------------------------------------------------------------ restore
    def restore(self, value: Any) -> Any:
        """What the model sent -> the agent's own shape."""
        out = _readable(self._restore_node(value), value)
        if self.wrap is not None:
            out = out[self.wrap] if isinstance(out, dict) and self.wrap in out else value
        # a call that needed nothing comes back as the very object, so its bytes go as sent
        return value if out is not value and _identical(out, value) else out

    def _restore_node(self, value: Any) -> Any:
        if self.json_text:
            return self._parse(value)
        if self.strings is not None:
            if isinstance(value, str) and value in self.strings:
                return self.strings[value]
            return value
        if self.branches:
            branch = _pick(self.branches, value, wire=True)
            return value if branch is None else _readable(branch._restore_node(value), value)
        if isinstance(value, dict):
            out = value
            if self.props or self.nulled or self.closed is not None:
                out = {}
                for k, v in value.items():
                    if self.closed is not None and k not in self.closed:
                        continue
                    if v is None and k in self.nulled:
                        continue
                    got = self.props[k]._restore_node(v) if k in self.props else v
                    if k in self.optional and got is _UNREADABLE:
                        continue
                    out[k] = v if got is _UNREADABLE else got
            if self.variants is not None:
                out = _one_variant(out, *self.variants)
            return out
        if isinstance(value, list) and self.items is not None:
            return [_readable(self.items._restore_node(v), v) for v in value]
        return value

    def _parse(self, value: Any) -> Any:
        """JSON text back to the value it writes, when that is of the agent's type; text that
        is not (the model wrote prose, or a list for a map) stays text where the agent's
        schema takes a string, and is otherwise :data:`_UNREADABLE`."""
        if not isinstance(value, str):
            return value
        try:
            parsed = json.loads(value)
        except (RecursionError, ValueError):
            parsed = _UNREADABLE
        if parsed is not _UNREADABLE and accepts(self.kinds, parsed):
            return parsed
        return value if "string" in self.kinds else _UNREADABLE


class _Unreadable:
    """JSON text that gives no value of the agent's type (dropped where the field is
    optional; the text itself where it is not)."""


_UNREADABLE: Any = _Unreadable()


def _identical(a: Any, b: Any) -> bool:
    """Equal, with JSON types distinguished (``1`` is not ``1.0`` nor ``True``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _readable(got: Any, sent: Any) -> Any:
    return sent if got is _UNREADABLE else got


IDENTITY = Shape()


def _same(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a == b) or (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


def _pick(branches: tuple[Shape, ...], value: Any, *, wire: bool) -> Shape | None:
    """The branch a value belongs to: its JSON type fits, for objects its keys too, and for
    lists their items' types."""
    fitting = [b for b in branches if accepts(b.wire_kinds if wire else b.kinds, value)]
    if isinstance(value, dict) and len(fitting) > 1:
        keyed = [b for b in fitting if b.keys is not None and value.keys() <= b.keys]
        if not keyed:  # keys no branch declares (a model's extra): the one it shares most with
            known = [b for b in fitting if b.keys is not None]
            keyed = sorted(known, key=lambda b: -len(value.keys() & (b.keys or frozenset())))
        fitting = keyed or fitting
    if isinstance(value, list) and len(fitting) > 1:
        typed = [
            b
            for b in fitting
            if all(accepts(b.wire_item_kinds if wire else b.item_kinds, v) for v in value)
        ]
        fitting = typed or fitting
    return fitting[0] if fitting else None


def _one_variant(value: dict[str, Any], key: str, keys: Mapping[str, frozenset[str]]) -> Any:
    """Keep only the keys the chosen variant of a flattened union declares."""
    tag = value.get(key)
    if not isinstance(tag, (str, int, float, bool)):
        return value
    own = keys.get(json.dumps(tag, sort_keys=True))
    if own is None:
        return value
    return {k: v for k, v in value.items() if k in own or k == key}
