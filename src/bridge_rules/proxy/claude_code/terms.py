"""The terms one request runs the CLI on: which tools it may run itself (:class:`Policy`),
what the request may cost (:class:`Bounds`), what it did (:class:`Run`) and how it
failed (:class:`CliFailed`). Plain data, shared by :mod:`.session` and :mod:`.upstream`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class CliFailed(Exception):
    """The CLI could not answer; ``status`` is the HTTP status the client gets."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Policy:
    """Which tools the CLI may run itself; by default none."""

    allow: tuple[str, ...] = ()
    """Patterns (``fnmatch``) of CLI tool names: ``WebSearch``, ``mcp__github__*``."""
    servers: Mapping[str, Any] = field(default_factory=dict)
    """The user's own MCP servers, as ``--mcp-config`` takes them (name -> config)."""

    def runs(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.allow)


@dataclass(frozen=True)
class Bounds:
    """What one request may cost: the CLI replays history at a few milliseconds a message,
    so without these a body of tiny turns held a session for half an hour."""

    turns: int = 1000
    """Messages in the request (each a stream-json line to replay); more: 413."""
    bytes: int = 16 * 1024 * 1024
    """The request body; larger: 413."""
    time: float = 1800.0
    """Seconds the request may hold its session: past it, 413 while the history is still
    being replayed, 504 once the answer is under way."""


@dataclass
class Run:
    """What one request did, for the log and the tests."""

    denied: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """Built-ins offered that the CLI's inventory did not list."""
    not_run: list[str] = field(default_factory=list)
    """Calls for the client that the CLI closed with a result of its own (a denial, or
    its own input check), in the order it did."""
