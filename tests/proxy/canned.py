"""A scripted upstream for fault tests: any status, headers and body chunks, recorded requests.

``Canned.body`` may be a list of chunks or a callable yielding them (a body too big to
hold); SSE bodies are sent chunked, each chunk flushed at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = list[bytes] | Callable[[], Iterable[bytes]]
TEXT_ANSWER = (
    b'{"id":"m","type":"message","role":"assistant","model":"m",'
    b'"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}'
)
"""A plain answer, for tests whose route has a policy: it passes on only what it can read."""


@dataclass
class Seen:
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]


@dataclass
class Reply:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: Body = field(default_factory=list)
    content_type: str | None = "application/json"  # None: no content-type header at all


class Canned(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = Reply()
        self.seen: list[Seen] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> Canned:
        # A short poll interval: shutdown() waits for the next poll (0.5 s by default).
        threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Canned

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.seen.append(Seen(self.path, list(self.headers.items()), body))
        reply = self.server.reply
        chunks = reply.body() if callable(reply.body) else reply.body
        self.send_response(reply.status)
        if reply.content_type is not None:
            self.send_header("content-type", reply.content_type)
        self.send_header("transfer-encoding", "chunked")
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        try:
            for chunk in chunks:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    do_GET = do_POST = _handle
