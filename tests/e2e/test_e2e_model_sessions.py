"""Real pi, opencode and Claude Code sessions through ``bridge-rules serve --rules models``
against an upstream that refuses what each 5.x model refuses (model_upstream.py, written
from the reference notes, not from the profile).

Each session has several tool turns and meets one constraint: a forced tool, a
mid-conversation system message, a model switch with thinking blocks in history. Through
``serve`` every request is accepted, and each request the upstream received differs from
the one the agent sent (recorded before the proxy, tap.py) only at the paths the rule for
that constraint names (jsondiff.py, written without bridge-rules). Straight at the upstream
the same session is refused, so the test can fail.

How each agent produces the constraint (found in the npm packages, see each test):
- pi 0.73.1 writes neither ``tool_choice`` nor a ``system`` message itself; an extension
  (agent_hooks/*.ts, loaded with ``-e``) does it in pi's ``before_provider_request`` hook,
  the way pi-flows forces ``finish``.
- opencode 1.18.33 forces a tool when asked for structured output (``format:
  json_schema`` through its server API); it never sends a mid-conversation system message
  (its model-message conversion writes user and assistant turns only), so that case runs
  with pi, and with the real Claude Code CLI 2.1.330, which sends one on every request
  (its environment reminder, as ``messages[1]``) without any hook.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from claude_driver import CLAUDE_ENV, install_claude
from fake_upstream import tool_results
from jsondiff import Path as JsonPath
from jsondiff import differences, within
from model_upstream import (
    FORCED_ERROR,
    FORCED_REFUSED,
    SIGNATURE_ERROR,
    SYSTEM_ROLE_OK,
    ModelUpstream,
)
from opencode_driver import bridge_rules_serve, model, run_opencode, run_opencode_structured
from pi_driver import run_pi
from tap import Tap, paired
from toolchain import agent_path

pytestmark = pytest.mark.e2e

HOOKS = Path(__file__).resolve().parent / "agent_hooks"
PI_TURNS = [
    [{"name": "read", "input": {"path": "hello.txt"}}],
    [{"name": "bash", "input": {"command": "echo second-turn"}}],
]
"""Two tool turns, then the upstream's text: three model requests in one pi session."""
Allowed = Callable[[dict[str, Any]], set[JsonPath]]


@contextmanager
def through_serve(upstream: ModelUpstream) -> Iterator[Tap]:
    """``serve --rules models`` in front of ``upstream``, and a tap in front of ``serve``."""
    with bridge_rules_serve(upstream.url, "models") as url, Tap(url) as tap:
        yield tap


def only_where_rules_say(tap: Tap, upstream: ModelUpstream, allowed: Allowed) -> int:
    """Every request the agent sent reached the upstream changed only at ``allowed(sent)``;
    how many model requests there were."""
    pairs = paired(tap, upstream.requests)
    for sent, received in pairs:
        assert within(differences(sent, received), allowed(sent)) == set(), sent["model"]
    return len(pairs)


def forced(payload: dict[str, Any]) -> bool:
    choice = payload.get("tool_choice")
    return isinstance(choice, dict) and choice.get("type") in ("any", "tool")


def forced_paths(sent: dict[str, Any]) -> set[JsonPath]:
    """The rule `tool_choice.forced: auto`: tool_choice becomes auto, a line joins system."""
    return {("tool_choice",), ("system",)} if forced(sent) else set()


def system_paths(sent: dict[str, Any]) -> set[JsonPath]:
    """The rule `system_in_messages: fold`: the messages lose the system turns, which join
    the top-level system."""
    roles = [m["role"] for m in sent["messages"]]
    return {("messages",), ("system",)} if "system" in roles else set()


def thinking_paths(sent: dict[str, Any]) -> set[JsonPath]:
    """The rule `thinking.foreign: strip`: an assistant turn that holds a thinking block may
    lose it (another model's) or get its signature back unmarked (this model's)."""
    return {
        ("messages", i, "content")
        for i, m in enumerate(sent["messages"])
        if m["role"] == "assistant"
        and isinstance(m["content"], list)
        and any(b.get("type") == "thinking" for b in m["content"])
    }


# --- pi ---------------------------------------------------------------------------------


@pytest.fixture
def pi_upstream() -> Iterator[ModelUpstream]:
    with ModelUpstream() as server:
        server.turns = PI_TURNS
        yield server


def test_pi_forced_tool_on_sonnet_5_5(pi: Path, tmp_path: Path, pi_upstream: ModelUpstream) -> None:
    assert "claude-sonnet-5-5" in FORCED_REFUSED
    hook = str(HOOKS / "pi_force_tool.ts")
    with through_serve(pi_upstream) as tap:
        run = run_pi(
            pi, tmp_path, tap.url, "Read hello.txt.", "-e", hook, model="claude-sonnet-5-5"
        )
    assert run.returncode == 0, run.stderr
    assert pi_upstream.refused == []
    assert "FAKE-UPSTREAM-FINAL: got 1 tool_result(s)" in run.stdout
    assert only_where_rules_say(tap, pi_upstream, forced_paths) == 3
    for sent, received in paired(tap, pi_upstream.requests):
        assert sent["tool_choice"] == {"type": "tool", "name": "read"}  # the hook ran
        assert received["tool_choice"] == {"type": "auto"}
        assert received["system"][:-1] == sent["system"]  # one block added, nothing else
        assert received["system"][-1] == {
            "type": "text",
            "text": "You must call the tool `read` in your response.",
        }


def test_pi_forced_tool_straight_at_the_upstream_is_refused(
    pi: Path, tmp_path: Path, pi_upstream: ModelUpstream
) -> None:
    hook = str(HOOKS / "pi_force_tool.ts")
    run = run_pi(
        pi, tmp_path, pi_upstream.url, "Read hello.txt.", "-e", hook, model="claude-sonnet-5-5"
    )
    assert run.returncode != 0
    assert pi_upstream.refused == [FORCED_ERROR]


def test_pi_mid_conversation_system_message_on_sonnet_5(
    pi: Path, tmp_path: Path, pi_upstream: ModelUpstream
) -> None:
    assert "claude-sonnet-5" not in SYSTEM_ROLE_OK
    hook = str(HOOKS / "pi_system_message.ts")
    with through_serve(pi_upstream) as tap:
        run = run_pi(pi, tmp_path, tap.url, "Read hello.txt.", "-e", hook, model="claude-sonnet-5")
    assert run.returncode == 0, run.stderr
    assert pi_upstream.refused == []
    assert only_where_rules_say(tap, pi_upstream, system_paths) == 3
    later = [(s, r) for s, r in paired(tap, pi_upstream.requests) if len(s["messages"]) > 1]
    assert len(later) == 2
    for sent, received in later:
        assert "system" in [m["role"] for m in sent["messages"]]  # the hook ran
        assert [m for m in sent["messages"] if m["role"] != "system"] == received["messages"]
        assert received["system"][:-1] == sent["system"]
        assert received["system"][-1] == {"type": "text", "text": "Reminder: answer in one line."}


def test_pi_mid_conversation_system_message_straight_at_the_upstream_is_refused(
    pi: Path, tmp_path: Path, pi_upstream: ModelUpstream
) -> None:
    hook = str(HOOKS / "pi_system_message.ts")
    run = run_pi(
        pi, tmp_path, pi_upstream.url, "Read hello.txt.", "-e", hook, model="claude-sonnet-5"
    )
    assert run.returncode != 0
    assert pi_upstream.refused == ["messages.2.role: unexpected value 'system'"]


@pytest.fixture
def pi_fallback(pi_upstream: ModelUpstream) -> ModelUpstream:
    """Sonnet 5.5 asked, Opus 5.5 answers (a server-side fallback) and always thinks."""
    pi_upstream.always_think = True
    pi_upstream.answer_as = "claude-opus-5-5"
    return pi_upstream


def _pi_thinking(pi: Path, tmp_path: Path, url: str) -> Any:
    return run_pi(
        pi,
        tmp_path,
        url,
        "Read hello.txt.",
        "--thinking",
        "low",
        model="claude-sonnet-5-5",
        reasoning=True,
    )


def test_pi_model_switch_with_thinking_in_history(
    pi: Path, tmp_path: Path, pi_fallback: ModelUpstream
) -> None:
    with through_serve(pi_fallback) as tap:
        run = _pi_thinking(pi, tmp_path, tap.url)
    assert run.returncode == 0, run.stderr
    assert pi_fallback.refused == []
    assert only_where_rules_say(tap, pi_fallback, thinking_paths) == 3
    pairs = paired(tap, pi_fallback.requests)
    assert any(b["type"] == "thinking" for s, _ in pairs for b in _assistant_blocks(s))
    assert all(b["type"] != "thinking" for _, r in pairs for b in _assistant_blocks(r))


def test_pi_model_switch_straight_at_the_upstream_is_refused(
    pi: Path, tmp_path: Path, pi_fallback: ModelUpstream
) -> None:
    run = _pi_thinking(pi, tmp_path, pi_fallback.url)
    assert run.returncode != 0
    assert any(SIGNATURE_ERROR in why for why in pi_fallback.refused)


# --- opencode ---------------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "hello.txt").write_text("Hello from the model sessions test.\n")
    return project


@pytest.fixture
def oc_upstream(project: Path) -> Iterator[ModelUpstream]:
    """Turn 1 reads hello.txt, turn 2 answers with the StructuredOutput tool; a request
    without tools (opencode's title) gets a text."""
    with ModelUpstream() as server:
        server.script.tool_calls = []
        server.script.lead_text = "On it."
        server.turns = [
            [{"name": "read", "input": {"filePath": str(project / "hello.txt")}}],
            [{"name": "StructuredOutput", "input": {"answer": "Hello"}}],
        ]
        yield server


def test_opencode_structured_output_forces_a_tool_on_sonnet_5_5(
    opencode: Path, tmp_path: Path, project: Path, oc_upstream: ModelUpstream
) -> None:
    assert model() in FORCED_REFUSED
    with through_serve(oc_upstream) as tap:
        answer = run_opencode_structured(
            opencode, tmp_path / "home", project, tap.url, schema=SCHEMA
        )
    assert "error" not in answer["info"], answer["info"]
    assert answer["info"]["structured"] == {"answer": "Hello"}
    assert oc_upstream.refused == []
    # opencode asks Sonnet 5.5 to think: its own blocks come back marked (thinking.foreign)
    allowed: Allowed = lambda sent: forced_paths(sent) | thinking_paths(sent)  # noqa: E731
    assert only_where_rules_say(tap, oc_upstream, allowed) == 3  # title and two turns
    turns = [(s, r) for s, r in paired(tap, oc_upstream.requests) if s.get("tools")]
    assert len(turns) == 2
    assert any(tool_results(s) for s, _ in turns)
    for sent, received in turns:
        assert sent["tool_choice"] == {"type": "any"}
        assert received["tool_choice"] == {"type": "auto"}
        assert received["system"][:-1] == sent["system"]
        said = received["system"][-1]["text"]
        assert said == "You must call one of the provided tools in your response."


def test_opencode_structured_output_straight_at_the_upstream_is_refused(
    opencode: Path, tmp_path: Path, project: Path, oc_upstream: ModelUpstream
) -> None:
    answer = run_opencode_structured(
        opencode, tmp_path / "home", project, oc_upstream.url, schema=SCHEMA
    )
    assert answer["info"]["error"]["data"]["message"] == FORCED_ERROR
    assert oc_upstream.refused == [FORCED_ERROR]


@pytest.fixture
def oc_fallback(project: Path) -> Iterator[ModelUpstream]:
    """Sonnet 5.5 asked, Opus 5.5 answers and always thinks; two read turns, then text."""
    with ModelUpstream() as server:
        server.script.tool_calls = []
        server.always_think = True
        server.answer_as = "claude-opus-5-5"
        read = [{"name": "read", "input": {"filePath": str(project / "hello.txt")}}]
        server.turns = [read, read]
        yield server


def test_opencode_model_switch_with_thinking_in_history(
    opencode: Path, tmp_path: Path, project: Path, oc_fallback: ModelUpstream
) -> None:
    """test_e2e_models.py runs this switch with the opencode profile's names; here the
    rules are the models profile alone, so every difference is one of its rules."""
    with through_serve(oc_fallback) as tap:
        run = run_opencode(opencode, tmp_path / "home", project, tap.url, "Read hello.txt.")
    assert run.returncode == 0, run.stderr
    assert oc_fallback.refused == []
    assert "FAKE-UPSTREAM-FINAL: got 1 tool_result(s)" in run.stdout
    assert only_where_rules_say(tap, oc_fallback, thinking_paths) == 4  # title, three turns
    pairs = paired(tap, oc_fallback.requests)
    sent_kinds = [b["type"] for s, _ in pairs for b in _assistant_blocks(s)]
    assert "thinking" in sent_kinds  # opencode replays Opus's blocks
    assert all(b["type"] != "thinking" for _, r in pairs for b in _assistant_blocks(r))


def test_opencode_model_switch_straight_at_the_upstream_is_refused(
    opencode: Path, tmp_path: Path, project: Path, oc_fallback: ModelUpstream
) -> None:
    run_opencode(opencode, tmp_path / "home", project, oc_fallback.url, "Read hello.txt.")
    assert any(SIGNATURE_ERROR in why for why in oc_fallback.refused)


def _assistant_blocks(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        b
        for m in payload["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
    ]


# --- Claude Code -----------------------------------------------------------------------


def _claude(npm_cache: Path, project: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    """``claude -p`` (npm 2.1.330) on Sonnet 5 in ``project``, offline, at ``base_url``."""
    home = project.parent / "claude-home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": agent_path(),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        **CLAUDE_ENV,
    }
    return subprocess.run(
        [str(install_claude(npm_cache)), "-p", "Read hello.txt, then run echo hi.",
         "--model", "claude-sonnet-5", "--allowedTools", "Read,Bash"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )  # fmt: skip


@pytest.fixture
def cc_upstream(project: Path) -> Iterator[ModelUpstream]:
    with ModelUpstream() as server:
        server.script.tool_calls = []
        server.turns = [
            [{"name": "Read", "input": {"file_path": str(project / "hello.txt")}}],
            [{"name": "Bash", "input": {"command": "echo hi"}}],
        ]
        yield server


def test_claude_code_mid_conversation_system_messages_on_sonnet_5(
    npm_cache: Path, project: Path, cc_upstream: ModelUpstream
) -> None:
    assert "claude-sonnet-5" not in SYSTEM_ROLE_OK
    with through_serve(cc_upstream) as tap:
        run = _claude(npm_cache, project, tap.url)
    assert run.returncode == 0, run.stdout + run.stderr
    assert cc_upstream.refused == []
    assert "FAKE-UPSTREAM-FINAL: got 2 tool_result(s)" in run.stdout
    assert only_where_rules_say(tap, cc_upstream, system_paths) == 3
    for sent, received in paired(tap, cc_upstream.requests):
        kept = [m for m in sent["messages"] if m["role"] != "system"]
        folded = [m["content"] for m in sent["messages"] if m["role"] == "system"]
        assert folded  # Claude Code sent its reminder as a system message
        assert received["messages"] == kept
        assert received["system"][: len(sent["system"])] == sent["system"]
        texts = [b["text"] for b in received["system"][len(sent["system"]) :]]
        assert texts == [
            c if isinstance(c, str) else "\n\n".join(b["text"] for b in c) for c in folded
        ]


def test_claude_code_straight_at_the_upstream_is_refused(
    npm_cache: Path, project: Path, cc_upstream: ModelUpstream
) -> None:
    run = _claude(npm_cache, project, cc_upstream.url)
    assert run.returncode != 0
    assert cc_upstream.refused
    assert set(cc_upstream.refused) == {"messages.1.role: unexpected value 'system'"}
