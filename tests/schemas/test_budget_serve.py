"""Issue 34.7: schema conversion has a budget, through a real ``serve``.

Generated schemas whose ``$ref``s fan out (each definition pointing ``fan`` times at the
next, ``depth`` deep: ``fan ** depth`` nodes once inlined) go through one worker, with a
plain request beside them. What reaches the upstream stays within the documented budget
(docs/schemas.md: at most 256 KiB inlined per schema), every request is answered, and the
plain one comes back unchanged. Before the budget, a 2 KB such schema held the worker for
25 s and sent 34 MB upstream.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import anthropic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.schemas.test_strict_round_trip import (
    Model,
    proxy,  # noqa: F401 - a fixture
)

from bridge_rules import jsonio
from bridge_rules.proxy.app import OFF_LOOP_BYTES
from bridge_rules.schemas.budget import MAX_INLINED_BYTES


def fan_out(depth: int, fan: int, pad: int) -> dict[str, Any]:
    defs = {
        f"d{i}": {
            "type": "object",
            "description": "x" * pad,
            "properties": {f"p{j}": {"$ref": f"#/$defs/d{i + 1}"} for j in range(fan)},
        }
        for i in range(depth)
    }
    defs[f"d{depth}"] = {"type": "string"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def body(name: str, schema: Any) -> dict[str, Any]:
    tool = {"name": name, "description": "A tool.", "input_schema": schema}
    return {"model": "claude-x", "max_tokens": 8, "tools": [tool],
            "messages": [{"role": "user", "content": name}]}  # fmt: skip


PLAIN = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


@settings(max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(
    depth=st.integers(12, 40),
    fan=st.integers(2, 8),
    pad=st.integers(0, 200),
    target=st.sampled_from(["openai-strict", "gemini", "bedrock"]),
)
def test_fan_out_is_bounded_and_the_neighbour_is_answered(
    proxy: tuple[str, Model],  # noqa: F811 - the fixture imported above
    depth: int,
    fan: int,
    pad: int,
    target: str,
) -> None:
    base, model = proxy
    client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0, timeout=60)
    headers = {"x-bridge-rules-route": target}
    hostile = [body(f"h{i}", fan_out(depth, fan, pad)) for i in range(3)]
    answers: dict[str, Any] = {}

    def send(name: str, payload: dict[str, Any]) -> None:
        answers[name] = client.messages.create(**payload, extra_headers=headers)

    with model.lock:
        model.calls = []
        model.seen.clear()
    threads = [threading.Thread(target=send, args=(p["tools"][0]["name"], p)) for p in hostile]
    for thread in threads:
        thread.start()
    send("plain", body("plain", PLAIN))  # the neighbour, on the same single worker
    for thread in threads:
        thread.join(60)
    assert sorted(answers) == ["h0", "h1", "h2", "plain"]
    seen = {r["messages"][0]["content"]: r for r in model.seen}
    assert seen["plain"]["tools"][0]["input_schema"]["properties"]["q"]["type"] == "string"
    for name in ("h0", "h1", "h2"):
        sent = len(jsonio.dumps(seen[name]))
        given_size = len(jsonio.dumps(hostile[0]))
        assert sent <= given_size + 2 * MAX_INLINED_BYTES, (name, depth, fan, sent)
        assert "budget for inlined references" in jsonio.dumps(seen[name]).decode() or (
            fan**depth < 2000
        )


def test_a_large_body_is_rewritten_off_the_event_loop(
    proxy: tuple[str, Model],  # noqa: F811 - the fixture imported above
) -> None:
    """Many schemas, each within the budget, still take seconds in one body (issue 34.7):
    that body is rewritten in a worker thread, so the worker's other requests are answered
    meanwhile. The oracle is what the upstream has received when the small answer comes
    back: the small request, and not yet even the large one's headers."""
    base, model = proxy
    tools = [
        {"name": f"t{i}", "description": "A tool.", "input_schema": fan_out(30, 4, i)}
        for i in range(250)
    ]
    big = jsonio.dumps({"model": "claude-x", "max_tokens": 8, "tools": tools,
                        "messages": [{"role": "user", "content": "big"}]})  # fmt: skip
    assert len(big) >= OFF_LOOP_BYTES
    with model.lock:
        model.calls = []
        model.seen.clear()
        model.heads.clear()
    host, port = base.removeprefix("http://").split(":")
    head = (
        f"POST /v1/messages HTTP/1.1\r\nhost: {host}\r\nx-bridge-rules-route: gemini\r\n"
        f"content-type: application/json\r\ncontent-length: {len(big)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=120) as raw:
        raw.sendall(head + big)
        # The proxy reads 3 MB from loopback in milliseconds and then rewrites it for about
        # 3 s; the pause only makes sure it is rewriting when the small request comes.
        time.sleep(0.5)
        client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0, timeout=60)
        client.messages.create(
            **body("plain", PLAIN), extra_headers={"x-bridge-rules-route": "gemini"}
        )
        with model.lock:
            arrived = list(model.heads)  # what reached the upstream by the small answer
        reply = raw.recv(64)
    assert reply.startswith(b"HTTP/1.1 200"), reply
    assert len(arrived) == 1, arrived  # the small request only: the large one is still rewriting
    assert [r["messages"][0]["content"] for r in model.seen] == ["plain", "big"]
