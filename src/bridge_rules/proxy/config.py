"""Proxy settings, serialisable so ``--workers`` processes can rebuild the app, and the
checks ``serve`` makes on them before it starts (the upstream URL's path, whether the port
can be bound). Standard library only: a bad option is reported before the server stack
is imported."""

from __future__ import annotations

import errno
import json
import os
import socket
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit, urlunsplit

ENV_VAR = "BRIDGE_RULES_SERVE_CONFIG"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""Where prometheus-client's workers keep their metric values; ``serve --workers N`` sets it."""
DEFAULT_MAX_BODY = 32 * 1024 * 1024  # the Messages API's own request limit is 32 MB
DEFAULT_MAX_HEADERS = 100
DEFAULT_MAX_HEADER_BYTES = 64 * 1024
DEFAULT_BODY_TIMEOUT = 60.0
DEFAULT_MAX_SSE_EVENT = 16 * 1024 * 1024
DEFAULT_OUTBOUND_CACHE_MB = 64
DEFAULT_UPSTREAM_KEEPALIVE = 30.0
CLAUDE_CODE = "claude-code"
"""``--upstream claude-code``: answer with the Claude Code CLI (docs/claude-code-upstream.md)."""


@dataclass(frozen=True)
class ProxyConfig:
    upstream: str
    rules: tuple[str, ...] = field(default_factory=tuple)
    max_body_bytes: int = DEFAULT_MAX_BODY
    timeout: float = 600.0  # seconds without a byte from the upstream
    connect_timeout: float = 10.0
    debug_log: str | None = None
    log_prompts: bool = False
    max_headers: int = DEFAULT_MAX_HEADERS  # more request headers than this: 431
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES  # names + values; more: 431
    body_timeout: float = DEFAULT_BODY_TIMEOUT  # seconds to receive a request body: else 408
    max_sse_event_bytes: int = DEFAULT_MAX_SSE_EVENT  # one event of a rewritten stream
    outbound_cache_mb: int = DEFAULT_OUTBOUND_CACHE_MB  # rewritten messages kept; 0: off
    upstream_keepalive: float = DEFAULT_UPSTREAM_KEEPALIVE  # idle pooled connection; 0: none
    claude_path: str | None = None  # with CLAUDE_CODE: the CLI binary; None: the SDK's own
    max_sessions: int = 4  # with CLAUDE_CODE: concurrent CLI processes; more get 429
    claude_allow: tuple[str, ...] = ()  # with CLAUDE_CODE: tools the CLI may run itself
    claude_mcp_config: str | None = None  # with CLAUDE_CODE: the user's own MCP servers

    @property
    def base(self) -> str:
        return self.upstream.rstrip("/")

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ProxyConfig:
        raw = json.loads(os.environ[ENV_VAR])
        raw["rules"] = tuple(raw.get("rules") or ())
        raw["claude_allow"] = tuple(raw.get("claude_allow") or ())
        return cls(**raw)


def normalise_upstream(url: str) -> tuple[str, str | None]:
    """The upstream without a trailing ``/`` or ``/v1`` (the proxy adds ``/v1/...`` itself),
    and a warning when it had ``/v1``; query and fragment are refused by the caller."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    warning = None
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
        warning = (
            f"--upstream ends in /v1; using {urlunsplit(parts._replace(path=path))} "
            "(the proxy forwards /v1/messages itself, so /v1 would be doubled)"
        )
    return urlunsplit(parts._replace(path=path)), warning


def bind_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (in use, not allowed, no such address), or None."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use; stop what holds it or use --port"
            if exc.errno == errno.EACCES:
                return f"not allowed to listen on {host}:{port} (ports below 1024 need privileges)"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None
