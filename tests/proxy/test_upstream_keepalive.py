"""``--upstream-keepalive``: how long an idle connection to the upstream is kept for reuse.

Kept below the upstream's own idle timeout, the proxy never reuses a connection the
upstream is closing; 0 opens a new one per request. The upstream here records which
client port each request came from: one port is one connection.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from doubles import marking_engine
from servers import running_app
from tests.proxy import loopback

from bridge_rules.proxy import ProxyConfig, create_app


class PortsUpstream(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.ports: list[int] = []
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless told otherwise
    server: PortsUpstream

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.ports.append(self.client_address[1])
        body = b'{"data":[]}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def upstream() -> Iterator[PortsUpstream]:
    server = PortsUpstream()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}).start()
    yield server
    server.shutdown()
    server.server_close()


def connections(upstream: PortsUpstream, keepalive: float, pause: float = 0.0) -> int:
    """How many upstream connections three requests through the proxy used."""
    config = ProxyConfig(upstream=f"http://127.0.0.1:{upstream.server_address[1]}",
                         upstream_keepalive=keepalive)  # fmt: skip
    with running_app(create_app(config, engine=marking_engine())) as url:
        for _ in range(3):
            assert loopback.get(url + "/v1/models").status_code == 200
            time.sleep(pause)
    assert len(upstream.ports) == 3
    return len(set(upstream.ports))


def test_idle_connections_are_reused_by_default(upstream: PortsUpstream) -> None:
    assert ProxyConfig(upstream="http://x").upstream_keepalive == 30
    assert connections(upstream, 30) == 1


def test_zero_opens_a_connection_per_request(upstream: PortsUpstream) -> None:
    assert connections(upstream, 0) == 3


def test_a_connection_idle_longer_than_the_keepalive_is_not_reused(
    upstream: PortsUpstream,
) -> None:
    assert connections(upstream, 0.1, pause=0.4) == 3
