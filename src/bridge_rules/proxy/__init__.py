"""``bridge-rules serve``: an HTTP proxy that applies the rules to Anthropic Messages traffic.

The names below are imported on first use, so ``bridge_rules.proxy.config`` (settings and
their checks) loads without the server stack (aiohttp, prometheus-client).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge_rules.proxy.app import ProxyApp, create_app
    from bridge_rules.proxy.config import ProxyConfig

_HOMES = {
    "ProxyApp": "app",
    "create_app": "app",
    "ProxyConfig": "config",
}
__all__ = ["ProxyApp", "ProxyConfig", "create_app"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
