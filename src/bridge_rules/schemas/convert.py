"""Convert one tool's ``input_schema`` for a target, recording every change and its rule.

One walk over the schema applies the profile's operations node by node and builds
the :class:`~bridge_rules.schemas.shape.Shape` that moves call arguments between
the agent's schema and the converted one. The input is never mutated; a schema
that needs nothing comes back as the same object.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from bridge_rules.jsonio import dumps
from bridge_rules.schemas.budget import BUDGET_NOTE, MAX_INLINED_BYTES, MAX_INLINED_NODES, budget
from bridge_rules.schemas.fixes import UNION as _UNION
from bridge_rules.schemas.fixes import NodeFixes, constraints, escape_pointer
from bridge_rules.schemas.merge import (
    flatten_union,
    fold_all_of,
    merge_all_of,
    resolve_ref,
)
from bridge_rules.schemas.shape import ALL_KINDS, IDENTITY, Shape, kinds
from bridge_rules.schemas.targets import Profile
from bridge_rules.schemas.words import describe

JSON_TEXT_NOTE = "a JSON value written as JSON text"
MAX_DEPTH = 128
"""Pointer steps below which a schema is converted; deeper parts are sent as they are, so a
hostile schema cannot exhaust the stack (no real tool schema comes close)."""


@dataclass(frozen=True)
class Change:
    """One thing a conversion did, where, and under which operation (``rule``)."""

    rule: str
    pointer: str
    detail: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.detail} [{self.rule}]"


@dataclass(frozen=True)
class Conversion:
    """A converted schema, what changed and why, and how arguments cross the change."""

    original: Any
    schema: Any
    changes: tuple[Change, ...] = ()
    shape: Shape = IDENTITY

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _untyped(schema: Any) -> bool:
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    return kinds(schema) == ALL_KINDS and not any(
        k in schema for k in ("$ref", "anyOf", "oneOf", "allOf", "not")
    )


def _open_map(schema: dict[str, Any]) -> bool:
    """An object of any keys; not a union of objects, whose members are objects themselves."""
    return (
        kinds(schema) == {"object"}
        and not schema.get("properties")
        and schema.get("additionalProperties") is not False
        and not any(k in schema for k in _UNION)
    )


@dataclass
class _Walk(NodeFixes):
    profile: Profile
    root: Any
    changes: list[Change] = field(default_factory=list)
    nodes_left: int = MAX_INLINED_NODES
    bytes_left: int = MAX_INLINED_BYTES
    sizes: dict[str, int] = field(default_factory=dict)

    def spent(self, ref: str, target: Any) -> bool:
        """Whether inlining ``ref`` (``target``) goes past the conversion's budget; counts it
        when it does not."""
        size = self.sizes.get(ref)
        if size is None:
            try:
                size = self.sizes[ref] = len(dumps(target))
            except (TypeError, ValueError):
                size = self.sizes[ref] = MAX_INLINED_BYTES
        if size > self.bytes_left:
            return True
        self.bytes_left -= size
        return False

    def note(self, rule: str, pointer: str, detail: str) -> None:
        self.changes.append(Change(rule, pointer, detail))

    def json_text(self, schema: Any, ptr: str, why: str, rule: str) -> tuple[Any, Shape]:
        out: dict[str, Any] = {"type": "string"}
        desc = schema.get("description") if isinstance(schema, dict) else None
        if isinstance(desc, str):
            out["description"] = desc
        describe(out, [f"{JSON_TEXT_NOTE}{why}"])
        self.note(rule, ptr, f"sent as JSON text{why}")
        return out, Shape(kinds=kinds(schema), wire_kinds=frozenset({"string"}), json_text=True)

    # --------------------------------------------------------------- node
    def node(self, schema: Any, ptr: str, refs: tuple[str, ...]) -> tuple[Any, Shape]:
        p = self.profile
        ops = p.operations  # ``p.has``, without a call per question: this runs once per node
        depth = ptr.count("/")
        if depth > MAX_DEPTH:
            if depth == MAX_DEPTH + 1:
                self.note("depth", ptr, f"nested deeper than {MAX_DEPTH} steps: left as it is")
            return schema, IDENTITY
        if "untyped-as-json" in ops and ptr and _untyped(schema):
            return self.json_text(schema, ptr, "", "untyped-as-json")
        if not isinstance(schema, dict):
            return schema, IDENTITY
        original = schema
        s = dict(schema)
        if refs:
            self.nodes_left -= 1
            if self.nodes_left < 0:
                return self.json_text(s, ptr, BUDGET_NOTE, "inline-refs")
        if "inline-refs" in ops and isinstance(s.get("$ref"), str):
            ref = s["$ref"]
            if refs.count(ref) >= p.ref_depth:
                return self.json_text(s, ptr, f" (recursion through {ref} cut)", "inline-refs")
            target = resolve_ref(self.root, ref)
            if target is not None and self.spent(ref, target):
                return self.json_text(s, ptr, BUDGET_NOTE, "inline-refs")
            if target is not None:
                s.pop("$ref")
                merged = {**target, **s} if isinstance(target, dict) else target
                self.note("inline-refs", ptr, f"{ref} inlined")
                return self.node(merged, ptr, (*refs, ref))
        for key in ("$defs", "definitions"):
            if "inline-refs" in ops and key in s:
                del s[key]
                self.note("inline-refs", ptr, f"{key} removed (inlined where used)")
        if "upgrade-draft4" in ops:
            self.draft4(s, ptr)
        if "merge-allof" in ops and isinstance(s.get("allOf"), list):
            merged_all = merge_all_of(s, self.root)
            if merged_all is not None:
                s = merged_all
                self.note("merge-allof", ptr, "allOf merged into one schema")
            elif "describe-refused" in ops and (folded := fold_all_of(s, self.root)):
                s = folded
                self.note("merge-allof", ptr, "allOf of constraints folded into one schema")
        if "oneof-to-anyof" in ops and "oneOf" in s:
            s["anyOf"] = s.pop("oneOf")
            self.note("oneof-to-anyof", ptr, "oneOf written as anyOf")
        if "const-to-enum" in ops and "const" in s:
            s["enum"] = [s.pop("const")]
            self.note("const-to-enum", ptr, "const written as a one-value enum")
        if "nullable-keyword" in ops:
            s = self.nullable(s, ptr)
        if "open-maps-as-json" in ops and ptr and _open_map(s):
            return self.json_text(s, ptr, " (an object of any keys)", "open-maps-as-json")
        shape = self.inner(s, ptr, refs)
        if "enum-as-strings" in ops:
            shape = self.enum_strings(s, ptr, shape)
        self.refused(s, ptr)
        shape = self.closed(original, s, shape)
        shape = shape if shape.identity else _with_kinds(shape, kinds(original), kinds(s))
        return (original if s == original else s), shape

    def inner(self, s: dict[str, Any], ptr: str, refs: tuple[str, ...]) -> Shape:
        """Children: properties, items, anyOf branches; the object rules of the profile."""
        props_shape: dict[str, Shape] = {}
        nulled: frozenset[str] = frozenset()
        items: Shape | None = None
        branches: tuple[Shape, ...] = ()
        p = self.profile
        given: list[Any] = s["required"] if isinstance(s.get("required"), list) else []
        if isinstance(s.get("properties"), dict):
            props = {}
            for name, sub in s["properties"].items():
                props[name], sub_shape = self.node(
                    sub, f"{ptr}/properties/{escape_pointer(name)}", refs
                )
                if not sub_shape.identity:
                    props_shape[name] = sub_shape
            s["properties"] = props
        if "properties" in s or (kinds(s) == {"object"} and not any(k in s for k in _UNION)):
            nulled = self.objects(s, ptr)
        if "items" in s and not isinstance(s["items"], list):
            s["items"], got = self.node(s["items"], f"{ptr}/items", refs)
            items = None if got.identity else got
        elif p.has("untyped-as-json") and "items" not in s and _says_array(s):
            s["items"], items = self.json_text({}, f"{ptr}/items", "", "untyped-as-json")
        if constraints(s):
            self.constraint_union(s, ptr)
        elif isinstance(s.get("anyOf"), list):
            out, shapes = [], []
            for i, branch in enumerate(s["anyOf"]):
                new, got = self.node(branch, f"{ptr}/anyOf/{i}", refs)
                out.append(new)
                shape = _with_kinds(got, kinds(branch), kinds(new), _keys(branch))
                shapes.append(_with_item_kinds(shape, new))
            s["anyOf"] = out
            if any(not b.identity for b in shapes):
                branches = tuple(shapes)
        if not (props_shape or nulled or items or branches):
            return IDENTITY
        optional = frozenset(n for n, sh in props_shape.items() if sh.json_text and n not in given)
        return Shape(
            keys=_keys(s),
            props=props_shape,
            nulled=nulled,
            optional=optional,
            items=items,
            branches=branches,
        )


def _says_array(schema: dict[str, Any]) -> bool:
    """Whether the node's own ``type`` names an array, so its untyped items are its own to
    type. A node that is an array only through its ``anyOf`` branches or its ``enum`` or
    ``const`` values is not: the branches type their own items (each walked by itself) and
    the values are whole arrays, so items of JSON text beside them were a second constraint
    that every array they allow failed but an array of strings, whose items then came back
    parsed (``["1"]`` restored as ``[1]``)."""
    kind = schema.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _with_item_kinds(shape: Shape, new: Any) -> Shape:
    """A union branch's items' kinds on each side, so that a list goes to the branch whose
    items it holds, as a dict goes by its keys: by kinds alone, every list went to the
    first array branch, and ``[[null]]`` left for the wire unconverted past a branch of
    arrays of integers when the arrays-of-arrays branch sent its inner items as JSON text."""
    items = new.get("items") if isinstance(new, dict) else None
    if not isinstance(items, dict):
        return shape
    wire = kinds(items)
    own = shape.items.kinds if shape.items is not None else wire
    return dataclasses.replace(shape, item_kinds=own, wire_item_kinds=wire)


def _keys(schema: Any) -> frozenset[str] | None:
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        return frozenset(schema["properties"])
    return None


def _with_kinds(
    shape: Shape, before: frozenset[str], after: frozenset[str], keys: frozenset[str] | None = None
) -> Shape:
    return dataclasses.replace(
        shape, kinds=before, wire_kinds=after, keys=keys if keys is not None else shape.keys
    )


def convert(schema: Any, profile: Profile) -> Conversion:
    """``schema`` converted for ``profile``; the same object back when nothing changes.

    A schema that is not JSON Schema (``required: true``, ``properties: []``) is sent as it
    is, with a change saying so: the target refuses it either way, and the API's message
    names the tool, where a conversion would have to guess."""
    try:
        return _convert(schema, profile)
    except (TypeError, ValueError, AttributeError, LookupError, RecursionError) as exc:
        note = Change(
            "unreadable",
            "",
            f"not a JSON Schema the conversion can read ({type(exc).__name__}): sent as it is",
        )
        return Conversion(schema, schema, (note,))


def _convert(schema: Any, profile: Profile) -> Conversion:
    walk = _Walk(profile, schema)
    if profile.has("inline-refs"):
        try:
            size = len(dumps(schema))
        except (TypeError, ValueError):  # not JSON (a Python caller's object): the least
            size = 0
        walk.nodes_left, walk.bytes_left = budget(size)
    work: Any = schema
    wrap: str | None = None
    variants = None
    if isinstance(work, dict) and (profile.has("flatten-root-union") or profile.has("root-object")):
        work, wrap, variants = flatten_union(work, profile, walk.note)
    new, shape = walk.node(work, "", ())
    if wrap is not None or variants is not None:
        shape = dataclasses.replace(shape, wrap=wrap, variants=variants)
    if not walk.changes:
        return Conversion(schema, schema)
    return Conversion(schema, new, tuple(walk.changes), IDENTITY if shape.identity else shape)
