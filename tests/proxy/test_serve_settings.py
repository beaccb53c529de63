"""``serve``'s settings are checked by one object, ``ServeSettings.check``, wherever each value
came from: a flag, the environment or ``--config FILE``. Each bad setting has its message,
and the line a user reads says where the value was written when it was not a flag."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge_rules.cli.app import main
from bridge_rules.proxy.config import (
    MULTIPROC_ENV,
    ProxyConfig,
    ServeSettings,
    SettingProblem,
)
from bridge_rules.proxy.settingsfile import read_settings

GOOD: dict[str, Any] = {
    "upstream": "https://api.example.com",
    "rules": None,
    "host": "127.0.0.1",
    "port": 8787,
    "workers": 1,
    "max_body_bytes": 1024,
    "timeout": 600.0,
    "max_headers": 100,
    "max_header_bytes": 65536,
    "body_timeout": 60.0,
    "max_sse_event_bytes": 1024,
    "outbound_cache_mb": 64,
    "upstream_keepalive": 30.0,
    "header_timeout": 10.0,
    "max_connections": 0,
    "max_response_bytes": 1024,
    "debug_log": None,
    "log_prompts": False,
    "claude_path": None,
    "max_sessions": 4,
    "claude_allow": None,
    "claude_mcp_config": None,
}
OPTIONS = {name: name == "rules" for name in GOOD}  # name -> whether the option repeats


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"upstream": "ftp://x"}, "--upstream must be an http(s) URL, got 'ftp://x'"),
        ({"upstream": "example.com"}, "--upstream must be an http(s) URL, got 'example.com'"),
        ({"upstream": "http://x/?a=1"}, "--upstream takes no query string or fragment, got"),
        ({"upstream": "http://x/#top"}, "--upstream takes no query string or fragment, got"),
        ({"port": 70000}, "--port must be from 0 to 65535"),
        ({"port": -1}, "--port must be from 0 to 65535"),
        ({"workers": 0}, "--workers must be at least 1"),
        ({"max_body_bytes": 0}, "--max-body-bytes must be at least 1"),
        ({"max_headers": 0}, "--max-headers must be at least 1"),
        ({"max_header_bytes": -5}, "--max-header-bytes must be at least 1"),
        ({"max_sse_event_bytes": 0}, "--max-sse-event-bytes must be at least 1"),
        ({"outbound_cache_mb": -1}, "--outbound-cache-mb must be 0 (off) or more"),
        ({"upstream_keepalive": -0.5}, "--upstream-keepalive must be 0 (no reuse) or more"),
        ({"timeout": 0}, "--timeout must be positive"),
        ({"body_timeout": -1.0}, "--body-timeout must be positive"),
        ({"log_prompts": True}, "--log-prompts only applies with --debug-log FILE"),
        ({"header_timeout": 0}, "--header-timeout must be positive"),
        ({"max_response_bytes": 0}, "--max-response-bytes must be at least 1"),
        ({"max_connections": -1}, "--max-connections must be 0 (from the open-file limit)"),
        ({"upstream": "http://u:p@x"}, "--upstream takes no user name or password"),
        ({"upstream": "claude-code", "max_sessions": 0}, "--max-sessions must be at least 1"),
        (
            {"upstream": "claude-code", "claude_mcp_config": "/no/such.json"},
            "--claude-mcp-config: cannot read /no/such.json",
        ),
    ],
)
def test_each_bad_setting_has_its_message(bad: dict[str, Any], message: str) -> None:
    settings, problems = ServeSettings.check({**GOOD, **bad}, environ={})
    assert settings is None
    assert [p.line() for p in problems] == [f"bridge-rules: error: {p.message}" for p in problems]
    assert len(problems) == 1
    assert problems[0].message.startswith(message)


def test_every_problem_is_reported_at_once_and_says_where_it_was_written() -> None:
    where = {"workers": "BRIDGE_RULES_WORKERS", "timeout": "--config s.yaml:3:10"}
    _, problems = ServeSettings.check({**GOOD, "workers": 0, "timeout": 0}, where, environ={})
    assert [p.line() for p in problems] == [
        "bridge-rules: error: BRIDGE_RULES_WORKERS: --workers must be at least 1",
        "bridge-rules: error: --config s.yaml:3:10: --timeout must be positive",
    ]


def test_good_settings_build_the_proxy_config_and_v1_is_a_warning() -> None:
    options = {**GOOD, "upstream": "http://x:1/v1/", "rules": ["a", "b"], "workers": 2}
    settings, problems = ServeSettings.check(options, environ={})
    assert problems == [
        SettingProblem(
            "--upstream ends in /v1; using http://x:1 (the proxy forwards /v1/messages itself, "
            "so /v1 would be doubled)",
            warning=True,
        )
    ]
    assert problems[0].line().startswith("bridge-rules: warning: --upstream ends in /v1")
    assert settings == ServeSettings(
        ProxyConfig(upstream="http://x:1", rules=("a", "b"), max_body_bytes=1024,
                    max_sse_event_bytes=1024, max_response_bytes=1024),
        host="127.0.0.1",
        port=8787,
        workers=2,
    )  # fmt: skip


def test_claude_code_is_an_upstream_with_its_own_settings() -> None:
    options = {**GOOD, "upstream": "claude-code", "claude_allow": ["WebSearch"], "max_sessions": 2}
    settings, problems = ServeSettings.check(options, environ={})
    assert problems == []
    assert settings is not None
    assert settings.config.upstream == "claude-code"
    assert settings.config.claude_allow == ("WebSearch",)
    assert settings.config.max_sessions == 2


def test_a_seal_key_too_short_to_trust() -> None:
    settings, problems = ServeSettings.check(GOOD, environ={"BRIDGE_RULES_SEAL_KEY": "short"})
    assert settings is None
    assert problems[0].message.startswith("BRIDGE_RULES_SEAL_KEY must be at least 16 bytes")
    key = {"BRIDGE_RULES_SEAL_KEY": "a long enough secret key"}
    assert ServeSettings.check(GOOD, environ=key)[0] is not None


def test_a_metrics_directory_that_is_not_one(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone")
    settings, problems = ServeSettings.check(GOOD, environ={MULTIPROC_ENV: missing})
    assert settings is None
    assert problems[0].message.startswith(f"{MULTIPROC_ENV}={missing} is not a directory")
    assert ServeSettings.check(GOOD, environ={MULTIPROC_ENV: str(tmp_path)})[0] is not None


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("- upstream\n", ["--config {f}: must be a mapping of option names to values"]),
        ("upstream: x\nnosuch: 1\n", ["--config {f}:2:1: unknown option 'nosuch'; known: "]),
        ("upstreem: x\n", ["--config {f}:1:1: unknown option 'upstreem'; did you mean"]),
        ("port: [1, 2]\n", ["--config {f}:1:7: 'port' takes one value, got list"]),
        ("rules: {a: 1}\n", ["--config {f}:1:8: 'rules' takes a list of values, got dict"]),
        ("port: []\nworkers: {}\n", ["--config {f}:1:7: 'port'", "--config {f}:2:10: 'workers'"]),
        ("{", ["{f}:1:2: error[BR003] YAML syntax error"]),
        ("a: 1\na: 2\n", ["{f}:2:1: error[BR004] duplicate key"]),
    ],
)
def test_a_bad_settings_file_has_located_messages(
    text: str, lines: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "serve.yaml"
    path.write_text(text, encoding="utf-8")
    found = read_settings(str(path), OPTIONS)
    shown = [p.line().removeprefix("bridge-rules: error: ") for p in found.problems]
    assert len(shown) == len(lines)
    for line, expected in zip(shown, lines, strict=True):
        assert line.startswith(expected.format(f=path)), line
        assert "rule file" not in line
        assert "rule sections" not in line


def test_a_settings_file_that_is_missing_or_a_directory(tmp_path: Path) -> None:
    missing = read_settings(str(tmp_path / "nope.yaml"), OPTIONS).problems
    assert [p.line() for p in missing] == [
        f"bridge-rules: error: --config {tmp_path / 'nope.yaml'}: no such file"
    ]
    directory = read_settings(str(tmp_path), OPTIONS).problems
    assert [p.line() for p in directory] == [
        f"{tmp_path}: error[BR001] expected a regular file, found a directory"
    ]


def test_a_good_settings_file_gives_values_as_the_options_take_them(tmp_path: Path) -> None:
    path = tmp_path / "serve.yaml"
    path.write_text("upstream: http://x\nmax-body-bytes: 9\nrules: default\n", encoding="utf-8")
    found = read_settings(str(path), OPTIONS)
    assert found.problems == ()
    assert found.values == {"upstream": "http://x", "max_body_bytes": 9, "rules": ["default"]}
    assert found.where["max_body_bytes"] == f"--config {path}:2:17"
    path.write_text("# nothing set\n", encoding="utf-8")
    assert read_settings(str(path), OPTIONS).values == {}


@pytest.mark.parametrize(
    ("how", "where"),
    [
        ("flag", ""),
        ("environment", "BRIDGE_RULES_WORKERS: "),
        ("file", "--config {f}:2:10: "),
    ],
)
def test_serve_judges_a_value_the_same_way_wherever_it_came_from(
    how: str,
    where: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text("upstream: http://127.0.0.1:1\nworkers: 0\n", encoding="utf-8")
    args = ["serve", "--config", str(config)]
    if how == "flag":
        args += ["--workers", "0"]
    elif how == "environment":
        monkeypatch.setenv("BRIDGE_RULES_WORKERS", "0")
    assert main(args) == 2
    expected = f"bridge-rules: error: {where.format(f=config)}--workers must be at least 1\n"
    assert capsys.readouterr().err == expected


def test_serve_says_when_stripping_rules_have_no_seal_key() -> None:
    """Printed before the port is tried: a port in use ends the run right after it."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = str(held.getsockname()[1])
        argv = ["serve", "--rules", "pi-tool-guard", "--upstream", "http://127.0.0.1:9"]
        code = f"from bridge_rules.cli.app import main; main({[*argv, '--port', port]!r})"
        env = {k: v for k, v in os.environ.items() if k != "BRIDGE_RULES_SEAL_KEY"}

        def run(environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
            argv = [sys.executable, "-c", code]
            return subprocess.run(
                argv, capture_output=True, text=True, env=environ, timeout=60, check=False
            )

        done = run(env)
        keyed = run({**env, "BRIDGE_RULES_SEAL_KEY": "a long enough secret key"})
    assert "warning: the rules strip bash pipelines (bash)" in done.stderr
    assert "BRIDGE_RULES_SEAL_KEY is not set: no pipeline is stripped" in done.stderr
    assert "strip bash pipelines" not in keyed.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in keyed.stderr
