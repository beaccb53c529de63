"""A local Messages API stand-in: records each request body, answers "ok" so the agent ends.

It binds 127.0.0.1 only, keeps bodies in memory (they hold the agent's prompts, so
they are never logged or written anywhere but the pin's ``tools``), and answers
both ``stream: true`` (SSE) and plain JSON requests with one short text message and
``stop_reason: end_turn``. ``count_tokens`` and ``models`` get minimal answers so
agents that probe them carry on.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY_TEXT = "ok"
MODEL = "claude-sonnet-4-5"


def reply_message(model: str) -> dict[str, Any]:
    return {
        "id": "msg_bridge_rules_capture",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": REPLY_TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def reply_events(model: str) -> bytes:
    """The same reply as an SSE stream, event by event as the API sends it."""
    start = reply_message(model) | {"content": [], "stop_reason": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": REPLY_TEXT},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


@dataclass
class Recording:
    """What the endpoint saw: request bodies in order (in memory only)."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    user_agents: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, body: dict[str, Any], user_agent: str) -> None:
        with self.lock:
            self.bodies.append(body)
            self.user_agents.append(user_agent)

    def first_with_tools(self) -> tuple[dict[str, Any], str] | None:
        """The first request body that has tools, and the user-agent that sent it."""
        with self.lock:
            for body, agent in zip(self.bodies, self.user_agents, strict=True):
                if isinstance(body.get("tools"), list) and body["tools"]:
                    return body, agent
            return None


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: request lines are nobody's business, and the agent's stderr is ours."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            model = {"type": "model", "id": MODEL, "display_name": MODEL, "created_at": ""}
            self._json(200, {"data": [model], "has_more": False, "first_id": MODEL})
        else:
            self._json(404, {"type": "error", "error": {"type": "not_found_error"}})

    def do_HEAD(self) -> None:
        self._send(200, b"", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        path = self.path.split("?")[0].rstrip("/")
        if not isinstance(body, dict):
            self._json(400, {"type": "error", "error": {"type": "invalid_request_error"}})
        elif path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": 1})
        elif path.endswith("/messages"):
            self.server.recording.add(body, self.headers.get("user-agent", ""))
            model = body["model"] if isinstance(body.get("model"), str) else MODEL
            if body.get("stream"):
                self._send(200, reply_events(model), "text/event-stream")
            else:
                self._json(200, reply_message(model))
        else:
            self._json(404, {"type": "error", "error": {"type": "not_found_error"}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    recording: Recording


class Endpoint:
    """``with Endpoint() as ep:`` serves on ``ep.url`` until the block ends."""

    def __init__(self) -> None:
        self.recording = Recording()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.recording = self.recording
        # Polled every 50 ms rather than socketserver's 500 ms: ``shutdown()`` waits for
        # the loop to look, and the capture ends as soon as the agent does.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Endpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
