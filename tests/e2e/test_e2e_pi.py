"""The real pi CLI against an upstream that answers in Claude Code dialect.

Each scenario runs twice: through ``bridge-rules serve`` (the default rules),
where pi's tool must run and its result reach the upstream as a success, and
straight at the upstream, where the same answer must fail in pi. The second
request's history must reach the upstream in wire form.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, replayed_calls, tool_results
from pi_driver import HELLO, run_pi
from servers import running_app

import bridge_rules
from bridge_rules.proxy import ProxyConfig, create_app

# pi is installed with npm on first use: registry access is needed.
pytestmark = pytest.mark.e2e

EDITED = HELLO.replace("42", "43")
Scenario = tuple[str, list[dict[str, Any]], list[str], str, dict[str, Any]]
# id, the upstream's calls, extra pi args, what the tool result must hold through the proxy,
# the call as the upstream must see it replayed in turn 2's history.
SCENARIOS: list[Scenario] = [
    (
        "Read_ide",
        [{"name": "Read_ide", "input": {"file_path": "hello.txt"}}],
        [],
        "Second line: 42.",
        {"name": "Read", "input": {"file_path": "hello.txt"}},
    ),
    (
        "Read-file_path",
        [{"name": "Read", "input": {"file_path": "hello.txt"}}],
        [],
        "Hello from the pi e2e test file.",
        {"name": "Read", "input": {"file_path": "hello.txt"}},
    ),
    (
        "Edit",
        [
            {
                "name": "Edit",
                "input": {"file_path": "hello.txt", "old_string": "42", "new_string": "43"},
            }
        ],
        [],
        "hello.txt",
        {
            "name": "Edit",
            "input": {"file_path": "hello.txt", "old_string": "42", "new_string": "43"},
        },
    ),
    (
        "mcp__pi__ls",
        [{"name": "mcp__pi__ls", "input": {"path": "."}}],
        ["--tools", "read,bash,edit,write,ls"],
        "hello.txt",
        {"name": "mcp__pi__ls", "input": {"path": "."}},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_pi_through_the_proxy(
    pi: Path, tmp_path: Path, upstream: FakeUpstream, scenario: Scenario
) -> None:
    _, calls, extra, expect, history = scenario
    upstream.script.tool_calls = calls
    app = create_app(ProxyConfig(upstream=upstream.url), bridge_rules.load().runtime)
    with running_app(app) as url:
        run = run_pi(pi, tmp_path, url, "Do the thing.", *extra)
    assert run.returncode == 0, run.stderr
    assert len(upstream.requests) == 2, run.stdout + run.stderr
    turn1, turn2 = (r.json for r in upstream.requests)
    sent_tools = [t["name"] for t in turn1["tools"]]
    assert "Read" in sent_tools
    assert "read" not in sent_tools  # tools go out in wire form
    (result,) = tool_results(turn2)
    assert result["is_error"] is False, result
    assert expect in str(result["content"])
    assert replayed_calls(turn2) == [history]
    assert "FAKE-UPSTREAM-FINAL: got 1 tool_result(s): is_error=False" in run.stdout
    if calls[0]["name"] == "Edit":
        assert (run.project / "hello.txt").read_text() == EDITED


@pytest.mark.parametrize(
    ("calls", "extra"), [s[1:3] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS]
)
def test_pi_without_the_proxy_fails(
    pi: Path,
    tmp_path: Path,
    upstream: FakeUpstream,
    calls: list[dict[str, Any]],
    extra: list[str],
) -> None:
    upstream.script.tool_calls = calls
    run = run_pi(pi, tmp_path, upstream.url, "Do the thing.", *extra)
    assert run.returncode == 0, run.stderr  # pi reports the failure to the model, not to us
    (result,) = tool_results(upstream.requests[-1].json)
    assert result["is_error"] is True
    assert "not found" in result["content"] or "Validation failed" in result["content"]
    assert (run.project / "hello.txt").read_text() == HELLO  # nothing edited
