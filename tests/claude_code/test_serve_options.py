"""``serve --upstream claude-code`` from the command line: what it refuses before starting,
and that the running server answers through the CLI with the settings it was given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from scripted import ScriptedEndpoint, done
from tests.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = "import sys\nfrom bridge_rules.cli.app import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run(
        [sys.executable, "-c", code, "serve", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-sessions", "0"], "--max-sessions must be at least 1"),
        (["--claude-mcp-config", "/no/such.json"], "--claude-mcp-config: cannot read"),
    ],
)
def test_bad_claude_code_options_exit_2(args: list[str], message: str) -> None:
    done_ = serve("--upstream", "claude-code", *args)
    assert done_.returncode == 2
    assert message in done_.stderr
    assert "Traceback" not in done_.stderr


def test_an_mcp_config_of_the_wrong_shape_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"servers": []}))
    done_ = serve("--upstream", "claude-code", "--claude-mcp-config", str(config))
    assert done_.returncode == 2
    assert '"mcpServers"' in done_.stderr


def test_without_the_sdk_serve_names_the_extra(tmp_path: Path) -> None:
    # A package of that name that cannot be found: find_spec answers None for it.
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import importlib.util as u\n"
        "_real = u.find_spec\n"
        "u.find_spec = lambda name, *a, **k: None if name == 'claude_agent_sdk' "
        "else _real(name, *a, **k)\n"
    )
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    done_ = serve("--upstream", "claude-code", env={"PYTHONPATH": path})
    assert done_.returncode == 2
    assert "pip install 'bridge-rules[claude-code]'" in done_.stderr


@pytest.mark.parametrize("given", ["environment", "config"])
def test_serve_answers_through_the_cli(tmp_path: Path, given: str) -> None:
    port = free_port()
    with ScriptedEndpoint([done("hello from the CLI")]) as endpoint:
        config = tmp_path / "serve.yaml"
        config.write_text(f"upstream: claude-code\nport: {port}\nmax-sessions: 2\n")
        settings = (
            {"BRIDGE_RULES_UPSTREAM": "claude-code", "BRIDGE_RULES_PORT": str(port)}
            if given == "environment"
            else {"BRIDGE_RULES_CONFIG": str(config)}
        )
        env = {
            **os.environ,
            **settings,
            "ANTHROPIC_BASE_URL": endpoint.url,
            "ANTHROPIC_API_KEY": "sk-ant-test",
        }
        code = "import sys\nfrom bridge_rules.cli.app import main\nsys.exit(main(['serve']))\n"
        server = subprocess.Popen([sys.executable, "-c", code], env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    ready = httpx.get(f"{url}/readyz", timeout=2)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            ask = {
                "model": "claude-sonnet-4-6",
                "max_tokens": 64,
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
            }
            reply = httpx.post(f"{url}/v1/messages", json=ask, timeout=60).json()
            count = httpx.post(f"{url}/v1/messages/count_tokens", json=ask, timeout=60).json()
        finally:
            server.terminate()
            server.wait(10)
    assert ready.status_code == 200
    assert reply["content"] == [{"type": "text", "text": "hello from the CLI"}]
    assert count == {"input_tokens": 10}  # what the endpoint reported for the call
    assert endpoint.turns[-1]["max_tokens"] == 1  # count_tokens asked for one output token


def test_an_http_upstream_never_imports_the_sdk() -> None:
    # The extra is ~165 MB and its import is not free: only --upstream claude-code pays it.
    code = (
        "import sys\n"
        "from bridge_rules.proxy.app import create_app\n"
        "from bridge_rules.proxy.config import ProxyConfig\n"
        "create_app(ProxyConfig(upstream='http://127.0.0.1:9'))\n"
        "print('claude_agent_sdk' in sys.modules)\n"
        "create_app(ProxyConfig(upstream='claude-code'))\n"
        "print('claude_agent_sdk' in sys.modules)\n"
    )
    done_ = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done_.stdout.split() == ["False", "True"], done_.stderr
