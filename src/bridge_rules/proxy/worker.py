"""Each ``--workers N`` process's app: the proxy app that reloads its own rules in place on
SIGHUP (from the supervisor, or its own ``--watch``), turns ``/readyz`` 503 as soon as
SIGTERM starts the drain, and drains when its supervisor dies (``proxy.parentdeath``).
The supervisor and the signals' meaning are in :mod:`bridge_rules.proxy.lifecycle`."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from typing import Any

from bridge_rules.proxy.app import ProxyApp, app_from_env
from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.lifecycle import DRAIN_SIGNALS, WORKER_WATCH, reload_rules
from bridge_rules.proxy.ops import OpsApp
from bridge_rules.proxy.parentdeath import die_with_parent


def worker_app() -> OpsApp:
    """Factory of each ``--workers N`` process: the app of :func:`app_from_env`, which
    reloads its own rules in place on SIGHUP (sent by the supervisor), as one worker does,
    and whose ``/readyz`` turns 503 as soon as SIGTERM starts the drain. It drains too when
    the supervisor dies (``proxy.parentdeath``)."""
    die_with_parent()
    watch = float(os.environ.get(WORKER_WATCH, "0"))
    watcher = None
    if watch > 0:  # serve --watch: primed before the rules are read
        from bridge_rules.proxy.watch import watcher_of

        watcher = watcher_of(ProxyConfig.from_env(), watch).prime()
    app = app_from_env()
    proxy = app.app
    loop = asyncio.get_running_loop()  # uvicorn calls the factory inside its loop
    lock = asyncio.Lock()
    tasks: set[asyncio.Task[None]] = set()

    async def one_at_a_time() -> None:
        async with lock:
            await reload_rules(proxy)

    def hangup() -> None:
        task = loop.create_task(one_at_a_time())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    loop.add_signal_handler(signal.SIGHUP, hangup)
    if watcher is not None:
        watcher.start()  # a change is a SIGHUP to this worker
    # uvicorn's handler of SIGTERM/SIGINT is installed before the factory runs: wrap it
    for sig in DRAIN_SIGNALS:
        drain = signal.getsignal(sig)
        if callable(drain):
            signal.signal(sig, _draining(proxy, drain))
    return app


def _draining(proxy: ProxyApp, then: Callable[[int, Any], Any]) -> Callable[[int, Any], None]:
    """SIGTERM and SIGINT both start the drain, and neither ends it: uvicorn's server takes
    a SIGINT after a stop signal as "quit now", but a worker gets its terminal's Ctrl-C as
    well as the supervisor's SIGTERM and uvicorn's own, in any order (Python can even run
    one handler inside another). Quitting at once is the supervisor's call
    (``lifecycle.Supervisor``)."""

    def handler(sig: int, frame: Any) -> None:
        proxy.draining = True
        then(signal.SIGTERM, frame)

    return handler
