"""The message cache does not look for its compact bytes in a body written with spaces.

:func:`splice.spaced` guesses from a body's first bytes that it was written with JSON's
optional spaces; the cache then skips scanning the body for bytes it can never hold. The
guess may only cost a hit: a body the codec (or ``JSON.stringify``, as agents send) wrote
compactly is never taken for spaced, whatever its keys hold, and either way the cache's
bytes are the plain path's. Oracle: the standard library's ``json`` writing generated
objects compactly and with its default and pretty-printed separators.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import bridge_rules
from bridge_rules.transform.splice import spaced

KEYS = st.text(alphabet=st.sampled_from('ab"\\: \t\n{}[],é'), min_size=0, max_size=12)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)
OBJECTS = st.dictionaries(KEYS, VALUES, min_size=1, max_size=4)


@settings(max_examples=400)
@given(OBJECTS)
def test_a_compact_body_is_never_taken_for_spaced(obj: dict[str, Any]) -> None:
    for ascii_only in (True, False):
        body = json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only).encode()
        assert not spaced(body), body


@settings(max_examples=400)
@given(OBJECTS)
def test_a_body_with_json_dumps_spaces_is_seen_as_spaced(obj: dict[str, Any]) -> None:
    first = next(iter(obj))
    body = json.dumps(obj).encode()
    if '"' not in first and "\\" not in first and len(first) < 200:
        assert spaced(body), body  # "key": value, the first key unescaped
    assert spaced(json.dumps(obj, indent=2).encode())


def pi_body(turns: int, **dumps: Any) -> bytes:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(turns):
        call = {"type": "tool_use", "id": f"t{n}", "name": "read", "input": {"path": f"{n}"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "x" * 300}
        messages += [
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
        ]
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in ("read", "bash")]
    payload = {"model": "claude-sonnet-4-5", "max_tokens": 9, "tools": tools, "messages": messages}
    return json.dumps(payload, **dumps).encode()


def test_spaced_and_compact_bodies_give_the_plain_paths_bytes() -> None:
    engine = bridge_rules.load()
    for dumps in ({}, {"indent": 1}, {"separators": (",", ":")}):
        reused = []
        for turns in (1, 40, 80, 80):  # 80 twice: the second may be served from the cache
            body = pi_body(turns, **dumps)
            got = engine.outbound_bytes(body)
            assert got.body == engine.outbound_bytes(body, cache=False).body, (dumps, turns)
            reused.append(got.reused)
        compact = "separators" in dumps
        assert (reused[-1] > 0) == compact, (dumps, reused)  # only compact bodies are kept
