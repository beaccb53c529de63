"""`bridge-rules transform`: files and stdin in, rewritten JSON or SSE out, located errors."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from tests.transform.conftest import ROOT, tool_calls

from bridge_rules.cli.app import main

EXAMPLES = ROOT / "examples"


def run(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, str]:
    code = main(["transform", *argv])
    out, err = capsysbinary.readouterr()
    return code, out, err.decode()


def test_outbound_on_the_bundled_pi_request(
    capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL", raising=False)
    code, out, err = run(capsysbinary, "outbound", str(EXAMPLES / "pi-request.json"), "--summary")
    assert code == 0
    payload = orjson.loads(out)
    assert "mcp__pi__ls" in [t["name"] for t in payload["tools"]]
    assert "gate: open" in err
    assert "ls -> mcp__pi__ls" in err
    assert "registered (for the response): read,bash,edit,write,grep,find,ls" in err


def test_outbound_with_a_closed_gate_says_so(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = run(
        capsysbinary, "outbound", str(EXAMPLES / "pi-request.json"), "--model", "gpt-5"
    )
    assert code == 0
    assert orjson.loads(out) == orjson.loads((EXAMPLES / "pi-request.json").read_bytes())
    assert "gate: closed" in err


def test_inbound_from_stdin(
    capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "sys.stdin", io.TextIOWrapper(io.BytesIO((EXAMPLES / "response.json").read_bytes()))
    )
    code, out, _ = run(capsysbinary, "inbound", "-", "--registered", "read,ls", "--pretty")
    assert code == 0
    names = [b.get("name") for b in orjson.loads(out)["content"]]
    assert names == [None, "read", "ls", "mcp__exa__web_search"]
    assert out.startswith(b"{\n  ")


def test_stream(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, _ = run(
        capsysbinary, "stream", str(EXAMPLES / "stream.sse"), "--registered", "read,ls"
    )
    assert code == 0
    assert tool_calls(out) == [("read", {"path": "hello.txt"}), ("ls", {"path": "."})]
    assert out.endswith(b'data: {"type":"message_stop"}\n\n')


def test_malformed_json_is_a_located_usage_error(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": "claude",\n  "messages": [],\n}\n')
    code, out, err = run(capsysbinary, "outbound", str(bad))
    assert code == 2
    assert out == b""
    assert err == f"{bad}:2:17: error[BR501] invalid JSON: trailing comma is not allowed\n"
    assert "Traceback" not in err


def test_missing_file(capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path) -> None:
    code, _, err = run(capsysbinary, "inbound", str(tmp_path / "nope.json"))
    assert code == 2
    assert "cannot read" in err


def test_outbound_of_a_refused_request_fails_with_the_reason(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proxy answers such a request with a 400; the command must not print it as sent."""
    monkeypatch.delenv("PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL", raising=False)
    body = {
        "model": "claude-sonnet-4-5",
        "tools": [{"name": "a.b", "input_schema": {"type": "object"}}],
        "messages": [],
    }
    request = tmp_path / "request.json"
    request.write_bytes(orjson.dumps(body))
    code, out, err = run(capsysbinary, "outbound", str(request))
    assert code == 1
    assert out == b""
    assert err.startswith("bridge-rules: error: request refused: ")
    assert "tool 'a.b' (sent as 'mcp__pi__a.b') contains '.'" in err
