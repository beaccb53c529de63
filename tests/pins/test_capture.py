"""``pin capture`` against a fake agent: the pin it writes, and each way a capture fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pin_fixtures import FAKE_AGENT

from bridge_rules.capture.endpoint import Endpoint, reply_events
from bridge_rules.capture.run import CaptureError
from bridge_rules.cli.app import main
from bridge_rules.pins import load_pin, tools_digest

AGENT = [sys.executable, str(FAKE_AGENT)]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("mode", ["stream", "json"])
def test_capture_writes_a_pin_where_the_search_path_finds_it(
    capsys: pytest.CaptureFixture[str], isolated: Path, mode: str
) -> None:
    code, out, _ = run(capsys, "pin", "capture", "fake@1.0.0", "--", *AGENT, mode, "{url}")
    assert code == 0
    path = isolated / ".bridge-rules" / "pins" / "fake@1.0.0.json"
    assert f"wrote {path.relative_to(isolated)}: 2 tool(s)" in out
    doc = json.loads(path.read_text())
    assert doc["format"] == "bridge-rules-pin/1"
    assert (doc["name"], doc["version"]) == ("fake", "1.0.0")
    assert list(doc["tools"]) == ["read", "ls"]
    assert "cache_control" not in doc["tools"]["ls"]  # request-only keys are dropped
    assert doc["tools"]["read"]["description"] == "Read a file."
    provenance = doc["provenance"]
    assert provenance["method"] == "runtime-capture"
    assert provenance["sha256"] == tools_digest(doc["tools"])
    assert provenance["sources"][0]["user_agent"] == "fake-agent/1.0"
    assert provenance["sources"][0]["program"] == Path(sys.executable).name
    pin = load_pin("fake@1.0.0")
    assert pin.origin == "project"
    assert pin.tools["read"]["required"] == ["path"]


def test_url_reaches_the_agent_through_env_and_template(
    capsys: pytest.CaptureFixture[str], isolated: Path, tmp_path: Path
) -> None:
    assert run(capsys, "pin", "capture", "a@1", "--out", "a.json", "--", *AGENT, "json")[0] == 0
    template = tmp_path / "agent.json"
    template.write_text('{"baseURL": "{url}/v1/.."}')
    code, _, err = run(
        capsys, "pin", "capture", "b@1", "--out", "b.json", "--template", str(template),
        "--", *AGENT, "config", "{config}",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads((isolated / "a.json").read_text())["tools"].keys() == {"read", "ls"}
    assert (isolated / "b.json").is_file()


def test_merge_adds_tools_and_refuses_to_overwrite(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    target = isolated / "p.json"
    doc = {
        "format": "bridge-rules-pin/1",
        "name": "fake",
        "version": "1",
        "provenance": {"method": "import", "date": "2026-01-01T00:00:00Z", "sources": []},
        "tools": {"grep": {"description": "g", "input_schema": {"type": "object"}}},
    }
    target.write_text(json.dumps(doc))
    code, _, err = run(capsys, "pin", "capture", "fake@1", "-o", "p.json", "--", *AGENT, "json")
    assert code == 2
    assert "exists; use --merge" in err
    code, out, _ = run(
        capsys, "pin", "capture", "fake@1", "-o", "p.json", "--merge", "--", *AGENT, "json"
    )
    assert code == 0
    assert "merged 2 new tool(s) (ls, read)" in out
    merged = json.loads(target.read_text())
    assert list(merged["tools"]) == ["grep", "read", "ls"]
    assert merged["provenance"]["method"] == "import+runtime-capture"
    assert merged["provenance"]["sha256"] == tools_digest(merged["tools"])


@pytest.mark.parametrize(
    "case",
    [
        ("fail", "30", "the agent exited with status 3", "fatal: cannot open config"),
        ("hang", "1", "the agent did not finish within 1 s", "waiting for something"),
        ("notools", "30", "1 request(s) reached the capture endpoint, none with tools", ""),
        ("silent", "30", "no request reached the capture endpoint", ""),
    ],
)
def test_a_capture_without_tools_is_one_clear_message(
    capsys: pytest.CaptureFixture[str], isolated: Path, case: tuple[str, str, str, str]
) -> None:
    mode, timeout, says, tail = case
    code, _, err = run(
        capsys, "pin", "capture", "fake@1", "--timeout", timeout, "--", *AGENT, mode, "{url}"
    )
    assert code == 1
    first = err.splitlines()[0]
    assert first.startswith("bridge-rules: error: pin capture fake@1: ")
    assert says in first
    assert tail in err
    assert "Traceback" not in err
    assert not (isolated / ".bridge-rules").exists()


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "pin", "capture", "NotAPin", "--", *AGENT, "json")
    assert (code, "is not a pin" in err) == (2, True)
    code, _, err = run(capsys, "pin", "capture", "a@1", "--", "/no/such/agent")
    assert (code, "cannot run '/no/such/agent'" in err) == (2, True)
    code, _, err = run(capsys, "pin", "capture", "a@1", "--template", "nope.json", "--", "x")
    assert (code, "--template nope.json: no such file" in err) == (2, True)
    code, _, err = run(capsys, "pin", "capture", "a@1", "--env", "NOEQUALS", "--", "x")
    assert (code, "--env takes KEY=VALUE" in err) == (2, True)


def test_the_endpoint_streams_a_complete_message() -> None:
    events = [
        json.loads(line[6:])
        for line in reply_events("m").decode().splitlines()
        if line.startswith("data: ")
    ]
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    with Endpoint() as endpoint:
        assert endpoint.url.startswith("http://127.0.0.1:")


def test_stdin_reaches_the_agent(capsys: pytest.CaptureFixture[str], isolated: Path) -> None:
    """For agents that read their prompt from stdin (claude --input-format stream-json)."""
    (isolated / "mode.txt").write_text("json\n")
    code, out, err = run(
        capsys, "pin", "capture", "fake@1", "--stdin", "mode.txt", "--", *AGENT, "stdin", "{url}"
    )
    assert code == 0, err
    assert "2 tool(s)" in out
    code, _, err = run(capsys, "pin", "capture", "a@1", "--stdin", "nope.txt", "--", "x")
    assert (code, "--stdin nope.txt: no such file" in err) == (2, True)


def test_real_credentials_stay_out_of_the_agents_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bridge_rules.capture.run import DUMMY_KEY, capture

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-real")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "real-token")
    dump = tmp_path / "env.json"
    code = f"import json, os; json.dump(dict(os.environ), open({str(dump)!r}, 'w'))"
    with pytest.raises(CaptureError, match="no request reached"):
        capture([sys.executable, "-c", code], timeout=30)
    env = json.loads(dump.read_text())
    assert env["ANTHROPIC_API_KEY"] == DUMMY_KEY
    assert "ANTHROPIC_AUTH_TOKEN" not in env
    assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
