"""The ``bridge-rules`` command. The only place that decides exit codes."""

from __future__ import annotations

from bridge_rules.cli.app import main

__all__ = ["main"]
