"""The rewrites :mod:`bridge_rules.schemas.convert`'s walk makes at one node, each under
the profile operation that asks for it (``close-objects``, ``require-all``,
``upgrade-draft4``, ``nullable-keyword``, ``enum-as-strings``, ``describe-refused``), and
each recorded with :meth:`NodeFixes.note`. The walk itself (recursion, ``$ref``, unions,
the budget) stays in ``convert``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from bridge_rules.schemas.exact import exclusive_integers, min_length_pattern
from bridge_rules.schemas.merge import nullable
from bridge_rules.schemas.shape import ALL_KINDS, Shape, kinds
from bridge_rules.schemas.targets import Profile
from bridge_rules.schemas.words import branch_words, describe, phrase

UNION = ("anyOf", "oneOf", "allOf", "$ref")


_CONSTRAINTS = frozenset(
    {
        "required", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
        "uniqueItems", "minProperties", "maxProperties", "description", "title",
    }
)  # fmt: skip


def constraints(schema: dict[str, Any]) -> bool:
    """Whether ``schema`` has its own type and an ``anyOf`` whose every branch only
    constrains a value of that type (keywords of :data:`_CONSTRAINTS`, no type of its own)."""
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or not branches:
        return False
    if kinds({k: v for k, v in schema.items() if k != "anyOf"}) == ALL_KINDS:
        return False
    return all(isinstance(b, dict) and b and b.keys() <= _CONSTRAINTS for b in branches)


def escape_pointer(name: str) -> str:
    """``name`` as one JSON Pointer step (RFC 6901: ``~`` then ``/`` escaped)."""
    return name.replace("~", "~0").replace("/", "~1")


class NodeFixes:
    """One node's rewrites; the walk that owns ``profile`` and ``note`` mixes them in."""

    profile: Profile

    def note(self, rule: str, pointer: str, detail: str) -> None:
        raise NotImplementedError

    def objects(self, s: dict[str, Any], ptr: str) -> frozenset[str]:
        p = self.profile
        if p.has("close-objects"):
            if "type" not in s and not any(k in s for k in UNION):
                s["type"] = "object"
                self.note("close-objects", ptr, "type: object added")
            s.setdefault("properties", {})
            if s.get("additionalProperties") is not False:
                was = "open" if "additionalProperties" not in s else "restricted"
                s["additionalProperties"] = False
                if was == "open" and s["properties"]:
                    self.note("close-objects", ptr, "keys not declared can no longer be sent")
                else:
                    self.note("close-objects", ptr, "additionalProperties: false")
        if not p.has("require-all"):
            return frozenset()
        names = list(s.get("properties") or {})
        required = [r for r in s.get("required", []) if r in names]
        optional = [n for n in names if n not in required]
        if s.get("required") != names:
            s["required"] = names
        for name in optional:
            s["properties"][name] = nullable(s["properties"][name])
            self.note(
                "require-all", f"{ptr}/properties/{escape_pointer(name)}", "optional: now nullable"
            )
        return frozenset(optional)

    def draft4(self, s: dict[str, Any], ptr: str) -> None:
        for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(s.get(flag), bool):
                if s[flag] and bound in s:
                    s[flag] = s.pop(bound)
                else:
                    del s[flag]
                self.note("upgrade-draft4", ptr, f"boolean {flag} made numeric")

    def nullable(self, s: dict[str, Any], ptr: str) -> dict[str, Any]:
        kind = s.get("type")
        if isinstance(kind, list):
            rest = [k for k in kind if k != "null"]
            if "null" in kind:
                s["nullable"] = True
            if len(rest) == 1:
                s["type"] = rest[0]
            else:
                del s["type"]
                s["anyOf"] = [{"type": k} for k in rest]
            self.note("nullable-keyword", ptr, f"type {kind} written with nullable")
        branches = s.get("anyOf")
        if isinstance(branches, list) and any(b == {"type": "null"} for b in branches):
            rest_b = [b for b in branches if b != {"type": "null"}]
            s["nullable"] = True
            if len(rest_b) == 1 and isinstance(rest_b[0], dict):
                del s["anyOf"]
                s = {**rest_b[0], **s}
            else:
                s["anyOf"] = rest_b
            self.note("nullable-keyword", ptr, "null branch written as nullable: true")
        return s

    def enum_strings(self, s: dict[str, Any], ptr: str, shape: Shape) -> Shape:
        values = s.get("enum")
        if not isinstance(values, list) or not values:
            return shape
        if all(isinstance(v, str) for v in values) and s.get("type", "string") == "string":
            if "type" not in s:
                s["type"] = "string"
                self.note("enum-as-strings", ptr, "type: string added to a string enum")
            return shape
        texts = [v if isinstance(v, str) else json.dumps(v) for v in values]
        if len(set(texts)) != len(texts):
            texts = [json.dumps(v) for v in values]
        s["enum"] = texts
        s["type"] = "string"
        self.note("enum-as-strings", ptr, "enum values sent as strings")
        return Shape(
            wire_kinds=frozenset({"string"}), strings=dict(zip(texts, values, strict=True))
        )

    def refused(self, s: dict[str, Any], ptr: str) -> None:
        if not self.profile.has("describe-refused"):  # nothing is refused: once per node
            return
        min_length_pattern(self.profile, s, ptr, self.note)
        exclusive_integers(self.profile, s, ptr, self.note)
        gone = [k for k in list(s) if k != "description" and self.profile.refused(k, s[k])]
        words = []
        for key in gone:
            said = phrase(key, s.pop(key))
            if said is not None:
                words.append(said)
            self.note("describe-refused", ptr, f"{key} moved into the description")
        describe(s, words)

    def closed(self, original: Any, s: dict[str, Any], shape: Shape) -> Shape:
        """An object closed in the agent's schema whose ``additionalProperties: false`` the
        target refused: keys it does not declare are dropped when calls come back."""
        props = s.get("properties")
        if (
            not isinstance(original, dict)
            or original.get("additionalProperties") is not False
            or s.get("additionalProperties") is False
            or not isinstance(props, dict)
        ):
            return shape
        return dataclasses.replace(shape, closed=frozenset(props), keys=frozenset(props))

    def constraint_union(self, s: dict[str, Any], ptr: str) -> None:
        """A union of constraints on this node's own type is no union of values: a branch
        such as ``{required: [a]}`` has no type because it takes this node's. Walked as
        values, each branch was an untyped value and became a string of JSON text, so an
        object with ``anyOf: [{required: [a]}, {required: [b]}]`` could take no value at all.
        A target that wants a type on every branch (``describe-refused``) gets the union
        in words, as a root union is; another keeps it as written."""
        if not self.profile.has("describe-refused"):
            if self.profile.has("upgrade-draft4"):
                s["anyOf"] = [dict(b) for b in s["anyOf"]]
                for i, branch in enumerate(s["anyOf"]):
                    self.draft4(branch, f"{ptr}/anyOf/{i}")
            return
        branches = s.pop("anyOf")
        describe(s, ["one of: " + " | ".join(branch_words(b) for b in branches)])
        self.note("describe-refused", ptr, "anyOf of constraints moved into the description")
