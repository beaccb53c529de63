"""``pin capture --models`` / ``--protocol`` against a real HTTP server on 127.0.0.1, and
``drift`` between two records.

Oracles: the official SDK reading the same server (``client.models.list()`` pages through it
and types ``ModelInfo.capabilities``), and the one capability the test changed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anthropic
import pytest

from bridge_rules.cli.app import main


def _model(model_id: str, effort_max: bool) -> dict[str, Any]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id.replace("-", " ").title(),
        "created_at": "2026-09-28T00:00:00Z",
        "lifecycle": "active",
        "capabilities": {
            "thinking": {"supported": True, "types": {"adaptive": {"supported": True}}},
            "effort": {"supported": True, "max": {"supported": effort_max}},
            "image_input": {"supported": True},
        },
    }


class _Gateway(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.models = [_model(m, True) for m in ("claude-opus-5-5", "claude-sonnet-5-5")]
        self.protocol: Any = {"endpoints": {"/v1/messages": "required"}}
        """JSON, or a string: served as ``text/markdown``, as ``claude gateway`` does."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Gateway

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/v1/models":  # one model a page, so paging is exercised
            after = parse_qs(url.query).get("after_id", [None])[0]
            ids = [m["id"] for m in self.server.models]
            at = ids.index(after) + 1 if after in ids else 0
            page = self.server.models[at : at + 1]
            body: Any = {
                "data": page,
                "has_more": at + 1 < len(ids),
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }
        elif url.path == "/protocol":
            body = self.server.protocol
        else:
            self.send_error(404)
            return
        markdown = isinstance(body, str)
        raw = body.encode() if markdown else json.dumps(body).encode()
        self.send_response(200)
        self.send_header(
            "content-type", "text/markdown; charset=utf-8" if markdown else "application/json"
        )
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def gateway() -> Iterator[_Gateway]:
    server = _Gateway()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_models_record_holds_what_the_sdk_reads(
    gateway: _Gateway, capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    code, out, err = run(capsys, "pin", "capture", "anthropic-models@1", "--models", gateway.url)
    assert code == 0, err
    path = isolated / ".bridge-rules" / "captures" / "anthropic-models@1.json"
    assert out == f"wrote {path.relative_to(isolated)}\n"
    recorded = json.loads(path.read_text())["models"]
    client = anthropic.Anthropic(base_url=gateway.url, api_key="sk-ant-dummy", max_retries=0)
    listed = list(client.models.list())
    assert [m.id for m in listed] == list(recorded)
    for info in listed:
        assert info.capabilities is not None
        assert recorded[info.id]["capabilities"] == info.capabilities.to_dict()
        assert recorded[info.id]["display_name"] == info.display_name


def test_drift_reports_the_capability_that_changed(
    gateway: _Gateway, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "pin", "capture", "models@1", "--models", gateway.url)[0] == 0
    gateway.models[1] = _model("claude-sonnet-5-5", effort_max=False)
    assert run(capsys, "pin", "capture", "models@2", "--models", gateway.url)[0] == 0
    code, out, _ = run(capsys, "drift", "--from", "models@1", "--to", "models@2")
    assert code == 1
    assert out.splitlines() == [
        "models: models@1 -> models@2",
        "  changed claude-sonnet-5-5.capabilities.effort.max.supported: true -> false",
        "1 change",
    ]
    code, out, _ = run(capsys, "drift", "--from", "models@2", "--to", "models@2", "-f", "json")
    assert code == 0
    assert json.loads(out)["changes"] == []


def test_protocol_record_and_its_drift(
    gateway: _Gateway, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "pin", "capture", "gw@1", "--protocol", gateway.url)[0] == 0
    gateway.protocol["endpoints"]["/v1/models"] = "optional"
    assert run(capsys, "pin", "capture", "gw@2", "--protocol", gateway.url)[0] == 0
    code, out, _ = run(capsys, "drift", "--from", "gw@1", "--to", "gw@2")
    assert code == 1
    assert '  added endpoints./v1/models: - -> "optional"' in out.splitlines()


PROTOCOL = (Path(__file__).parent / "data" / "claude-gateway-2.1.330-protocol.md").read_text(
    "utf-8"
)
"""What ``claude gateway`` 2.1.330 answers at ``GET /protocol`` (``text/markdown``): the
template its binary serves (``hp()``; ``claude gateway`` needs the native build and Postgres,
so the test serves the text the binary holds, without the optional OIDC and CRI parts)."""


def test_the_markdown_protocol_of_claude_gateway_and_its_drift(
    gateway: _Gateway, capsys: pytest.CaptureFixture[str]
) -> None:
    gateway.protocol = PROTOCOL
    assert (
        run(capsys, "pin", "capture", "claude-gateway@2.1.330", "--protocol", gateway.url)[0] == 0
    )
    old_line = "back to the client's built-in list."
    assert PROTOCOL.count(old_line) == 1
    gateway.protocol = PROTOCOL.replace(old_line, "back to the client's built-in list, or `501`.")
    assert (
        run(capsys, "pin", "capture", "claude-gateway@2.1.331", "--protocol", gateway.url)[0] == 0
    )
    code, out, _ = run(
        capsys,
        "drift",
        "--from",
        "claude-gateway@2.1.330",
        "--to",
        "claude-gateway@2.1.331",
        "-f",
        "json",
    )
    assert code == 1
    changes = json.loads(out)["changes"]
    # the oracle: the lines difflib finds in one text and not the other
    import difflib

    diff = [
        (line[0], line[2:].strip())
        for line in difflib.ndiff(PROTOCOL.splitlines(), gateway.protocol.splitlines())
        if line[:1] in "+-"
    ]
    section = "Claude Code gateway protocol > Models — optional"
    assert sorted((c["kind"], c["path"]) for c in changes) == sorted(
        ("added" if sign == "+" else "removed", f"sections.{section}.{text}") for sign, text in diff
    )
    assert len(changes) == 2
    same = run(
        capsys, "drift", "--from", "claude-gateway@2.1.330", "--to", "claude-gateway@2.1.330"
    )
    assert same[0] == 0


def test_an_unreachable_or_wrong_endpoint_is_a_located_error(
    gateway: _Gateway, capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    code, _, err = run(capsys, "pin", "capture", "m@1", "--models", gateway.url + "/nothing")
    assert code == 1
    assert "HTTP 404" in err
    code, _, err = run(capsys, "pin", "capture", "m@1", "--models", "file:///etc/passwd")
    assert code == 2
    assert "not an http(s) URL" in err
    code, _, err = run(capsys, "pin", "capture", "m@1")
    assert code == 2
    assert "--models URL" in err
    assert not (isolated / ".bridge-rules" / "captures").exists()
