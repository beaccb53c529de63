"""Proxy settings, serialisable so ``--workers`` processes can rebuild the app."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

ENV_VAR = "BRIDGE_RULES_SERVE_CONFIG"
DEFAULT_MAX_BODY = 32 * 1024 * 1024  # the Messages API's own request limit is 32 MB
DEFAULT_MAX_HEADERS = 100
DEFAULT_MAX_HEADER_BYTES = 64 * 1024
DEFAULT_BODY_TIMEOUT = 60.0
DEFAULT_MAX_SSE_EVENT = 16 * 1024 * 1024


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

    @property
    def base(self) -> str:
        return self.upstream.rstrip("/")

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ProxyConfig:
        raw = json.loads(os.environ[ENV_VAR])
        raw["rules"] = tuple(raw.get("rules") or ())
        return cls(**raw)
