"""A Messages endpoint that answers turn by turn from a script, for the real Claude Code CLI.

The n-th model request that offers tools gets the n-th reply (the last one repeats),
whatever else the request holds (a request without tools, such as opencode's title, gets a
short text), so a test can walk an agent through read, edit and bash and then check what the
endpoint received on each turn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
from fake_upstream import FakeUpstream, Recorded, Script, _Handler, message, sse_events
from servers import running_app

from bridge_rules.proxy import ProxyConfig, create_app

TEST_CLAUDE = "BRIDGE_RULES_TEST_CLAUDE"


def calls(*pairs: tuple[str, dict[str, Any]]) -> Script:
    return Script(tool_calls=[{"name": n, "input": i} for n, i in pairs], lead_text="On it.")


def done(text: str = "All done.") -> Script:
    return Script(tool_calls=[], lead_text=text)


class _Scripted(_Handler):
    server: ScriptedEndpoint

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if url.path != "/v1/messages":
            super()._handle()
            return
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        payload = json.loads(body)
        with self.server.lock:
            self.server.requests.append(
                Recorded("POST", url.path, url.query, list(self.headers.items()), body)
            )
            if payload.get("tools"):
                turn = len(self.server.turns) - 1
                self.server.turns.append(payload)
        if not payload.get("tools"):  # a side request, such as opencode's title
            script, turn = done("A title"), -1
        else:
            script = self.server.replies[min(turn + 1, len(self.server.replies) - 1)]
        self.server.script = script  # its pacing (event_gap) applies to this reply
        blank = {"model": payload.get("model"), "messages": []}
        if script.status is not None:  # a scripted failure of the model endpoint
            self._send(script.status, "application/json", script.error_body)
            return
        with self.server.lock:
            self.server.usage.append(message(blank, script)["usage"])
        unique = f"toolu_turn{turn + 1}_".encode()  # ids never repeat across turns
        if payload.get("stream"):
            self._stream([e.replace(b"toolu_fake", unique) for e in sse_events(blank, script)])
        else:
            data = json.dumps(message(blank, script)).encode()
            self._send(200, "application/json", data.replace(b"toolu_fake", unique))


class ScriptedEndpoint(FakeUpstream):
    def __init__(self, replies: list[Script]) -> None:
        super().__init__()
        self.RequestHandlerClass = _Scripted
        self.replies = replies
        self.turns: list[dict[str, Any]] = []
        self.usage: list[dict[str, Any]] = []
        """The usage this endpoint reported, one entry per model request it answered."""


@contextmanager
def serving(
    endpoint: FakeUpstream, monkeypatch: pytest.MonkeyPatch, **settings: Any
) -> Iterator[str]:
    """``serve --upstream claude-code`` on loopback, its CLI pointed at ``endpoint``; the CLI
    is the one in the claude-agent-sdk wheel unless ``BRIDGE_RULES_TEST_CLAUDE`` names
    another (the npm package's, say)."""
    if os.environ.get(TEST_CLAUDE) and "claude_path" not in settings:
        settings = {**settings, "claude_path": os.environ[TEST_CLAUDE]}
    monkeypatch.setenv("ANTHROPIC_BASE_URL", endpoint.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with running_app(create_app(ProxyConfig(upstream="claude-code", **settings))) as url:
        yield url
