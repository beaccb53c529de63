"""Properties over arbitrary input: never raise, closed gate is identity, round trips, chunking."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.transform.conftest import ROOT

import bridge_rules

ENG = bridge_rules.load()
CLOSED = {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
names = st.sampled_from(
    ["read", "bash", "ls", "Read", "edit", "mcp__x__y", "web_search", ""]
) | st.text(max_size=6)
blocks = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["tool_use", "tool_result", "text", "image"]),
        "name": names | json_values,
    },
    optional={"input": json_values, "text": st.text(max_size=8), "id": st.text(max_size=4)},
)
payloads = st.fixed_dictionaries(
    {"model": st.sampled_from(["claude-sonnet-4-5", "gpt-5"]) | json_values},
    optional={
        "tools": st.lists(
            st.fixed_dictionaries(
                {"name": names}, optional={"type": json_values, "input_schema": json_values}
            )
            | json_values,
            max_size=4,
        )
        | json_values,
        "tool_choice": st.fixed_dictionaries(
            {"type": st.sampled_from(["auto", "any", "tool", "none"])}, optional={"name": names}
        )
        | json_values,
        "messages": st.lists(
            st.fixed_dictionaries(
                {
                    "role": st.sampled_from(["user", "assistant"]),
                    "content": st.lists(blocks | json_values, max_size=4) | json_values,
                }
            )
            | json_values,
            max_size=4,
        ),
        "system": st.text(max_size=8)
        | st.lists(
            st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)})
            | json_values,
            max_size=3,
        ),
        "thinking": json_values,
    },
)


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(payloads, json_values))
def test_arbitrary_payloads_never_raise_nor_mutate(payload: Any) -> None:
    before = copy.deepcopy(payload)
    result = ENG.outbound(payload, env={})
    assert payload == before
    orjson.dumps(result.payload)
    message = {
        "role": "assistant",
        "content": payload.get("messages") if isinstance(payload, dict) else payload,
    }
    ENG.inbound(message, ["read", "ls"])
    ENG.inbound(payload, None)
    assert payload == before


@settings(max_examples=examples(150))
@given(payloads)
def test_a_closed_gate_is_the_identity(payload: dict[str, Any]) -> None:
    result = ENG.outbound(payload, env=CLOSED)
    assert not result.gate_open
    assert result.payload == payload
    assert result.renames == {}


# Real pi arguments from the captures, and arbitrary custom tools with arbitrary arguments.
PI_CALLS = [
    ("read", {"path": "hello.txt"}),
    ("read", {"path": "hello.txt", "offset": 1, "limit": 1}),
    ("bash", {"command": "wc -l hello.txt"}),
    ("ls", {"path": "."}),
    ("grep", {"pattern": "Hello", "path": "."}),
    ("find", {"pattern": "*.txt"}),
    ("write", {"path": "out.txt", "content": "hi"}),
]
custom = st.tuples(
    st.from_regex(r"x_[a-z]{1,8}", fullmatch=True),
    st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), json_values, max_size=3),
)


@settings(max_examples=examples(150))
@given(
    st.lists(st.sampled_from(PI_CALLS) | custom, min_size=1, max_size=6, unique_by=lambda c: c[0])
)
def test_outbound_then_inbound_gives_the_local_calls_back(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    tools = [{"name": n, "input_schema": {"type": "object"}} for n, _ in calls]
    history = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
        for i, (n, a) in enumerate(calls)
    ]
    payload = {
        "model": "claude-sonnet-4-5",
        "tools": tools,
        "messages": [{"role": "assistant", "content": history}],
    }
    result = ENG.outbound(payload, env={})
    wire_calls = result.payload["messages"][0]["content"]  # what the model itself would send
    back = ENG.inbound({"role": "assistant", "content": wire_calls}, result.registered)
    assert [(b["name"], b["input"]) for b in back["content"]] == calls


EXAMPLE = (ROOT / "examples" / "stream.sse").read_bytes()
WHOLE = b"".join(ENG.inbound_stream([EXAMPLE], ["read", "ls"]))


@settings(max_examples=examples(200))
@given(st.lists(st.integers(1, len(EXAMPLE) - 1), max_size=12, unique=True))
def test_any_chunking_gives_the_whole_stream_output(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(EXAMPLE)]
    chunks = [EXAMPLE[a:b] for a, b in itertools.pairwise(points)]
    assert b"".join(ENG.inbound_stream(chunks, ["read", "ls"])) == WHOLE
