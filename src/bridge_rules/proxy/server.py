"""Running the app under uvicorn, in one process or several (``--workers``).

The proxy keeps no state between requests, so workers (and replicas on other
hosts) need nothing shared to answer: each one rebuilds the app from the same
config, passed to the worker processes through the environment. Only the metric
values are shared, through one directory (prometheus-client's multiprocess mode),
so that ``/metrics`` on any worker reports them all.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from bridge_rules.gcpause import tune_for_serving
from bridge_rules.proxy.app import ProxyApp
from bridge_rules.proxy.config import (
    DEFAULT_SHUTDOWN_GRACE,
    ENV_VAR,
    MULTIPROC_ENV,
    ProxyConfig,
)
from bridge_rules.proxy.guard import GuardedHttp, limit
from bridge_rules.proxy.lifecycle import WORKER_WATCH, announce, run_many, run_one
from bridge_rules.proxy.obs import configure_logging

UVICORN_OPTIONS: dict[str, Any] = {
    "access_log": False,  # ours is structured and says more
    "server_header": False,  # the upstream's own headers go back, not ours
    "date_header": False,
    "proxy_headers": False,  # the proxy never reads the client address; skip the middleware
    "lifespan": "on",
    "log_level": "warning",
    "http": GuardedHttp,  # uvicorn's httptools protocol with header and connection limits
}


def serve(
    config: ProxyConfig,
    app: Any,
    host: str,
    port: int,
    workers: int,
    *,
    proxy: ProxyApp,
    grace: float = DEFAULT_SHUTDOWN_GRACE,
    watch: float = 0.0,
) -> bool:
    """Serve ``app`` (``proxy``, wrapped by ``proxy.ops``) until SIGTERM or SIGINT, which
    drain in-flight requests for up to ``grace`` seconds; several workers share one
    listening socket. False when one worker could not start. Signals and the start line:
    :mod:`bridge_rules.proxy.lifecycle`."""
    configure_logging()
    if watch > 0 and workers > 1:  # each worker watches for itself (proxy.lifecycle)
        os.environ[WORKER_WATCH] = str(watch)
    elif watch > 0:  # --watch: a change to the rule files is a SIGHUP (proxy/watch.py)
        from bridge_rules.proxy.watch import watcher_of

        watcher_of(config, watch).start()
    options = {**UVICORN_OPTIONS, "timeout_graceful_shutdown": grace}
    if workers <= 1:
        tune_for_serving()
        uv_config = limit(uvicorn.Config(app, host=host, port=port, **options), config)
        return run_one(
            uv_config,
            proxy,
            lambda bound: announce(host, bound, config, proxy.rules_hash, workers=1),
        )
    os.environ[ENV_VAR] = config.to_env()
    with _shared_metrics(), _shared_limits(proxy):
        uv_config = uvicorn.Config(
            "bridge_rules.proxy.worker:worker_app",
            factory=True,
            workers=workers,
            host=host,
            port=port,
            **options,
        )
        run_many(uv_config, config, proxy.rules_hash)
    return True


@contextmanager
def _shared_limits(proxy: ProxyApp) -> Iterator[None]:
    """With client keys: one counter file for every worker (``proxy.limits``), so a key's
    limits hold for the key, not per worker; removed when the workers are gone."""
    if proxy.keys is None:
        yield
        return
    from bridge_rules.proxy.limits import ENV_VAR as LIMITS_ENV
    from bridge_rules.proxy.limits import make_file

    path = tempfile.mkdtemp(prefix="bridge-rules-limits-")
    os.environ[LIMITS_ENV] = make_file(path)
    try:
        yield
    finally:
        del os.environ[LIMITS_ENV]
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _shared_metrics() -> Iterator[None]:
    """One directory for every worker's metric values (prometheus-client's multiprocess
    mode), made before the workers start and removed when they are gone; one the operator
    set in ``PROMETHEUS_MULTIPROC_DIR`` is used as it is, and kept."""
    if os.environ.get(MULTIPROC_ENV):
        yield
        return
    path = tempfile.mkdtemp(prefix="bridge-rules-metrics-")
    os.environ[MULTIPROC_ENV] = path
    try:
        yield
    finally:
        del os.environ[MULTIPROC_ENV]
        shutil.rmtree(path, ignore_errors=True)
