"""The real opencode CLI through ``bridge-rules serve`` against an upstream that refuses what
each 5.x model refuses (model_upstream.py, written from the reference notes).

The session switches model under the agent: Sonnet 5.5 is asked, and a server-side fallback
answers as Opus 5.5, which always thinks. opencode replays Opus's thinking block to Sonnet 5.5
with the tool result. Straight at the upstream, that replay is a 400 ("Invalid signature in
thinking block"). Through ``serve`` with the ``models`` profile, the block's mark says Opus
made it, the rule leaves it out, and every request is accepted. (The same switch under the
models profile alone, with each request compared to what opencode sent, is in
test_e2e_model_sessions.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_upstream import tool_results
from model_upstream import SIGNATURE_ERROR, ModelUpstream
from opencode_driver import bridge_rules_serve, model, run_opencode

pytestmark = pytest.mark.e2e

HELLO = "Hello from the models e2e test.\n"


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("opencode-home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "hello.txt").write_text(HELLO)
    return project


@pytest.fixture
def fallback_upstream(project: Path) -> ModelUpstream:
    server = ModelUpstream()
    server.script.tool_calls = [
        {"name": "Read", "input": {"file_path": str(project / "hello.txt")}}
    ]
    server.always_think = True
    server.answer_as = "claude-opus-5-5"
    return server


def test_opencode_session_survives_a_model_switch_with_thinking_in_history(
    opencode: Path, home: Path, project: Path, fallback_upstream: ModelUpstream
) -> None:
    assert model() == "claude-sonnet-5-5"  # the documented snippet's model
    with (
        fallback_upstream as upstream,
        bridge_rules_serve(upstream.url, "opencode", "models") as url,
    ):
        run = run_opencode(opencode, home, project, url, "Read hello.txt.")
        sent = [r.json for r in upstream.requests if r.path == "/v1/messages"]
    assert run.returncode == 0, run.stderr
    assert upstream.refused == []
    assert "FAKE-UPSTREAM-FINAL: got 1 tool_result(s)" in run.stdout
    second = next(p for p in sent if tool_results(p))
    kinds = [
        b["type"] for m in second["messages"] if m["role"] == "assistant" for b in m["content"]
    ]
    assert "thinking" not in kinds  # Opus's block left out for Sonnet
    assert "tool_use" in kinds


def test_without_the_rule_the_same_session_fails(
    opencode: Path, home: Path, project: Path, fallback_upstream: ModelUpstream
) -> None:
    with fallback_upstream as upstream, bridge_rules_serve(upstream.url, "opencode") as url:
        run_opencode(opencode, home, project, url, "Read hello.txt.")
    assert any(SIGNATURE_ERROR in why for why in upstream.refused)


def test_models_on_a_claude_code_route_come_from_the_real_cli(
    npm_cache: Path, tmp_path: Path
) -> None:
    """The real CLI 2.1.330 (npm) asked through ``serve``: its aliases (default, opus,
    fable, sonnet, haiku) resolve to four ids, as it answered by hand on 2026-11-28."""
    import anthropic
    from claude_driver import install_claude
    from servers import running_app

    import bridge_rules
    from bridge_rules.proxy import ProxyConfig, create_app
    from bridge_rules.proxy.config import CLAUDE_CODE

    claude = install_claude(npm_cache)
    config = ProxyConfig(upstream=CLAUDE_CODE, claude_path=str(claude))
    with running_app(create_app(config, engine=bridge_rules.load())) as url:
        client = anthropic.Anthropic(base_url=url, api_key="sk-ant-dummy", max_retries=0)
        ids = {m.id for m in client.models.list()}
    assert ids == {"claude-opus-5-5", "claude-fable-5-2", "claude-sonnet-5-5", "claude-haiku-5-5"}
