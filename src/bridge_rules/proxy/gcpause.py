"""Keeping Python's cyclic garbage collector out of one request's rewrite.

Parsing, rewriting and serialising a large body allocates many containers at
once, which triggers collections that walk every tracked object, the loaded
rules included. The rewrite itself makes no reference cycles, so the collector
is paused for that synchronous stretch (no other request runs in between: there
is no ``await`` inside) and resumes after it. :func:`freeze_loaded` moves what
was loaded at start-up (rules, modules) out of the collector's sight for good.
"""

from __future__ import annotations

import gc
from types import TracebackType


class paused_gc:
    """``with paused_gc():`` the collector is off inside (unless it was off already).

    A class rather than ``@contextmanager``: this runs several times per request,
    and a generator-based manager costs several times more.
    """

    __slots__ = ("_was",)

    def __enter__(self) -> None:
        self._was = gc.isenabled()
        gc.disable()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._was:
            gc.enable()


def freeze_loaded() -> None:
    """Collect once, then freeze every surviving object (called once per worker)."""
    gc.collect()
    gc.freeze()
