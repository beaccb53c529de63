"""`PI_ANTHROPIC_MESSAGES_DEBUG_LOG`: the pi-anthropic-messages profile declares the variable
(`debug_log: {env: ...}`), and `serve` opens the file it names as it opens `--debug-log FILE`:
owner-only, credentials redacted, prompt text omitted."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from fake_upstream import FakeUpstream
from servers import running_app
from tests.proxy import loopback

from bridge_rules.cli.serve_cmd import _declared_debug_log
from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.ruleset import load_runtime

ENV = "PI_ANTHROPIC_MESSAGES_DEBUG_LOG"
PROMPT = "my secret prompt text"
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": PROMPT}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}}],
}
HEADERS = {"x-api-key": "sk-ant-api-SECRETKEY", "authorization": "Bearer SECRETTOKEN"}


def test_serve_logs_where_the_profiles_variable_says(
    upstream: FakeUpstream,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "pi-am.log"
    monkeypatch.setenv(ENV, str(path))
    runtime = load_runtime(["pi-anthropic-messages"])
    config = _declared_debug_log(ProxyConfig(upstream=upstream.url), runtime)
    assert config.debug_log == str(path)
    assert f"debug log: {path} (named by {ENV}" in capsys.readouterr().err
    with running_app(create_app(config, runtime)) as url:
        response = loopback.post(url + "/v1/messages", json=REQUEST, headers=HEADERS)
    assert response.status_code == 200
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    headers = dict(record["request_headers"])
    assert headers["x-api-key"] == headers["authorization"] == "<redacted>"
    assert record["request_body"]["tools"][0]["name"] == "read"
    assert record["upstream_body"]["tools"][0]["name"] == "Read"  # before and after
    text = path.read_text()
    assert "SECRET" not in text
    assert PROMPT not in text


def test_the_flag_wins_and_an_empty_or_undeclared_variable_logs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flagged = ProxyConfig(upstream="http://127.0.0.1:9", debug_log=str(tmp_path / "flag.log"))
    plain = ProxyConfig(upstream="http://127.0.0.1:9")
    pam = load_runtime(["pi-anthropic-messages"])
    monkeypatch.setenv(ENV, str(tmp_path / "env.log"))
    assert _declared_debug_log(flagged, pam) == flagged
    assert _declared_debug_log(plain, load_runtime(["default"])) == plain  # not declared there
    monkeypatch.setenv(ENV, "")
    assert _declared_debug_log(plain, pam) == plain
    monkeypatch.delenv(ENV)
    assert _declared_debug_log(plain, pam) == plain
