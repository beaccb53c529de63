"""Limits per client key that hold for the key as a whole, however many workers serve it.

A limit counted inside a worker would let a key through N times over with ``--workers N``
(nothing that can change an answer lives in a worker), so the counts live in one small
file that ``serve`` makes before the workers start (its path in :data:`ENV_VAR`) and each
worker maps into memory. Every update holds an exclusive ``fcntl`` lock on the file for a
few hundred nanoseconds of arithmetic: measured in tests/proxy/test_key_limits.py, an
acquire and release pair costs a few microseconds, against the ~1 ms a proxied request
costs. Without the variable (one worker, or the app built in a test) the counts live in
anonymous memory of this process.

Each key has a slot, found by the SHA-256 of its name: requests in flight, Claude Code
sessions in flight, and a token bucket of ``per_minute`` tokens refilled evenly over the
minute (as nginx's ``limit_req`` leaks its bucket). A worker that dies mid-request leaves
its in-flight counts behind until ``serve`` restarts (its file is made anew then).
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import mmap
import os
import struct
import threading
import time
from dataclasses import dataclass

from bridge_rules.proxy.keyfile import MAX_KEYS, Limits

ENV_VAR = "BRIDGE_RULES_LIMITS_FILE"
SLOTS = MAX_KEYS * 2  # a half-empty table: probes stay short
_SLOT = struct.Struct("<Qiidd")  # name id, in flight, sessions, tokens, last refill
SIZE = SLOTS * _SLOT.size
CONCURRENT_RETRY = 1
"""Seconds a client refused for requests at once is told to wait (no count says when)."""


@dataclass(frozen=True)
class Refusal:
    """Which limit refused a request, and the whole seconds to wait (``retry-after``)."""

    limit: str
    retry_after: int
    message: str


def make_file(directory: str) -> str:
    """A zeroed counter file in ``directory`` for the workers to share."""
    path = os.path.join(directory, "limits")
    with open(path, "wb") as out:
        out.truncate(SIZE)
    return path


class Counters:
    """The counts of every key, in a file shared by the workers, or in this process."""

    def __init__(self, path: str | None = None) -> None:
        self._thread = threading.Lock()
        self._fd: int | None = None
        if path is None:
            self._map = mmap.mmap(-1, SIZE)
        else:
            self._fd = os.open(path, os.O_RDWR)
            self._map = mmap.mmap(self._fd, SIZE)
        self._slots: dict[str, int] = {}

    @classmethod
    def from_env(cls) -> Counters:
        return cls(os.environ.get(ENV_VAR) or None)

    def close(self) -> None:
        self._map.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _locked(self) -> _Lock:
        return _Lock(self._thread, self._fd)

    def _slot(self, name: str) -> int:
        """The byte offset of ``name``'s slot, claimed on first use (under the lock)."""
        known = self._slots.get(name)
        if known is not None:
            return known
        offset = 0
        ident = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little") or 1
        index = ident % SLOTS
        for _ in range(SLOTS):
            offset = index * _SLOT.size
            found = _SLOT.unpack_from(self._map, offset)[0]
            if found == ident:
                break
            if found == 0:
                _SLOT.pack_into(self._map, offset, ident, 0, 0, math.nan, 0.0)
                break
            index = (index + 1) % SLOTS
        self._slots[name] = offset
        return offset

    def acquire(self, name: str, limits: Limits, session: bool) -> Refusal | None:
        """Count one request of key ``name`` in, or say which limit refuses it (nothing
        counted then). A request let in must be :meth:`release`\\ d exactly once."""
        with self._locked():
            offset = self._slot(name)
            ident, flight, sessions, tokens, stamp = _SLOT.unpack_from(self._map, offset)
            if limits.concurrent and flight >= limits.concurrent:
                return Refusal(
                    "concurrent",
                    CONCURRENT_RETRY,
                    f"this key may have {limits.concurrent} requests at once; wait for one "
                    "to finish",
                )
            if session and limits.sessions and sessions >= limits.sessions:
                return Refusal(
                    "sessions",
                    CONCURRENT_RETRY,
                    f"this key may hold {limits.sessions} Claude Code sessions at once",
                )
            if limits.per_minute:
                now = time.monotonic()  # one clock for every process of the host
                cap = float(limits.per_minute)
                rate = cap / 60.0
                if math.isnan(tokens):
                    tokens = cap
                else:
                    tokens = min(cap, tokens + max(0.0, now - stamp) * rate)
                if tokens < 1.0:
                    _SLOT.pack_into(self._map, offset, ident, flight, sessions, tokens, now)
                    wait = max(1, math.ceil((1.0 - tokens) / rate))
                    return Refusal(
                        "per_minute",
                        wait,
                        f"this key may send {limits.per_minute} requests a minute",
                    )
                tokens, stamp = tokens - 1.0, now
            _SLOT.pack_into(
                self._map, offset, ident, flight + 1, sessions + int(session), tokens, stamp
            )
        return None

    def release(self, name: str, session: bool) -> None:
        with self._locked():
            offset = self._slot(name)
            ident, flight, sessions, tokens, stamp = _SLOT.unpack_from(self._map, offset)
            flight, sessions = max(0, flight - 1), max(0, sessions - int(session))
            _SLOT.pack_into(self._map, offset, ident, flight, sessions, tokens, stamp)

    def in_flight(self, name: str) -> tuple[int, int]:
        """(requests, sessions) of ``name`` now in flight, for tests and ``/metrics``."""
        with self._locked():
            _, flight, sessions, _, _ = _SLOT.unpack_from(self._map, self._slot(name))
        return flight, sessions


class _Lock:
    """This process's threads, then the other workers (``fcntl`` locks are per process)."""

    def __init__(self, thread: threading.Lock, fd: int | None) -> None:
        self._thread, self._fd = thread, fd

    def __enter__(self) -> None:
        self._thread.acquire()
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *_: object) -> None:
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)
        self._thread.release()
