"""What one request may cost the Claude Code upstream: replayed messages, body bytes and
time, each a ``serve`` option. Past a bound the client gets 413 (or 504 once the answer
is under way) in the API's error shape, and the session is free for the next request:
the server runs with one session, so the request after each refusal shows it.

The oracle is the request itself (its message count and byte length, as the client built
it) and a real ``serve`` process, not the upstream's own counters.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from fake_upstream import Script
from scripted import ScriptedEndpoint, done
from test_serve_options import serve
from tests.claude_code.serving_kit import claude_code_serving

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
TOOLS = [{"name": "Read", "input_schema": {"type": "object"}}]


@pytest.mark.parametrize("name", ["--claude-max-turns", "--claude-max-bytes", "--claude-max-time"])
def test_a_bound_must_be_positive(name: str) -> None:
    done_ = serve("--upstream", "claude-code", name, "0")
    assert done_.returncode == 2
    assert f"{name} must be positive" in done_.stderr
    assert "Traceback" not in done_.stderr


def serving(endpoint: ScriptedEndpoint, *args: str) -> AbstractContextManager[str]:
    """One session, so the request after a refusal shows that the refusal freed it."""
    return claude_code_serving(endpoint, "--max-sessions", "1", *args)


def conversation(turns: int, text: str = "hi") -> dict[str, Any]:
    """``turns`` messages, user and assistant in turn, ending with a user one."""
    roles = ["user" if (turns - n) % 2 else "assistant" for n in range(turns)]
    messages = [{"role": r, "content": text} for r in roles]
    return {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": messages, "tools": TOOLS}


def refused(reply: httpx.Response, status: int, words: str) -> None:
    assert reply.status_code == status, reply.text
    error = reply.json()
    assert error["type"] == "error"
    assert error["error"]["type"] == {413: "request_too_large", 504: "api_error"}[status]
    assert words in error["error"]["message"]


def answered(url: str) -> None:
    reply = httpx.post(f"{url}/v1/messages", json=conversation(1), timeout=60)
    assert reply.status_code == 200, reply.text
    assert reply.json()["content"] == [{"type": "text", "text": "fine"}]


def test_turns_and_bytes_past_their_bound_are_413_and_free_the_session() -> None:
    with (
        ScriptedEndpoint([done("fine")]) as endpoint,
        serving(endpoint, "--claude-max-turns", "5", "--claude-max-bytes", "3000") as url,
    ):
        five = httpx.post(f"{url}/v1/messages", json=conversation(5), timeout=60)
        assert five.status_code == 200, five.text
        for turns in (7, 6):  # the bound counts messages, whichever role ends the excess
            ask = conversation(turns)
            reply = httpx.post(f"{url}/v1/messages", json=ask, timeout=60)
            refused(reply, 413, f"has {len(ask['messages'])} messages")
            answered(url)
        big = conversation(1, "x" * 3000)
        body = json.dumps(big).encode()
        reply = httpx.post(f"{url}/v1/messages", content=body, timeout=60)
        assert len(body) > 3000
        refused(reply, 413, "the Claude Code upstream takes at most 3000")
        answered(url)
        assert len(endpoint.turns) == 4  # the refused requests never reached the model


def test_time_past_its_bound_is_413_while_replaying_and_504_after() -> None:
    slow = Script(tool_calls=[], lead_text="slow " * 40, chunk=1, event_gap=1.0)
    with ScriptedEndpoint([slow]) as endpoint:
        with serving(endpoint, "--claude-max-time", "0.05") as url:
            reply = httpx.post(f"{url}/v1/messages", json=conversation(3), timeout=60)
            refused(reply, 413, "longer than 0.05s to replay")
        assert endpoint.turns == []
        with serving(endpoint, "--claude-max-time", "3") as url:
            ask = {**conversation(1), "stream": True}
            reply = httpx.post(f"{url}/v1/messages", json=conversation(1), timeout=60)
            refused(reply, 504, "did not finish within 3s")
            with httpx.stream("POST", f"{url}/v1/messages", json=ask, timeout=60) as stream:
                events = stream.read().decode()
            endpoint.replies = [done("fine")]
            answered(url)
    assert "event: error" in events
    assert "did not finish within 3s" in events
