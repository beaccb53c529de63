"""The real pi CLI with a subscription key, through ``bridge-rules serve`` and the default rules.

With an OAuth key (``sk-ant-oat...``) pi-ai sends its tools under Claude Code's names
(``Read``, ``Edit``, ``Bash``) with pi's own argument schemas. The model (the fake
upstream) answers in Claude Code's shapes; through the proxy each call must run in pi and
its result reach the upstream as a success, and the call must replay in history as the
model sent it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_upstream import FakeUpstream, tool_results
from pi_driver import HELLO, OAUTH_KEY, run_pi
from tests.ports import free_port

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent / "bridge-rules"
SCENARIOS: list[tuple[str, dict[str, Any], str]] = [
    ("Read", {"file_path": "hello.txt"}, "Second line: 42."),
    ("Edit", {"file_path": "hello.txt", "old_string": "42", "new_string": "43"}, "hello.txt"),
    ("Bash", {"command": "cat hello.txt", "description": "Show the file", "timeout": 10000}, "42"),
]


def _serve(upstream: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(BIN), "serve", "--upstream", upstream, "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("serve never became healthy")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_pi_with_a_subscription_key_through_serve(
    pi: Path, tmp_path: Path, upstream: FakeUpstream, scenario: tuple[str, dict[str, Any], str]
) -> None:
    tool, args, expect = scenario
    upstream.script.tool_calls = [{"name": tool, "input": args}]
    proc, url = _serve(upstream.url)
    try:
        run = run_pi(pi, tmp_path, url, "Do the thing.", api_key=OAUTH_KEY)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert run.returncode == 0, run.stderr
    assert len(upstream.requests) == 2, run.stdout + run.stderr
    turn1, turn2 = (r.json for r in upstream.requests)
    assert upstream.requests[0].header("authorization")[0].startswith("Bearer sk-ant-oat")
    schemas = {t["name"]: set(t["input_schema"]["properties"]) for t in turn1["tools"]}
    assert {"Read", "Edit", "Bash"} <= set(schemas)  # pi's OAuth casing, kept
    assert "file_path" in schemas["Read"]  # Claude Code's schema advertised
    (result,) = tool_results(turn2)
    assert result["is_error"] is False, result
    assert expect in str(result["content"])
    replayed = [
        {"name": b["name"], "input": b["input"]}
        for m in turn2["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    expected = {k: v for k, v in args.items() if k != "description"}
    assert replayed[0]["name"] == tool
    assert {k: replayed[0]["input"].get(k) for k in expected} == expected
    if tool == "Edit":
        assert (run.project / "hello.txt").read_text() == HELLO.replace("42", "43")
