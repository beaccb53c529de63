"""``bridge-rules serve``: an HTTP proxy that applies the rules to Anthropic Messages traffic."""

from __future__ import annotations

from bridge_rules.proxy.app import EngineLike, ProxyApp, create_app
from bridge_rules.proxy.config import ProxyConfig

__all__ = ["EngineLike", "ProxyApp", "ProxyConfig", "create_app"]
