"""Properties: wire arguments from the pinned schema adapt into valid pi arguments; invertible
bindings round-trip local -> wire -> local; arbitrary JSON never raises."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import jsonschema
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.budget import examples

import bridge_rules
from bridge_rules.pins import load_pin

ENG = bridge_rules.load()
WIRE = load_pin("claude-code@2.1.330")
LOCAL = load_pin("pi@0.73.1")
PAIRS = [
    ("read", "Read"),
    ("write", "Write"),
    ("edit", "Edit"),
    ("bash", "Bash"),
    ("grep", "Grep"),
    ("find", "Glob"),
]
REGISTERED = [local for local, _ in PAIRS]
FAST = settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of a pinned tool schema. hypothesis-jsonschema 0.23 breaks on the installed
    hypothesis (``many.more``), and these schemas use a small subset, so it is done here."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(max_size=12)
    if kind == "number":  # decimals a double holds exactly (see test_roundtrip_law.py)
        return st.integers(-(10**6), 10**6) | st.decimals(-(10**6), 10**6, places=6).map(float)
    if kind == "integer":
        return st.integers(-(10**6), 10**6)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {"type": "string"})), max_size=3)
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {k: from_schema(v) for k, v in props.items() if k in required},
        optional={k: from_schema(v) for k, v in props.items() if k not in required},
    )


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    """Only declared fields: extra keys are not what a binding promises to round-trip."""
    return {**schema, "additionalProperties": False}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return (bool(a == b) and type(a) is type(b)) or (a == b and {type(a), type(b)} <= {int, float})


for _local, _wire in PAIRS:

    def _make(local: str, wire: str) -> None:
        @FAST
        @given(from_schema(WIRE.tools[wire]))
        def wire_to_local_is_valid(args: dict[str, Any]) -> None:
            # replace_all: true is kept on purpose so pi's validation rejects it (tested apart).
            assume(args.get("replace_all") is not True)
            call = ENG.inbound_call(wire, args, registered=REGISTERED)
            assert call.name == local
            jsonschema.validate(call.arguments, LOCAL.tools[local])

        @FAST
        @given(from_schema(_closed(LOCAL.tools[local])))
        def local_wire_local(args: dict[str, Any]) -> None:
            adapter = ENG.rules.adapters[local]
            assert adapter.invertible or adapter.history_mode == "declared"
            wire_call = ENG.outbound_call(local, args)
            back = ENG.inbound_call(wire_call.name, wire_call.arguments, registered=REGISTERED)
            assert back.name == local
            if adapter.invertible:
                assert _same(back.arguments, args), (args, wire_call.arguments, back.arguments)

        globals()[f"test_{local}_wire_to_local_validates"] = wire_to_local_is_valid
        globals()[f"test_{local}_round_trip"] = local_wire_local

    _make(_local, _wire)


@FAST
@given(
    st.lists(st.sampled_from(["a.org", "b.com", "c.net"]), max_size=4),
    st.lists(st.sampled_from(["x.com", "y.io"]), max_size=4),
    st.text(min_size=1, max_size=8),
)
def test_web_search_domains_round_trip_up_to_order(
    allowed: list[str], blocked: list[str], query: str
) -> None:
    local = {"query": query, "domainFilter": [*allowed, *("-" + b for b in blocked)]}
    assume(local["domainFilter"])
    wire = ENG.outbound_call("web_search", local)
    back = ENG.inbound_call(wire.name, wire.arguments, registered=["web_search"])
    assert Counter(back.arguments["domainFilter"]) == Counter(local["domainFilter"])


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from(
    [
        "file_path",
        "path",
        "old_string",
        "new_string",
        "edits",
        "timeout",
        "-i",
        "-C",
        "head_limit",
        "query",
        "queries",
        "blocked_domains",
        "allowed_domains",
        "domainFilter",
        "url",
        "urls",
        "oldText",
        "command",
    ]
)
ARGS = st.dictionaries(KEYS | st.text(max_size=5), JSON, max_size=6) | JSON
NAMES = st.sampled_from(["Read", "Edit", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "x"])
LOCALS = st.sampled_from([*REGISTERED, "web_search", "fetch_content", "ls"])
PROFILES = [
    ENG,
    *(bridge_rules.load(p) for p in ("pi-tool-guard", "pi-claude-cli", "claude-agent-sdk-pi")),
]


@settings(max_examples=examples(300), deadline=None)
@given(NAMES, ARGS, LOCALS, st.sampled_from(range(len(PROFILES))))
def test_arbitrary_json_never_raises(wire: str, args: Any, local: str, which: int) -> None:
    eng = PROFILES[which]
    eng.inbound_call(wire, args, registered=[*REGISTERED, "web_search", "fetch_content"])
    eng.outbound_call(local, args)
    eng.inbound_call(local, args)
