"""``serve``'s life as a process: one start line, a drained stop, a reload on SIGHUP.

What an operator's tool does, as nginx and gunicorn do it:

- **Start**: one log line, once the socket listens, with the address, the rules and their
  hash, the upstream and the worker count.
- **SIGTERM, SIGINT**: ``/readyz`` answers 503 at once (the balancer stops sending), stop
  accepting (with ``--workers N`` the supervisor closes its copy of the listening socket at
  once, so a late connection is refused rather than left in a backlog nobody reads), let
  in-flight requests finish for up to the grace period, and exit 0. (uvicorn's own server
  re-raises the signal after its graceful shutdown, so a drained stop exited 143; ours
  does not.) A second SIGINT (Ctrl-C twice) quits at once; with ``--workers N`` only the
  supervisor decides that, since a worker also gets its terminal's Ctrl-C.
- **SIGHUP**: reload the rules. With one worker the new :class:`~bridge_rules.Engine` is
  built on a thread while requests go on, then swapped in with one assignment: a request
  holds the ``Turn`` of the engine it started with, so in-flight requests finish on the old
  rules. Rules that do not load leave the old ones in place and the located errors are
  logged. With ``--workers N`` the supervisor checks the rules first (the same way) and only
  if they load passes SIGHUP on to every worker, which reloads in place as one worker does
  (``proxy.worker``): no restart, so every worker has the new rules within one build of
  them (a rolling restart took over 3 s for two). ``/readyz`` shows each worker's hash.

Every line here is a JSON object with an ``event``, as the access lines are.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from bridge_rules import jsonio
from bridge_rules.diagnostics import RulesError
from bridge_rules.proxy.app import ProxyApp, build_engine
from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.keyfile import KeysError
from bridge_rules.proxy.keyguard import check_policies, policies_of
from bridge_rules.proxy.keys import KeyRing

log = logging.getLogger("bridge_rules.proxy.lifecycle")
log.setLevel(logging.INFO)

DRAIN_SIGNALS = (signal.SIGINT, signal.SIGTERM)
WORKER_WATCH = "BRIDGE_RULES_WORKER_WATCH"
"""``--watch-interval`` passed to ``--workers N`` processes, which each watch for themselves."""


def event(name: str, **fields: Any) -> None:
    """One JSON line on the proxy's log: ``{"event": name, ...}``."""
    log.info(jsonio.dumps({"event": name, **fields}).decode())


def announce(host: str, port: int, config: ProxyConfig, rules_hash: str, workers: int) -> None:
    """The start line: where it listens, which rules (and their hash), where it forwards."""
    shown = f"[{host}]" if ":" in host else host
    event(
        "serve.start",
        listen=f"http://{shown}:{port}",
        rules=list(config.rules) or ["default"],
        rules_hash=rules_hash,
        upstream=config.upstream,
        workers=workers,
    )


def _lines(exc: Exception) -> list[str]:
    found = getattr(exc, "lines", None) or [d.line() for d in getattr(exc, "diagnostics", [])]
    return list(found) or [str(exc)]


def _failed(exc: Exception, previous: str) -> None:
    event("serve.reload_failed", kept_rules_hash=previous, errors=_lines(exc))


class OneWorker(uvicorn.Server):
    """uvicorn's server with the signals above; ``proxy`` is the app whose rules SIGHUP
    reloads, ``started`` logs the start line once the socket listens, given the port it
    listens on (the one the system chose for ``--port 0``)."""

    def __init__(
        self, config: uvicorn.Config, proxy: ProxyApp, started: Callable[[int], None]
    ) -> None:
        super().__init__(config)
        self.proxy = proxy
        self._started = started
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reloads: set[asyncio.Task[None]] = set()
        self._reloading = asyncio.Lock()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            self._started(self._bound_port())

    def _bound_port(self) -> int:
        for server in self.servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return self.config.port

    @contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in DRAIN_SIGNALS}
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, self._hangup)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        # Unlike uvicorn, the signal is not raised again: a drained stop is a clean exit.

    def _hangup(self, _signum: int, _frame: object) -> None:
        if self._loop is not None and not self.should_exit:
            self._loop.call_soon_threadsafe(self._start_reload)

    def _start_reload(self) -> None:
        task = asyncio.get_running_loop().create_task(self.reload())
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    async def reload(self) -> None:
        """Build the rules again off the event loop, then swap them in; one at a time."""
        async with self._reloading:
            await reload_rules(self.proxy)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.proxy.draining = True  # /readyz answers 503 from now on
        super().handle_exit(sig, frame)


async def reload_rules(proxy: ProxyApp) -> None:
    """Build ``proxy``'s rules again off the event loop, then swap them in with one
    assignment: a request holds the ``Turn`` of the engine it started with, so requests in
    flight finish on the old rules. Rules that fail leave the old ones and are logged."""
    previous = proxy.rules_hash
    loop = asyncio.get_running_loop()
    router = proxy.router
    if router is not None:  # each route on its own: a failing one keeps its old rules
        failed = router.apply(await loop.run_in_executor(None, router.rebuild))
        if failed:
            event("serve.route_reload_failed", routes=failed)
    keys = proxy.keys
    if keys is not None:  # the keys file is read again with the rules
        try:
            keys.reload()
            event("serve.keys_reload", keys=len(keys.ring.specs))
        except (KeysError, ValueError) as exc:
            event("serve.keys_reload_failed", errors=_lines(exc))
    try:
        engine = await loop.run_in_executor(None, build_engine, proxy.config)
        # the bindings directory read again over the new rules
        proxy.use_rules(engine)
    except (RulesError, ValueError, OSError) as exc:
        _failed(exc, previous)
        return
    event("serve.reload", rules_hash=proxy.rules_hash, previous=previous, pid=os.getpid())


class Supervisor(Multiprocess):
    """uvicorn's supervisor of ``--workers N``, whose SIGHUP first checks that the rules
    load (``check`` returns their hash, or raises), then passes SIGHUP to every worker.
    On SIGTERM/SIGINT it closes its copy of the listening socket first: the workers close
    theirs as they drain, so a connection made during the drain is refused by the system
    rather than left unanswered in a backlog no worker reads. Every worker is told to
    drain with SIGTERM whichever of the two came: uvicorn's server takes a SIGINT that
    follows another stop signal as "quit now", and a worker also gets its terminal's
    Ctrl-C and uvicorn's own SIGTERM, in any order. A second SIGINT to the supervisor
    (Ctrl-C twice) is that "quit now": the workers are killed, requests in flight cut."""

    def __init__(
        self,
        config: uvicorn.Config,
        sockets: list[socket.socket],
        check: Callable[[], str],
        started: Callable[[], None],
    ) -> None:
        super().__init__(config, sockets)
        self.check = check
        self.started = started
        self.rules_hash = ""
        for sig in DRAIN_SIGNALS:  # uvicorn's queue is read every 0.5 s: act on these now
            signal.signal(sig, self._drain_now)

    def _drain_now(self, sig: int, _frame: object) -> None:
        if self.should_exit.is_set():
            if sig == signal.SIGINT:
                self._signal_workers(signal.SIGKILL)
            return
        self._stop_listening()
        self._signal_workers(signal.SIGTERM)  # each worker's /readyz turns 503 and it drains
        self.should_exit.set()

    def _signal_workers(self, sig: signal.Signals) -> None:
        for process in self.processes:
            if process.pid is not None and process.exitcode is None:
                os.kill(process.pid, sig)

    def handle_hup(self) -> None:
        try:
            rules_hash = self.check()
        except (RulesError, KeysError, ValueError, OSError) as exc:
            _failed(exc, self.rules_hash)
            return
        # Each worker reloads its own rules in place (worker_app): no restart, so every
        # worker answers with the new hash within one rules build of the signal.
        for process in self.processes:
            # only a worker past its start has the handler: SIGHUP would end one starting
            # (which reads the rules as they are now anyway)
            if process.pid is not None and process.is_ready(timeout=1):
                os.kill(process.pid, signal.SIGHUP)
        event("serve.reload", rules_hash=rules_hash, previous=self.rules_hash)
        self.rules_hash = rules_hash

    def _stop_listening(self) -> None:
        for sock in self.sockets:
            sock.close()

    def init_processes(self) -> None:
        # The workers start with SIGINT ignored (an ignored signal stays ignored through fork
        # and exec; a blocked one does not reach a spawned Python) until uvicorn's handler,
        # then the drain, is in place: a terminal's Ctrl-C in a worker's first moments
        # stopped it with a KeyboardInterrupt traceback. The supervisor ignores it only for
        # the milliseconds of the starts, before the start line: a Ctrl-C after the line
        # is always heard.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            super().init_processes()
        finally:
            signal.signal(signal.SIGINT, previous)
        self.started()


def run_one(config: uvicorn.Config, proxy: ProxyApp, started: Callable[[int], None]) -> bool:
    """Serve with one worker in this process until SIGTERM or SIGINT; whether it started
    (uvicorn logs why it did not, e.g. a port taken since ``serve`` checked it)."""
    server = OneWorker(config, proxy, started)
    server.run()
    return server.started


def run_many(config: uvicorn.Config, proxy_config: ProxyConfig, rules_hash: str) -> None:
    """Serve with ``config.workers`` worker processes under one supervisor, as
    ``uvicorn.run`` does, with the supervisor above."""

    def check() -> str:
        from bridge_rules.engine import load

        routes = {  # a worker could not start without them
            route.name: load(list(route.rules or proxy_config.rules) or None).runtime
            for route in proxy_config.routes
        }
        served = load(list(proxy_config.rules) or None).runtime
        if proxy_config.keys:  # nor without its keys: a bad file keeps the old workers
            ring = KeyRing.load(proxy_config.keys)
            check_policies(policies_of(ring), routes, served)
        return served.rules.digest

    sock = config.bind_socket()
    # Listening from here on, before any worker runs: the start line, written once the
    # workers are launched (not yet ready), is true when it is read, and a client that
    # connects at once waits in the backlog for a worker.
    sock.listen(config.backlog)
    port = int(sock.getsockname()[1])  # the system's choice for --port 0
    supervisor = Supervisor(
        config,
        [sock],
        check,
        lambda: announce(config.host, port, proxy_config, rules_hash, config.workers),
    )
    supervisor.rules_hash = rules_hash
    try:
        supervisor.run()
    finally:
        sock.close()
