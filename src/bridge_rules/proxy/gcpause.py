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
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def freeze_loaded() -> None:
    """Collect once, then freeze every surviving object (called once per worker)."""
    gc.collect()
    gc.freeze()
