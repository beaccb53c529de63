"""The history reaches the CLI in fewer writes and the model endpoint sees no difference.

:meth:`Session._replay` writes each assistant line together with the user line after it,
straight on the transport. The oracle is the way it was written before, through the
SDK's public ``query()``, one line a write, each user line's turn awaited before the next
line (:class:`line_by_line.LineByLine`): the same conversation, generated with hypothesis (plain and
block content, consecutive user turns, tool calls and their results, a history replayed
ahead into a spare as ``--claude-prepare`` does), must reach the fake model endpoint as
the same request, byte for byte, but for what the CLI makes up per process
(test_spares.PER_RUN).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from line_by_line import LineByLine
from scripted import ScriptedEndpoint, done
from test_spares import per_run_out
from tests.budget import examples

from bridge_rules.proxy.claude_code import bundled_claude
from bridge_rules.proxy.claude_code.plan import plan
from bridge_rules.proxy.claude_code.session import Session
from bridge_rules.proxy.claude_code.terms import CliFailed, Policy

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
TOOLS = [{"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ScriptedEndpoint]:
    with ScriptedEndpoint([done("hi")]) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("ANTHROPIC_BASE_URL", server.url)
        env.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        yield server


words = st.text(alphabet="abcdefghij klm\n", min_size=1, max_size=20).filter(str.strip)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Messages ending with a user turn: text or blocks, user turns one after another,
    and tool calls answered by the next user turn's tool_result."""
    messages: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["text", "blocks", "users", "tool"]))
        if kind == "tool":
            call = f"toolu_{n:02d}"
            messages.append({"role": "user", "content": draw(words)})
            use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}}
            messages.append({"role": "assistant", "content": [use]})
            result = {"type": "tool_result", "tool_use_id": call, "content": draw(words)}
            messages.append({"role": "user", "content": [result]})
            messages.append({"role": "assistant", "content": draw(words)})
            continue
        if kind == "users":
            messages.append({"role": "user", "content": draw(words)})
        content: Any = draw(words)
        if kind == "blocks":
            content = [{"type": "text", "text": t} for t in draw(st.lists(words, min_size=1))]
        messages.append({"role": "user", "content": content})
        messages.append({"role": "assistant", "content": draw(words)})
    messages.append({"role": "user", "content": draw(words)})
    return messages


async def _answer(kind: type[Session], body: dict[str, Any], prepared: bool) -> None:
    cli_plan = plan(body)
    session = kind(cli_plan, bundled_claude() or "claude", Policy(), os.environ, 60)
    if prepared:  # a spare with the history replayed ahead, then taken by the request
        assert await session.prepare(cli_plan.lines[:-1]), session.process.stderr_note()
        session.adopt(cli_plan, 60)
    async for _ in session.events():
        pass


def _sent(
    endpoint: ScriptedEndpoint, kind: type[Session], body: dict[str, Any], prepared: bool
) -> bytes:
    before = len(endpoint.requests)
    asyncio.run(_answer(kind, body, prepared))
    sent = endpoint.requests[before:]
    assert len(sent) == 1
    return per_run_out(sent[0].body)


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(messages=conversations(), prepared=st.booleans())
def test_the_batched_replay_sends_what_line_by_line_sent(
    endpoint: ScriptedEndpoint, messages: list[dict[str, Any]], prepared: bool
) -> None:
    body = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": messages, "tools": TOOLS}
    assert _sent(endpoint, Session, body, prepared) == _sent(endpoint, LineByLine, body, prepared)


@settings(
    max_examples=examples(3),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(talks=st.lists(conversations(), min_size=3, max_size=3))
def test_several_sessions_at_once_send_what_line_by_line_sent(
    endpoint: ScriptedEndpoint, talks: list[list[dict[str, Any]]]
) -> None:
    """Three CLIs replaying at once, as the sessions of a busy worker do, each prepared
    ahead or not: the endpoint receives the same set of requests either way."""
    bodies = [
        {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": m, "tools": TOOLS}
        for m in talks
    ]

    def sent(kind: type[Session]) -> list[bytes]:
        async def all_at_once() -> None:
            await asyncio.gather(*(_answer(kind, b, n % 2 == 1) for n, b in enumerate(bodies)))

        before = len(endpoint.requests)
        asyncio.run(all_at_once())
        return sorted(per_run_out(r.body) for r in endpoint.requests[before:])

    now = sent(Session)
    assert len(now) == len(bodies)
    assert now == sent(LineByLine)


def test_a_wrongly_paired_write_would_be_seen(endpoint: ScriptedEndpoint) -> None:
    """The oracle can fail: a user line written together with the assistant line after it
    (rather than before) lets the CLI append that answer ahead of its question."""

    class WithTheAnswerAfter(Session):
        async def _replay(self, lines: list[dict[str, Any]], last: bool = False) -> None:
            messages = self._messages()
            for n, line in enumerate(lines):
                if line["type"] != "user":
                    continue
                pair = lines[n : n + 2]
                await self.process.write("".join(json.dumps(one) + "\n" for one in pair))
                if not (last and n == len(lines) - 1):
                    await self._until_result(messages)

    messages = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
        {"role": "assistant", "content": "four"},
        {"role": "user", "content": "five"},
    ]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": messages, "tools": TOOLS}
    reference = _sent(endpoint, LineByLine, body, False)
    assert _sent(endpoint, Session, body, False) == reference
    before = len(endpoint.requests)
    with contextlib.suppress(CliFailed):  # it may also end before its answer
        asyncio.run(_answer(WithTheAnswerAfter, body, False))
    sent = [per_run_out(r.body) for r in endpoint.requests[before:]]
    assert sent
    assert reference not in sent
