"""Spare CLI processes, started before the request that needs them.

A CLI takes about a quarter of a second to start and initialise, before the request's
conversation is written to it. A spare is a :class:`~.session.Session` started with
everything a request of one *shape* needs (model, system prompt, tools, settings: all
:func:`~.plan.plan` derives from a request except its messages) and nothing else. It is
keyed by :meth:`~.session.Session.shape`, the hash of the very command line, environment
and initialisation that the request would start its own process with, so a request that
takes one gets, by construction, the process it would have started; a request that finds
none starts its own, as without spares.

What a spare holds is the shape, the client's configuration sent with every request of a
session; never a conversation: the messages are written to it only once a request has
taken it, and it ends with that request like any session.

With ``--claude-prepare`` a spare also holds a conversation, by choice of the operator:
after a request, the spare of its shape gets that request's history replayed (every
message but the last user turn), so the conversation's next request, whose messages start
with the same lines, writes only what is new. Those lines are the client's data, kept in
the worker after the request ended, until the spare is taken, expires or is pushed out.

The pool is a cache of one worker: bounded (``--claude-spares``), each spare ended
``ttl`` seconds after it was started if no request took it, all of them ended when the
worker stops, and started in an empty :mod:`contextvars` context, so nothing of the
request that asked for it lives on in its tasks.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge_rules.proxy.claude_code.session import Session

log = logging.getLogger("bridge_rules.proxy.claude_code")


def digest(lines: list[dict[str, Any]]) -> str:
    """Which stream-json lines, as a hash (a prepared spare's history)."""
    text = json.dumps(lines, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Spare:
    key: str
    session: Session
    started: asyncio.Task[bool]
    history: tuple[int, str] = (0, "")
    """The lines replayed into it ahead: how many, and their :func:`digest`."""
    expiry: asyncio.TimerHandle | None = None

    def continues(self, lines: list[dict[str, Any]]) -> bool:
        """Whether a request of ``lines`` starts with this spare's history (and has a
        last turn of its own to add)."""
        count, held = self.history
        return count == 0 or (count < len(lines) and digest(lines[:count]) == held)

    async def ready(self) -> bool:
        """Whether it started and still runs (waits for a start under way)."""
        return await asyncio.shield(self.started) and self.session.alive()


class Spares:
    """One worker's spares, at most ``limit`` (0: none), oldest first."""

    def __init__(self, limit: int, ttl: float) -> None:
        self.limit = limit
        self.ttl = ttl
        self._spares: list[Spare] = []
        self._ending: set[asyncio.Task[None]] = set()
        self._closed = False

    def __len__(self) -> int:
        return len(self._spares)

    def take(self, key: str, lines: list[dict[str, Any]]) -> Spare | None:
        """The spare of shape ``key`` whose history the request's ``lines`` continue, the
        longest such history first, now the caller's; None when there is none."""
        fits = [s for s in self._spares if s.key == key and s.continues(lines)]
        if not fits:
            return None
        spare = max(fits, key=lambda s: s.history[0])
        self._spares.remove(spare)
        if spare.expiry is not None:
            spare.expiry.cancel()
        return spare

    def refill(self, make: Callable[[], Session], history: list[dict[str, Any]]) -> None:
        """Start a spare of the shape ``make`` builds, ``history`` replayed into it (none:
        a bare spare); when the pool is full, the oldest spare unlike it makes room, and
        with none the pool stays as it is."""
        if self.limit < 1 or self._closed:
            return
        session = make()
        key = session.shape()
        held = (len(history), digest(history) if history else "")
        if len(self._spares) >= self.limit:
            others = [s for s in self._spares if (s.key, s.history) != (key, held)]
            if not others:
                session.discard()
                return
            self._drop(others[0])
        loop = asyncio.get_running_loop()
        # An empty context: the SDK's reader task inherits it, and must not keep the
        # request that asked for this spare (its id, its state) alive.
        work = session.prepare(history) if history else session.start()
        started = contextvars.Context().run(loop.create_task, work)
        spare = Spare(key, session, started, held)
        spare.expiry = loop.call_later(self.ttl, self._expire, spare)
        self._spares.append(spare)

    def _expire(self, spare: Spare) -> None:
        if spare in self._spares:
            log.info("claude-code: a spare CLI expired unused")
            self._drop(spare)

    def _drop(self, spare: Spare) -> None:
        self._spares.remove(spare)
        self.end(spare)

    def end(self, spare: Spare) -> None:
        """Stop a spare's CLI and remove its scratch directory, in the background."""
        if spare.expiry is not None:
            spare.expiry.cancel()
        spare.session.process.kill()

        async def end() -> None:
            if not spare.started.done():
                spare.started.cancel()
            await asyncio.gather(spare.started, return_exceptions=True)
            await spare.session.close()

        task = contextvars.Context().run(asyncio.get_running_loop().create_task, end())
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    def stop(self) -> None:
        """End every spare and start no more (the worker drains)."""
        self._closed = True
        for spare in list(self._spares):
            self._drop(spare)

    async def aclose(self) -> None:
        """The worker stops: :meth:`stop`, and wait for the spares to be gone."""
        self.stop()
        if self._ending:
            await asyncio.wait(set(self._ending), timeout=5)
