"""Where a client's ``cache_control`` reaches the model endpoint through the Claude Code
CLI (docs/claude-code-upstream.md, "Prompt caching"): read from the fake endpoint's log of
the request the CLI made, with the client's markers and without them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from scripted import ScriptedEndpoint, done, serving

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
MARK = {"type": "ephemeral"}
SYSTEM, EARLIER, LAST = "You are terse, always. " * 40, "first question " * 40, "second question"


def ask(marked: bool) -> dict[str, Any]:
    mark = {"cache_control": MARK} if marked else {}
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "system": [{"type": "text", "text": SYSTEM, **mark}],
        "tools": [
            {"name": "Bash", "description": "run", "input_schema": {"type": "object"}, **mark}
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": EARLIER, **mark}]},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": LAST, **mark}]},
        ],
    }


def marks(turn: dict[str, Any]) -> dict[str, Any]:
    """The marker on the block holding each text of the client's, and on its tools."""
    blocks = [*turn["system"], *(b for m in turn["messages"] for b in m["content"])]

    def on(text: str) -> Any:
        return next(
            b.get("cache_control") for b in blocks if b.get("text", "").strip() == text.strip()
        )

    tools = {t.get("name"): t.get("cache_control") for t in turn["tools"]}
    return {"system": on(SYSTEM), "earlier": on(EARLIER), "last": on(LAST), "tools": tools}


@pytest.mark.parametrize("marked", [True, False], ids=["client marks", "no marks"])
def test_where_the_clients_markers_reach_the_endpoint(
    monkeypatch: pytest.MonkeyPatch, marked: bool
) -> None:
    endpoint = ScriptedEndpoint([done("x")])
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        reply = httpx.post(f"{proxy}/v1/messages", json=ask(marked), timeout=60)
    assert reply.status_code == 200
    seen = marks(endpoint.turns[0])
    # The CLI marks its system prompt (the client's system text included) and the last
    # message itself, marker or not; it passes an earlier message's marker on; and no
    # tool carries one (they reach the model as the CLI's MCP tools).
    assert seen["system"] == MARK
    assert seen["last"] == MARK
    assert seen["earlier"] == (MARK if marked else None)
    assert set(seen["tools"].values()) == {None}
