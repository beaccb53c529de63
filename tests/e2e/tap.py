"""A recording pass-through in front of ``bridge-rules serve``: what the agent itself sent.

The model-session tests compare each request the agent sent with the one that reached the
upstream. What the agent sent is recorded here, outside bridge-rules (stdlib only), so the
comparison does not rest on the proxy's own account of its input. Each forwarded request
carries ``x-tap-seq: N``, which the proxy passes on like any other header, so a request at
the upstream is paired with the agent's even when two were in flight (opencode's title).
The answer, a stream included, is relayed to the agent chunk by chunk as it arrives.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from fake_upstream import Recorded

SEQ = "x-tap-seq"
_DROP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "te"}


class Tap(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, target: str) -> None:
        super().__init__(("127.0.0.1", 0), _TapHandler)
        self.target = urlsplit(target)
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> Tap:
        threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # an agent that hung up is not the tap's business

    def sent(self) -> dict[str, dict[str, Any]]:
        """Every ``POST /v1/messages`` body the agent sent, by its ``x-tap-seq``."""
        with self.lock:
            return {
                r.header(SEQ)[0]: r.json
                for r in self.requests
                if r.method == "POST" and r.path == "/v1/messages"
            }


class _TapHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Tap

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _relay(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in _DROP]
        url = urlsplit(self.path)
        with self.server.lock:
            seq = str(len(self.server.requests))
            headers.append((SEQ, seq))
            self.server.requests.append(Recorded(self.command, url.path, url.query, headers, body))
        target = self.server.target
        conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=120)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("host", target.netloc)
            for name, value in headers:
                conn.putheader(name, value)
            conn.putheader("content-length", str(len(body)))
            conn.endheaders(body)
            reply = conn.getresponse()
            self.send_response(reply.status)
            for name, value in reply.getheaders():
                if name.lower() not in _DROP:
                    self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            while chunk := reply.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        finally:
            conn.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _relay


def paired(tap: Tap, upstream_requests: list[Recorded]) -> list[tuple[Any, Any]]:
    """(what the agent sent, what the upstream received) for every model request."""
    sent = tap.sent()
    pairs = []
    for rec in upstream_requests:
        if rec.method == "POST" and rec.path == "/v1/messages":
            pairs.append((sent[rec.header(SEQ)[0]], json.loads(rec.body)))
    return pairs
