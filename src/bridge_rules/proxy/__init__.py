"""``bridge-rules serve``: an HTTP proxy that applies the rules to Anthropic Messages traffic."""

from __future__ import annotations

from bridge_rules.proxy.app import ProxyApp, create_app
from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.rewrite import Rewriter, RuntimeRewriter

__all__ = ["ProxyApp", "ProxyConfig", "Rewriter", "RuntimeRewriter", "create_app"]
