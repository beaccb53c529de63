"""Access log (one JSON line per request) and the opt-in debug log.

The access log carries only what an operator needs to see traffic: method, path
(no query string, which may carry keys), status, timing (the whole request, and
the upstream's share: until its response headers arrived), model, streaming and
the renames applied. It never holds credentials or prompt text. The debug log
holds headers (credentials redacted) and bodies with every free-text string
replaced by its length, unless prompts were asked for explicitly.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import sys
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, ClassVar

from bridge_rules import jsonio
from bridge_rules.proxy.errors import UpstreamAborted

if TYPE_CHECKING:
    from bridge_rules.engine import InboundReport

ACCESS_LOGGER = "bridge_rules.proxy.access"
access_logger = logging.getLogger(ACCESS_LOGGER)


@dataclass(frozen=True)
class RequestContext:
    """Set by ``proxy.ops`` around each request: its id, and who wants its finished record."""

    request_id: str
    observe: Callable[[AccessRecord], None] | None = None


CURRENT_REQUEST: ContextVar[RequestContext | None] = ContextVar(
    "bridge_rules_request", default=None
)


class _Clock:
    """``2026-11-25T15:56:03.500+00:00`` for a ``time.time()``; the text up to the second
    is formatted once per second, not once per line. The (second, text) pair is one
    tuple, replaced whole, so threads never pair one second with another's text."""

    last: tuple[int, str] = (-1, "")

    @classmethod
    def iso(cls, ts: float) -> str:
        fraction, whole = math.modf(ts)  # rounded to the microsecond as datetime rounds
        second, micros = int(whole), round(fraction * 1_000_000)
        if micros >= 1_000_000:
            second, micros = second + 1, micros - 1_000_000
        last = cls.last
        if last[0] != second:
            last = cls.last = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        return f"{last[1]}.{micros // 1000:03d}+00:00"


class _Sink:
    """The handler :func:`configure_logging` installed. While it is the access logger's
    only handler and the logger has no filter, a line goes straight to its stream: the
    same bytes the handler would write, without building a ``LogRecord`` (which cost
    more than the rest of the line). Anything else (caplog, a handler or filter added
    later, the proxy used as a library) goes through ``logging`` as usual, and so does a
    line the stream refuses (a closed or broken stderr): ``logging`` reports that its own
    way and the request never sees the error.

    Inside an event loop the lines of one loop turn are written and flushed together,
    at the end of that turn (a write and a flush per line cost ~2% of a busy worker's
    CPU); anything else the handler writes, the server's own shutdown, process exit and
    :data:`MAX_PENDING` lines waiting each flush them first, so no line is lost or
    reordered. Outside a loop a line is written at once."""

    handler: logging.StreamHandler[IO[str]] | None = None
    pending: ClassVar[list[str]] = []
    scheduled: asyncio.AbstractEventLoop | None = None

    @classmethod
    def write(cls, line: str) -> bool:
        handler = cls.handler
        if (
            handler is None
            or handler.filters
            or access_logger.filters
            or access_logger.handlers != [handler]
        ):
            return False
        cls.pending.append(line)
        if len(cls.pending) >= MAX_PENDING:
            cls.flush()
            return True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            cls.flush()
            return True
        if cls.scheduled is not loop:  # one flush a turn, on the loop running now
            loop.call_soon(cls.flush)
            cls.scheduled = loop
        return True

    @classmethod
    def flush(cls) -> None:
        """Write the waiting lines; a stream that refuses them hands them to ``logging``."""
        cls.scheduled = None
        lines, cls.pending = cls.pending, []
        handler = cls.handler
        if not lines:
            return
        try:
            if handler is None:
                raise ValueError("no handler")
            terminator = handler.terminator
            handler.stream.write(terminator.join(lines) + terminator)
            handler.stream.flush()
        except Exception:  # logging's handleError takes it from here
            for line in lines:
                access_logger.info(line)


MAX_PENDING = 256
"""Access lines one loop turn may gather before they are written at once."""


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The proxy's stderr handler: writes the access lines still waiting before any other
    line, so the log reads in the order things happened."""

    def emit(self, record: logging.LogRecord) -> None:
        if _Sink.pending:
            _Sink.flush()
        super().emit(record)

    def flush(self) -> None:
        if _Sink.pending:
            _Sink.flush()
        super().flush()


def flush_access_log() -> None:
    """Write the access lines still waiting (the server stopping, the process exiting)."""
    if _Sink.pending:
        _Sink.flush()


atexit.register(flush_access_log)


def _current_id() -> str | None:
    ctx = CURRENT_REQUEST.get()
    return ctx.request_id if ctx is not None else None


@dataclass
class AccessRecord:
    """Filled in while a request is handled; written once at the end."""

    method: str
    path: str
    started: float = field(default_factory=time.perf_counter)
    ts: float = field(default_factory=time.time)
    request_id: str | None = field(default_factory=_current_id)
    status: int = 0
    model: str | None = None
    stream: bool | None = None
    gate: bool | None = None
    renames: dict[str, str] = field(default_factory=dict)
    cache: tuple[int, int, bool] | None = None  # (messages reused, stored, tools reused)
    inbound_renames: dict[str, str] | None = None  # set when the response was rewritten
    inbound_renamed_calls: int = 0
    inbound_unmapped_calls: int = 0
    inbound_denied_calls: int = 0
    route: str | None = None  # the serve --config route that took the request
    key: str | None = None  # the name of the client key (serve --keys), never the key
    limit: str | None = None  # the key's limit that refused the request (429)
    upstream_status: int | None = None
    upstream_ms: float | None = None  # request sent upstream -> its response headers in
    spare: int = 0  # a Claude Code CLI started ahead answered: 1 + the lines it had replayed
    bytes_in: int = 0
    bytes_out: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ts": _Clock.iso(self.ts),
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "ms": round((time.perf_counter() - self.started) * 1000, 3),
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
        }
        if self.request_id is not None:
            out["request_id"] = self.request_id
        if self.model is not None:
            out["model"] = self.model
        if self.stream is not None:
            out["stream"] = self.stream
        if self.gate is not None:
            out["gate"] = self.gate
            out["renames"] = self.renames
        if self.cache is not None:
            reused, stored, tools = self.cache
            out["cache"] = {"reused": reused, "stored": stored, "tools": tools}
        if self.inbound_renames is not None:
            out["inbound_renames"] = self.inbound_renames
        if self.upstream_status is not None:
            out["upstream_status"] = self.upstream_status
        if self.upstream_ms is not None:
            out["upstream_ms"] = self.upstream_ms
        if self.spare:
            out["spare"] = self.spare
        if self.error is not None:
            out["error"] = self.error
        if self.inbound_denied_calls:
            out["denied_calls"] = self.inbound_denied_calls
        if self.route is not None:
            out["route"] = self.route
        if self.key is not None:
            out["key"] = self.key
        if self.limit is not None:
            out["limit"] = self.limit
        return out

    def noted(self, report: InboundReport) -> None:
        """What the response's inbound rewrite mapped back."""
        self.inbound_renames = dict(report.renamed)
        self.inbound_renamed_calls = report.renamed_calls
        self.inbound_unmapped_calls = len(report.unmapped)
        self.inbound_denied_calls = len(report.denied)

    def emit(self) -> None:
        if access_logger.isEnabledFor(logging.INFO):
            line = jsonio.dumps(self.to_dict()).decode()
            if not _Sink.write(line):
                access_logger.info(line)
        ctx = CURRENT_REQUEST.get()
        if ctx is not None and ctx.observe is not None:
            ctx.observe(self)


class _DropAborted(logging.Filter):
    """uvicorn logs a traceback for any exception raised after a response started; an
    upstream that died mid-body is an expected fault, already logged in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, UpstreamAborted)


def configure_logging(access_log: bool = True) -> None:
    """Access lines as bare JSON on stderr; idempotent (each worker calls it)."""
    flush_access_log()  # lines for the handler this one replaces
    handler = _Handler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in (ACCESS_LOGGER, "bridge_rules.proxy"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
    access_logger.setLevel(logging.INFO if access_log else logging.WARNING)
    _Sink.handler = handler
    uv = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _DropAborted) for f in uv.filters):
        uv.addFilter(_DropAborted())
