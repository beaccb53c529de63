"""The usage a client gets from the Claude Code upstream is the model endpoint's, summed
over the model calls of the request (several with ``--claude-allow``): input, output,
cache writes and reads and ``server_tool_use``, in JSON and in SSE as the anthropic SDK
reads it. The oracle is the endpoint's own log of what it reported, added up here."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from scripted import ScriptedEndpoint, calls, done, serving

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
ASK: Any = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 512,
    "messages": [{"role": "user", "content": "go"}],
    "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
}
FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def usage(n: int) -> dict[str, Any]:
    return {
        "input_tokens": 1000 + n,
        "cache_creation_input_tokens": 9000 + 7 * n,
        "cache_read_input_tokens": 300 + 11 * n,
        "output_tokens": 40 + n,
        "server_tool_use": {"web_search_requests": n},
        "service_tier": "standard",
    }


def expected(log: list[dict[str, Any]]) -> dict[str, int]:
    total = {k: sum(u.get(k, 0) for u in log) for k in FIELDS}
    total["web_search_requests"] = sum(u["server_tool_use"]["web_search_requests"] for u in log)
    return total


def got(reply: anthropic.types.Message) -> dict[str, int]:
    u = reply.usage
    assert u.server_tool_use is not None
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens or 0,
        "cache_read_input_tokens": u.cache_read_input_tokens or 0,
        "web_search_requests": u.server_tool_use.web_search_requests,
    }


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("allow", [(), ("Bash",)], ids=["one call", "three calls"])
def test_the_client_gets_the_endpoints_usage_summed(
    monkeypatch: pytest.MonkeyPatch, stream: bool, allow: tuple[str, ...]
) -> None:
    first = calls(("Bash", {"command": "echo one"}))
    second = calls(("Bash", {"command": "echo two"}))
    last = done("finished")
    for n, script in enumerate((first, second, last), 1):
        script.usage = usage(n)
    endpoint = ScriptedEndpoint([first, second, last])
    with endpoint, serving(endpoint, monkeypatch, claude_allow=allow) as proxy:
        client = anthropic.Anthropic(base_url=proxy, api_key="sk-ant-client", max_retries=0)
        if stream:
            with client.messages.stream(**ASK) as events:
                reply = events.get_final_message()
        else:
            reply = client.messages.create(**ASK)
    assert len(endpoint.usage) == (3 if allow else 1)
    assert got(reply) == expected(endpoint.usage)
