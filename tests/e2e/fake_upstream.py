"""A fake Anthropic Messages server (stdlib only), for the proxy's tests and e2e runs.

It decides each reply from the request alone, like the one used for the
reference captures (the pi-e2e.md reference note): when the last user message
carries ``tool_result`` blocks it answers with a text that quotes them
(``end_turn``); otherwise with the scripted ``tool_use`` calls, streamed as
``input_json_delta`` chunks. ``Script`` also holds faults to inject.
Every request is recorded (method, path, query, headers, body).
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Script:
    tool_calls: list[dict[str, Any]] = field(
        default_factory=lambda: [{"name": "read", "input": {"path": "hello.txt"}}]
    )
    lead_text: str | None = None
    chunk: int = 7  # partial_json chunk size
    status: int | None = None  # answer every request with this status ...
    error_body: bytes = b""  # ... and this body
    delay: float = 0.0  # seconds before the status line
    event_gap: float = 0.0  # seconds between SSE events
    cut_after_events: int | None = None  # drop the connection after N events
    gzip: bool = False  # gzip JSON bodies whatever the client asked for
    extra_headers: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, Any] | None = None  # the call's usage (else 10 in, 5 out), as the API
    # reports it: in full in a JSON reply and a stream's message_delta, in message_start
    # with one output token


@dataclass
class Recorded:
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]


def tool_results(payload: dict[str, Any]) -> list[dict[str, Any]]:
    messages = payload.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if last.get("role") == "user" else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def replayed_calls(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ``tool_use`` a request's history holds, as ``{name, input}`` in order."""
    return [
        {"name": block["name"], "input": block["input"]}
        for message in payload["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]


def final_text(results: list[dict[str, Any]]) -> str:
    parts = [f"is_error={bool(r.get('is_error'))} content={r.get('content')!r}" for r in results]
    return f"FAKE-UPSTREAM-FINAL: got {len(results)} tool_result(s): " + "; ".join(parts)


def reply_blocks(payload: dict[str, Any], script: Script) -> tuple[list[dict[str, Any]], str]:
    results = tool_results(payload)
    if results:
        return [{"type": "text", "text": final_text(results)}], "end_turn"
    blocks: list[dict[str, Any]] = []
    if script.lead_text:
        blocks.append({"type": "text", "text": script.lead_text})
    for i, call in enumerate(script.tool_calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_fake{i:04d}",
                "name": call["name"],
                "input": call["input"],
            }
        )
    return blocks, "tool_use" if script.tool_calls else "end_turn"


def message(payload: dict[str, Any], script: Script) -> dict[str, Any]:
    blocks, stop = reply_blocks(payload, script)
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": payload.get("model", "claude-sonnet-4-5"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": script.usage or {"input_tokens": 10, "output_tokens": 5},
    }


def sse_events(payload: dict[str, Any], script: Script) -> list[bytes]:
    msg = message(payload, script)
    blocks = msg.pop("content")
    start = {**msg, "content": [], "stop_reason": None}
    if script.usage:
        start["usage"] = {k: v for k, v in script.usage.items() if k != "server_tool_use"}
        start["usage"]["output_tokens"] = 1
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": start})]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                ("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
            )
            events.append(
                (
                    "content_block_delta",
                    {"index": i, "delta": {"type": "text_delta", "text": block["text"]}},
                )
            )
        else:
            events.append(
                ("content_block_start", {"index": i, "content_block": {**block, "input": {}}})
            )
            raw = json.dumps(block["input"])
            for at in range(0, len(raw), script.chunk):
                delta = {"type": "input_json_delta", "partial_json": raw[at : at + script.chunk]}
                events.append(("content_block_delta", {"index": i, "delta": delta}))
        events.append(("content_block_stop", {"index": i}))
    events.append(
        (
            "message_delta",
            {
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": script.usage or {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {}))
    return [
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
        for name, data in events
    ]


class FakeUpstream(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), handler or _Handler)
        self.script = Script()
        self.requests: list[Recorded] = []
        self.disconnects = 0  # streams the client abandoned
        self.streams_done = 0  # streams sent to the end
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> FakeUpstream:
        # A short poll interval: shutdown() waits up to one interval, once per test.
        threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client (the proxy) that gave up is part of what the tests provoke

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeUpstream

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        rec = Recorded(self.command, url.path, url.query, list(self.headers.items()), body)
        with self.server.lock:
            self.server.requests.append(rec)
        script = self.server.script
        if script.delay:
            time.sleep(script.delay)
        if script.status is not None:
            self._send(script.status, "application/json", script.error_body)
        elif url.path == "/v1/messages" and self.command == "POST":
            payload = json.loads(body)
            if payload.get("stream"):
                self._stream(sse_events(payload, script))
            else:
                self._send(200, "application/json", json.dumps(message(payload, script)).encode())
        elif url.path == "/v1/messages/count_tokens":
            self._send(200, "application/json", b'{"input_tokens": 42}')
        else:
            echo = {
                "method": self.command,
                "path": url.path,
                "query": url.query,
                "body": body.decode("utf-8", "replace"),
            }
            self._send(200, "application/json", json.dumps(echo).encode())

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def _send(self, status: int, ctype: str, body: bytes) -> None:
        if self.server.script.gzip:
            body = gzip.compress(body)
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", "req_fake")
        if self.server.script.gzip:
            self.send_header("content-encoding", "gzip")
        for name, value in self.server.script.extra_headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, events: list[bytes]) -> None:
        script = self.server.script
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        try:
            for n, event in enumerate(events):
                if script.cut_after_events is not None and n >= script.cut_after_events:
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
                if script.event_gap:
                    time.sleep(script.event_gap)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            with self.server.lock:
                self.server.streams_done += 1
        except OSError:
            with self.server.lock:
                self.server.disconnects += 1
            self.close_connection = True
