"""Client keys in front of the Claude Code upstream, which answers with its owner's login.

``serve --upstream claude-code`` (or any route using it) on an address others can reach
refuses to start without ``--keys``; with keys, a key's Claude Code sessions at once hold
for the key across ``--workers 2``, while another key is served. The oracle for the
address check is the list of addresses RFC 5735 / RFC 4291 call loopback, written out; for
sessions, the statuses the clients see while the scripted endpoint is still streaming the
first answer.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from scripted import ScriptedEndpoint, done
from test_serve_options import serve
from tests.claude_code.serving_kit import claude_code_serving
from tests.proxy.clientkeys import Keys, anthropic_error, assert_no_leak

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]
ASK = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
}
REFUSAL = "lets others reach the claude-code upstream"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "10.1.2.3", "example.com"])
def test_claude_code_on_an_open_address_needs_keys(host: str, tmp_path: Path) -> None:
    done_ = serve("--upstream", "claude-code", "--host", host)
    assert done_.returncode == 2
    assert REFUSAL in done_.stderr
    assert "--keys FILE" in done_.stderr
    assert "Traceback" not in done_.stderr
    config = tmp_path / "serve.yaml"  # a route using it counts the same
    config.write_text(
        "upstream: http://127.0.0.1:9\nroutes:\n  - {name: cc, upstream: claude-code}\n",
        encoding="utf-8",
    )
    done_ = serve("--config", str(config), "--host", host)
    assert done_.returncode == 2
    assert REFUSAL in done_.stderr


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "localhost"])
def test_loopback_needs_no_keys(host: str) -> None:
    # --max-sessions 0 stops serve after the address check: only that one is in question
    done_ = serve("--upstream", "claude-code", "--host", host, "--max-sessions", "0")
    assert done_.returncode == 2
    assert REFUSAL not in done_.stderr
    assert "--max-sessions must be at least 1" in done_.stderr


def test_with_keys_an_open_address_is_allowed(tmp_path: Path) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    keys.new("remote")
    done_ = serve(
        "--upstream", "claude-code", "--host", "0.0.0.0", "--keys", str(keys.path),
        "--max-sessions", "0",
    )  # fmt: skip
    assert REFUSAL not in done_.stderr
    assert "--max-sessions must be at least 1" in done_.stderr


def test_a_keys_sessions_hold_across_workers_and_spare_other_keys(tmp_path: Path) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    solo = keys.new("solo-team", "limits: {sessions: 1}")
    other = keys.new("other-team")
    slow = done("slow answer")
    slow.event_gap = 0.4  # the first answer streams for a few seconds
    with (
        ScriptedEndpoint([slow]) as endpoint,
        claude_code_serving(
            endpoint, "--keys", str(keys.path), "--workers", "2", "--max-sessions", "4", quiet=True
        ) as url,
    ):
        answers: list[httpx.Response] = []

        def ask(key: str) -> None:
            answers.append(
                httpx.post(f"{url}/v1/messages", json=ASK, headers={"x-api-key": key}, timeout=60)
            )

        first = threading.Thread(target=ask, args=(solo,))
        first.start()
        deadline = time.monotonic() + 30
        while not endpoint.turns:  # the CLI is asking the model: the session is held
            assert time.monotonic() < deadline, "the first request never reached the CLI"
            time.sleep(0.05)
        seconds = [
            httpx.post(f"{url}/v1/messages", json=ASK, headers={"x-api-key": solo}, timeout=60)
            for _ in range(4)  # new connections: both workers
        ]
        others = threading.Thread(target=ask, args=(other,))
        others.start()
        first.join(60)
        others.join(60)
    for reply in seconds:
        anthropic_error(reply, 429, "rate_limit_error")
        assert reply.headers["retry-after"] == "1"
        assert "Claude Code sessions" in reply.json()["error"]["message"]
        assert_no_leak(reply, keys, allowed_names=("solo-team",))
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
