"""The official ``anthropic`` Python SDK through the proxy, with the real default rules.

The fake upstream talks Claude Code dialect (``Read_ide {"file_path": ...}``);
the SDK, holding pi-shaped tools, must see pi's names and arguments, and the
history it sends back must reach the upstream in wire form.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from fake_upstream import FakeUpstream
from servers import running_app

import bridge_rules
from bridge_rules.proxy import ProxyConfig, create_app

READ = {
    "name": "read",
    "description": "Read a file",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "offset": {"type": "number"}},
        "required": ["path"],
    },
}
pytestmark = [
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
    # One worker imports the SDK (~1.5 s) and runs these; the others never pay for it.
    pytest.mark.xdist_group("sdk"),
]
if TYPE_CHECKING:
    import anthropic


def sdk(url: str) -> anthropic.Anthropic:
    """The SDK's client for ``url``. The SDK is imported here, not at module level: its
    ~1.5 s import would otherwise be paid by every test worker at collection."""
    import anthropic

    return anthropic.Anthropic(base_url=url, api_key="sk-ant-dummy", max_retries=0)


ASK: Any = [{"role": "user", "content": "Read hello.txt"}]


@pytest.fixture
def client(upstream: FakeUpstream) -> Iterator[anthropic.Anthropic]:
    upstream.script.tool_calls = [{"name": "Read_ide", "input": {"file_path": "hello.txt"}}]
    app = create_app(ProxyConfig(upstream=upstream.url), bridge_rules.load().runtime)
    with running_app(app) as url:
        yield sdk(url)


def check_turn(upstream: FakeUpstream, message: anthropic.types.Message) -> None:
    (block,) = message.content
    assert block.type == "tool_use"
    assert (block.name, block.input) == ("read", {"path": "hello.txt"})
    sent = upstream.requests[-1].json
    assert [t["name"] for t in sent["tools"]] == ["Read"]
    got = upstream.requests[-1]
    credentials = got.header("x-api-key") + got.header("authorization")
    assert any("sk-ant-dummy" in c for c in credentials)  # whichever header the SDK uses
    assert got.header("anthropic-version")


def test_sdk_non_streaming(client: anthropic.Anthropic, upstream: FakeUpstream) -> None:
    message = client.messages.create(
        model="claude-sonnet-4-5", max_tokens=100, tools=[READ], messages=ASK
    )
    check_turn(upstream, message)


def test_sdk_streaming_and_history_in_wire_form(
    client: anthropic.Anthropic, upstream: FakeUpstream
) -> None:
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=100, tools=[READ], messages=ASK
    ) as stream:
        message = stream.get_final_message()
    check_turn(upstream, message)
    (call,) = message.content
    history: Any = [
        *ASK,
        {"role": "assistant", "content": [call.model_dump(exclude_none=True)]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Hello!"}],
        },
    ]
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=100, tools=[READ], messages=history
    ) as stream:
        final = stream.get_final_message()
    assert final.content[0].type == "text"
    assert "content='Hello!'" in final.content[0].text
    replayed = upstream.requests[-1].json["messages"][1]["content"][0]
    assert (replayed["name"], replayed["input"]) == ("Read", {"file_path": "hello.txt"})


def test_sdk_count_tokens(client: anthropic.Anthropic, upstream: FakeUpstream) -> None:
    count = client.messages.count_tokens(model="claude-sonnet-4-5", tools=[READ], messages=ASK)
    assert count.input_tokens == 42
    assert [t["name"] for t in upstream.requests[-1].json["tools"]] == ["Read"]


def test_sdk_sees_proxy_faults_as_api_errors(upstream: FakeUpstream) -> None:
    dead = FakeUpstream()
    dead.server_close()  # a port nobody listens on
    app = create_app(ProxyConfig(upstream=dead.url), bridge_rules.load().runtime)
    with running_app(app) as url:
        import anthropic

        client = sdk(url)
        with pytest.raises(anthropic.APIStatusError) as info:
            client.messages.create(model="claude-sonnet-4-5", max_tokens=100, messages=ASK)
    assert info.value.status_code == 502
    assert info.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": info.value.body["error"]["message"]},  # type: ignore[index]
    }
    assert "cannot reach the upstream" in str(info.value)
