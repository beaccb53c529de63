"""Giving memory back to the system after large requests (glibc's ``malloc_trim``).

A burst of large requests (200 clients sending 1 MB each) takes a worker to ~270 MB,
which is the bodies in flight and cannot be avoided by a proxy that rewrites them. When the
burst is over, glibc keeps almost all of that heap: the worker measured 268 MB after such a
burst, and 74 MB after the same burst followed by ``malloc_trim(0)`` and small traffic
(benchmarks/README.md). :class:`HeapTrimmer` calls ``malloc_trim(0)`` once large requests
have stopped for :data:`QUIET_SECONDS`: each large request that finishes pushes the trim
back, so sustained large traffic is never interrupted, and the trim runs in a worker thread
(ctypes releases the GIL; 30 ms for a 270 MB heap).

Only on glibc; elsewhere, or with ``BRIDGE_RULES_MALLOC_TRIM=0``, it does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from bridge_rules.gcpause import switched_on

ENV = "BRIDGE_RULES_MALLOC_TRIM"
"""Set to ``0`` (or ``off``/``false``/``no``) to never trim."""
LARGE_BYTES = 256 * 1024
"""A request whose body in or out is at least this large counts as large."""
QUIET_SECONDS = 1.0
"""How long after the last large request the trim runs."""


def glibc_trim() -> Callable[[], object] | None:
    """``malloc_trim(0)`` of the C library this process runs on, or None where there is none."""
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the symbols already loaded: libc's, on Linux
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to call
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


def trim_enabled(env: Mapping[str, str]) -> bool:
    return switched_on(env, ENV)


class HeapTrimmer:
    """Trims the heap once large requests have stopped for ``quiet`` seconds."""

    def __init__(
        self,
        trim: Callable[[], object] | None,
        quiet: float = QUIET_SECONDS,
        large: int = LARGE_BYTES,
    ) -> None:
        self.trim = trim
        self.quiet = quiet
        self.large = large
        self.trims = 0  # trims run so far (for tests and curiosity)
        self._timer: asyncio.TimerHandle | None = None
        # Its own thread, made on the first trim: nothing is imported or created per request.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bridge-rules-trim")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HeapTrimmer:
        return cls(glibc_trim() if trim_enabled(os.environ if env is None else env) else None)

    def finished(self, bytes_in: int, bytes_out: int) -> None:
        """Note a finished request; called from the event loop, once per request."""
        if self.trim is None or (bytes_in < self.large and bytes_out < self.large):
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.quiet, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._pool.submit(self._run)

    def _run(self) -> None:
        assert self.trim is not None
        self.trim()
        self.trims += 1

    def close(self) -> None:
        """Cancel a pending trim and let the thread go (a running trim finishes)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pool.shutdown(wait=False)
