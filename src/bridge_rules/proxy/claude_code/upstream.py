"""The Claude Code CLI as the proxy's upstream: the step that replaces the HTTP forward.

:class:`ClaudeCodeUpstream` answers an :class:`~bridge_rules.proxy.forward.Exchange` whose
body the rules already rewrote: it plans the CLI run (:mod:`.plan`), runs it
(:mod:`.session`) and sends the answer back through the same turn, so the client gets
its own tool names back exactly as from an HTTP upstream. A request over
``max_sessions`` concurrent CLI processes gets a 429 with ``retry-after`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any

from bridge_rules import jsonio
from bridge_rules.proxy.claude_code.credentials import missing
from bridge_rules.proxy.claude_code.events import Event, assemble, sse
from bridge_rules.proxy.claude_code.offered import Offered, ask_cli
from bridge_rules.proxy.claude_code.plan import CliPlan, PlanError, plan
from bridge_rules.proxy.claude_code.session import Bounds, CliFailed, Policy, Session
from bridge_rules.proxy.claude_code.spares import Spares
from bridge_rules.proxy.errors import ProxyError, error_body, sse_error_event
from bridge_rules.proxy.forward import Exchange, forward
from bridge_rules.proxy.reply import JSON
from bridge_rules.proxy.upstream import Upstream as Pool

log = logging.getLogger("bridge_rules.proxy.claude_code")
SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
RETRY_AFTER = b"1"


@dataclass(frozen=True)
class CliSettings:
    claude_path: str
    max_sessions: int
    timeout: float
    policy: Policy
    bounds: Bounds = field(default_factory=Bounds)


async def _timed(
    events: AsyncIterator[Event], ex: Exchange, first: Callable[[], None]
) -> AsyncIterator[Event]:
    """``events``, noting on the access line when the first came (the CLI's start-up and
    the model's first event), as an HTTP upstream's response headers are noted; ``first``
    is called then (the CLI has done its start-up work: a spare may start beside it)."""
    sent = time.perf_counter()
    async for event in events:
        if ex.reply.record.upstream_ms is None:
            ex.reply.record.upstream_ms = round((time.perf_counter() - sent) * 1000, 3)
            ex.reply.record.upstream_status = 200
            first()
        yield event


class ClaudeCodeUpstream:
    """The ``claude-code`` kind's upstream (:class:`~bridge_rules.proxy.kinds.Upstream`):
    the CLI answers the Messages requests the rules rewrote; any other request goes
    through ``pool`` as ``serve`` forwards it."""

    models_from_rules = True  # the CLI has no Models API: the rules list the models

    def __init__(
        self,
        settings: CliSettings,
        pool: Pool | None = None,
        spares: Spares | None = None,
        prepare_history: bool = False,
    ) -> None:
        self.settings = settings
        self.pool = pool
        self.spares = spares if spares is not None else Spares(0, 1.0)
        self.prepare_history = prepare_history
        self.active = 0
        self._offered: tuple[list[Offered] | None] | None = None
        self._offered_lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()

    def _after(self, session: Session, events: AsyncGenerator[Event, None]) -> None:
        async def close() -> None:
            await session.close()
            with contextlib.suppress(RuntimeError):
                await events.aclose()

        task = asyncio.get_running_loop().create_task(close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def offered(self) -> list[Offered] | None:
        """The models this CLI version offers, asked once (``GET /v1/models``)."""
        async with self._offered_lock:
            if self._offered is None:
                self._offered = (await ask_cli(self.settings.claude_path),)
        return self._offered[0]

    def prepare(self) -> None:
        if self.pool is not None:
            self.pool.session()

    def send(self, ex: Exchange, rewritten: bool) -> Coroutine[Any, Any, None]:
        if rewritten or self.pool is None:
            return self.answer(ex)
        return forward(self.pool, ex)

    def holds_session(self, rewritten: bool) -> bool:
        return rewritten  # what the CLI answers; the rest goes through the pool

    async def readiness(self) -> str | None:
        return self.problem()

    def drain(self) -> None:
        """The worker drains: its spares end now, and requests still answered leave none."""
        self.spares.stop()

    async def aclose(self) -> None:
        """End the spares and wait for the sessions still being cleaned up (the server is
        stopping)."""
        await self.spares.aclose()
        if self.pool is not None:
            await self.pool.aclose()
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=5)

    def problem(self) -> str | None:
        """Why the CLI cannot be started (for ``/readyz``), or None."""
        path = self.settings.claude_path
        found = shutil.which(path)
        if found is None:
            return f"the Claude Code CLI was not found at {path}"
        return missing(os.environ)

    async def answer(self, ex: Exchange) -> None:
        """Answer ``/v1/messages`` or ``/v1/messages/count_tokens`` with the CLI."""
        if self.active >= self.settings.max_sessions:
            message = (
                f"all {self.settings.max_sessions} Claude Code sessions are busy "
                "(bridge-rules serve --max-sessions); retry shortly"
            )
            ex.reply.record.error = "sessions_full"
            headers = [(b"content-type", JSON), (b"retry-after", RETRY_AFTER)]
            await ex.reply.full(429, headers, error_body(429, message))
            return
        unready = missing(os.environ)
        if unready is not None:  # the CLI would only say "Please run /login"
            ex.reply.record.error = "no_credentials"
            raise ProxyError(503, unready)
        bounds = self.settings.bounds
        if len(ex.body) > bounds.bytes:
            raise ProxyError(
                413,
                f"the request (rewritten for the wire) is {len(ex.body)} bytes; the Claude Code "
                "upstream takes at most "
                f"{bounds.bytes} (bridge-rules serve --claude-max-bytes)",
            )
        try:
            body = jsonio.loads(ex.body)
            cli_plan = plan(body if isinstance(body, dict) else {})
        except (jsonio.JSONDecodeError, PlanError) as exc:
            raise ProxyError(400, f"cannot send this request to Claude Code: {exc}") from None
        if len(cli_plan.lines) > bounds.turns:
            raise ProxyError(
                413,
                f"the conversation has {len(cli_plan.lines)} messages; the Claude Code upstream "
                f"replays at most {bounds.turns} (bridge-rules serve --claude-max-turns)",
            )
        counting = ex.scope["path"].endswith("/count_tokens")
        if counting:
            cli_plan.stream = False
            cli_plan.env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = "1"
        self.active += 1
        try:
            session = await self._session(cli_plan, ex)
            events = session.events()

            def refill() -> None:
                if not counting:  # a spare of the shape this request had, for the next
                    history = cli_plan.lines[:-1] if self.prepare_history else []
                    self.spares.refill(lambda: self._new(replace(cli_plan, lines=[])), history)

            try:
                answer = _timed(events, ex, refill)
                if cli_plan.stream:
                    await self._stream(ex, answer)
                else:
                    await self._json(ex, answer, counting)
            finally:
                # The process ends with the request, whatever ended it (a client that left
                # may have stopped the generator mid-step, where aclose() cannot run it).
                # Nothing is awaited once the answer is out: reaping it, the SDK's tasks and
                # the scratch directory are cleaned up after.
                session.process.kill()
                self._after(session, events)
                if session.run.denied:
                    ex.debug["claude_code_denied"] = list(session.run.denied)
        except CliFailed as exc:
            log.error("claude-code upstream failed on %s: %s", ex.scope["path"], exc.message)
            raise ProxyError(exc.status, exc.message) from None
        except FileNotFoundError:
            message = f"the Claude Code CLI was not found at {self.settings.claude_path}"
            log.error("claude-code upstream: %s", message)
            raise ProxyError(503, message + " (bridge-rules serve --claude-path)") from None
        except PermissionError:
            message = f"the Claude Code CLI at {self.settings.claude_path} cannot be run"
            log.error("claude-code upstream: %s", message)
            raise ProxyError(503, message) from None
        finally:
            self.active -= 1

    def _new(self, cli_plan: CliPlan) -> Session:
        """The session today's path starts for ``cli_plan``."""
        settings = self.settings
        return Session(
            cli_plan,
            settings.claude_path,
            settings.policy,
            os.environ,
            settings.timeout,
            max_time=settings.bounds.time,
        )

    async def _session(self, cli_plan: CliPlan, ex: Exchange) -> Session:
        """A started spare of this request's shape if there is one (its start waited for
        if under way), else the session of today's path, not yet started."""
        session = self._new(cli_plan)
        if self.spares.limit < 1:
            return session
        spare = self.spares.take(session.shape(), cli_plan.lines)
        if spare is None:
            return session
        try:
            ready = await spare.ready()
        except BaseException:  # the client left while it started: it goes too
            self.spares.end(spare)
            session.discard()
            raise
        if not ready:  # it failed: the request meets the fault itself
            self.spares.end(spare)
            return session
        session.discard()
        spare.session.adopt(cli_plan, self.settings.bounds.time)
        ex.reply.record.spare = spare.history[0] + 1  # 1: a bare spare; more: a prepared one
        return spare.session

    async def _json(self, ex: Exchange, events: AsyncIterator[Event], counting: bool) -> None:
        message = assemble([event async for event in events])
        if counting:
            usage = message.get("usage") or {}
            tokens = sum(
                int(usage.get(k) or 0)
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
            await ex.reply.full(
                200, [(b"content-type", JSON)], jsonio.dumps({"input_tokens": tokens})
            )
            return
        if ex.turn is not None:
            message = ex.turn.message(message)
            ex.reply.record.noted(ex.turn.report)
        await ex.reply.full(200, [(b"content-type", JSON)], jsonio.dumps(message))

    async def _stream(self, ex: Exchange, events: AsyncIterator[Event]) -> None:
        first = await events.__anext__()  # a failure before this is a plain error reply

        async def chunks() -> AsyncIterator[bytes]:
            yield sse(first)
            async for event in events:
                yield sse(event)

        body = chunks() if ex.turn is None else ex.turn.stream_async(chunks())
        await ex.reply.start(200, SSE_HEADERS)
        try:
            async for chunk in body:
                await ex.reply.chunk(chunk)
        except CliFailed as exc:
            log.error("claude-code upstream failed mid-stream: %s", exc.message)
            ex.reply.record.error = "upstream_stream_error"
            await ex.reply.chunk(sse_error_event(exc.message))
        finally:
            if ex.turn is not None:
                ex.reply.record.noted(ex.turn.report)
        await ex.reply.finish()
