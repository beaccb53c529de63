"""Readiness without credentials: ``credentials.missing`` against the real CLI's own
verdict (does it say "Not logged in"?) for each way of logging in, and ``/readyz`` and a
request through ``serve`` when there is none."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from scripted import TEST_CLAUDE, ScriptedEndpoint, done
from servers import running_app

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.claude_code import bundled_claude
from bridge_rules.proxy.claude_code.credentials import missing
from bridge_rules.proxy.ops import with_ops

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
CLI = os.environ.get(TEST_CLAUDE) or bundled_claude() or "claude"
LATER = int(time.time() * 1000) + 86_400_000
OAUTH = {"claudeAiOauth": {"accessToken": "sk-ant-oat01-x", "refreshToken": "r",
                           "expiresAt": LATER, "scopes": ["user:inference"]}}  # fmt: skip
# name -> (environment, files in the configuration directory)
CASES: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
    "nothing": ({}, {}),
    "an API key": ({"ANTHROPIC_API_KEY": "sk-ant-test"}, {}),
    "an empty API key": ({"ANTHROPIC_API_KEY": ""}, {}),
    "a bearer token": ({"ANTHROPIC_AUTH_TOKEN": "t"}, {}),
    "an OAuth token": ({"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-x"}, {}),
    "an empty config dir": ({"CLAUDE_CONFIG_DIR": "{dir}"}, {}),
    "a claude login": ({"CLAUDE_CONFIG_DIR": "{dir}"}, {".credentials.json": OAUTH}),
    "a /login key": ({"CLAUDE_CONFIG_DIR": "{dir}"}, {".claude.json": {"primaryApiKey": "k"}}),
    "an empty credentials file": ({"CLAUDE_CONFIG_DIR": "{dir}"}, {".credentials.json": {}}),
    "a config without a key": ({"CLAUDE_CONFIG_DIR": "{dir}"}, {".claude.json": {"a": 1}}),
}


def prepared(tmp_path: Path, case: str) -> dict[str, str]:
    env, files = CASES[case]
    config = tmp_path / "config"
    config.mkdir()
    for name, data in files.items():
        (config / name).write_text(json.dumps(data), encoding="utf-8")
    return {k: v.replace("{dir}", str(config)) for k, v in env.items()}


@pytest.mark.parametrize("case", CASES)
def test_the_verdict_is_the_real_clis_own(tmp_path: Path, case: str) -> None:
    env = prepared(tmp_path, case)
    (tmp_path / "home").mkdir()
    with ScriptedEndpoint([done("hello")]) as endpoint:
        base = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path / "home"),
            "ANTHROPIC_BASE_URL": endpoint.url,
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        run = subprocess.run(
            [CLI, "-p", "hi", "--model", "claude-sonnet-4-6"],
            env={**base, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=tmp_path,
        )
    said = run.stdout + run.stderr
    assert ("Not logged in" in said) == (missing(env) is not None), said


def test_a_cloud_provider_needs_no_key_here() -> None:
    assert missing({"CLAUDE_CODE_USE_BEDROCK": "1"}) is None
    assert missing({"CLAUDE_CODE_USE_VERTEX": "true"}) is None
    assert missing({"CLAUDE_CODE_USE_VERTEX": "0"}) is not None


def proxy() -> Any:
    """The app as ``serve`` runs it, ``/readyz`` included."""
    config = ProxyConfig(upstream="claude-code", claude_path=CLI)
    return with_ops(create_app(config), config.upstream)


def test_readyz_and_the_client_say_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                 "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    ask = {"model": "claude-sonnet-4-6", "max_tokens": 64,
           "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
    with running_app(proxy()) as url:
        ready = httpx.get(f"{url}/readyz", timeout=30)
        reply = httpx.post(f"{url}/v1/messages", json=ask, timeout=30)
        streamed = httpx.post(f"{url}/v1/messages", json={**ask, "stream": True}, timeout=30)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with running_app(proxy()) as url:
        ready_now = httpx.get(f"{url}/readyz", timeout=30)
    assert ready.status_code == 503, ready.text
    assert "no credentials" in ready.text
    for answer in (reply, streamed):
        assert answer.status_code == 503, answer.text
        message = answer.json()["error"]["message"]
        assert "ANTHROPIC_API_KEY" in message
        assert "CLAUDE_CODE_OAUTH_TOKEN" in message
        assert "serve" in message
    assert ready_now.status_code == 200
