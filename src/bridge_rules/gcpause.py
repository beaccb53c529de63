"""Keep Python's cyclic garbage collector out of one request's hot path.

Parsing a 1 MB request allocates hundreds of thousands of containers; each
allocation burst triggers generational collections that walk everything still
alive, including the big tree being built. None of it is cyclic garbage (a
parsed request is a tree, freed by reference counting), so that walking is pure
cost: 27% of the 1 MB dense case and three times the parse itself at 10 MB.

Two tools, both process-wide because the collector is:

* :func:`paused` stops the collector for the duration of a ``with`` block. It
  is reentrant and thread-aware: a shared counter keeps collection off while
  *any* thread is inside a paused block and turns it back on when the last one
  leaves, and only if this module turned it off (a program that disabled the
  collector itself keeps it disabled). Trade-off: while requests overlap
  without a gap the collector does not run at all, so cyclic garbage made
  meanwhile waits for the next gap (it is collected then; reference-counted
  garbage is freed at once as usual). A server that is never idle should
  leave it off (``BRIDGE_RULES_GC_PAUSE=0``) or collect on a timer.
* :func:`freeze_loaded` moves everything alive now (the compiled rules,
  imported modules) into the collector's permanent generation, so later
  collections stop walking it. Call it once after loading, in a long-running
  process; it is not done on load because it also freezes whatever else the
  host program has allocated.

:func:`tune_for_serving` is what ``serve`` does once per worker: freeze, and set
the collector's thresholds to :data:`SERVING_THRESHOLDS`. A small request allocates a
few hundred containers that reference counting frees at once, but at Python's 700
they still set off a young collection every request or two, each walking the live
state of every request in flight: 5-6% of a worker's CPU at 50 clients, and next to
nothing at 10,000. The older generations are then collected after every young
collection and every 7th of those, so a full collection still comes every 70,000
net allocations, as with Python's (700, 10, 10): with (10,000, 10, 10) a 60 s soak
of faults and hang-ups (exceptions are cyclic garbage) grew the worker by 6-8 MB,
with these by 1-5 MB, with Python's by under 1 MB.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Mapping

ENV = "BRIDGE_RULES_GC_PAUSE"
"""Set to ``0`` (or ``off``/``false``/``no``) to leave the collector alone in the request
path, and its thresholds as they are."""
SERVING_THRESHOLDS = (10_000, 1, 7)
"""The collector's thresholds while serving (Python's default is (700, 10, 10))."""


class _State:
    """How many paused blocks are open, in every thread, and whether we turned gc off."""

    lock = threading.Lock()
    depth = 0
    we_disabled = False
    from_env: bool | None = None


def switched_on(env: Mapping[str, str], name: str) -> bool:
    """An on-by-default switch in ``env``: off when ``name`` is 0, off, false or no (any case).

    Shared with the proxy's other memory switch (``BRIDGE_RULES_MALLOC_TRIM``).
    """
    return env.get(name, "1").strip().lower() not in ("0", "off", "false", "no")


def pause_enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether request paths should pause collection (the ``BRIDGE_RULES_GC_PAUSE`` switch).

    ``env=None`` reads the process environment once, on first use: the answer is
    asked per request, and reading ``os.environ`` costs more than the pause saves
    on a mid-sized body.
    """
    if env is None:
        if _State.from_env is None:
            _State.from_env = pause_enabled(os.environ)
        return _State.from_env
    return switched_on(env, ENV)


class paused:  # lower case: used like a function, ``with paused():``
    """No cyclic collection while any thread is inside; ``enabled=False`` is a no-op.

    A class rather than a generator: it runs on every large request, and this
    costs a third of ``contextlib.contextmanager``'s overhead.
    """

    __slots__ = ("enabled",)

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        if self.enabled:
            state = _State
            with state.lock:
                if state.depth == 0 and gc.isenabled():
                    gc.disable()
                    state.we_disabled = True
                state.depth += 1

    def __exit__(self, *_exc: object) -> None:
        if self.enabled:
            state = _State
            with state.lock:
                state.depth -= 1
                if state.depth == 0 and state.we_disabled:
                    state.we_disabled = False
                    gc.enable()


PAUSE_FROM = 256 * 1024
"""Bodies smaller than this make too few objects for the collector to matter."""
_NOT_PAUSED = paused(False)


def paused_for(size: int) -> paused:
    """:class:`paused` for handling a body of ``size`` bytes: a no-op for a small one
    (entering and leaving a pause, with its lock, was ~2% of a busy worker's CPU on small
    requests), or when ``BRIDGE_RULES_GC_PAUSE`` is off."""
    if size >= PAUSE_FROM and pause_enabled():
        return paused()
    return _NOT_PAUSED


def promote_young() -> None:
    """Move every object the collector tracks into its oldest generation, without a walk.

    For the end of a load that ran with the collector off: what it built is alive and stays
    so, but sits in the youngest generation, and the first allocation after the collector
    is on again would walk all of it (800,000 objects for 10,000 rule files: half a second,
    a sixth of the load). The oldest generation is only walked once it has grown by a
    quarter. ``gc.freeze`` then ``gc.unfreeze`` is that move; skipped when the program keeps
    objects frozen itself, which ``unfreeze`` would release."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def freeze_loaded() -> None:
    """Collect once, then move every live object to the permanent generation."""
    gc.collect()
    gc.freeze()


def tune_for_serving(env: Mapping[str, str] | None = None) -> None:
    """Once per server process, after loading: :func:`freeze_loaded`, then (unless the
    ``BRIDGE_RULES_GC_PAUSE`` switch is off) set the thresholds to
    :data:`SERVING_THRESHOLDS`. A program's own first threshold at or above theirs, or 0
    (collection off), is kept with the rest of its thresholds."""
    freeze_loaded()
    if not pause_enabled(env):
        return
    if 0 < gc.get_threshold()[0] < SERVING_THRESHOLDS[0]:
        gc.set_threshold(*SERVING_THRESHOLDS)


__all__ = [
    "ENV",
    "SERVING_THRESHOLDS",
    "freeze_loaded",
    "pause_enabled",
    "paused",
    "tune_for_serving",
]
