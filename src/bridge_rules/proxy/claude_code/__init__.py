"""The Claude Code CLI as the proxy's upstream (``serve --upstream claude-code``).

The proxy's request path is unchanged up to the forward step: the rules rewrite the
request for the wire, then, instead of an HTTP call, :class:`.upstream.ClaudeCodeUpstream`
runs the CLI and hands its answer back to the same turn. ``claude-agent-sdk`` (the
``claude-code`` extra) is imported only here, when that upstream is chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bridge_rules.proxy.config import MISSING_SDK, read_mcp_config

if TYPE_CHECKING:
    from bridge_rules.proxy.claude_code.upstream import ClaudeCodeUpstream
    from bridge_rules.proxy.config import ProxyConfig

__all__ = ["MISSING_SDK", "bundled_claude", "claude_code_upstream", "read_mcp_config"]


def bundled_claude() -> str | None:
    """The CLI binary inside the installed ``claude-agent-sdk`` wheel, if there is one."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(path) if path.is_file() else None


def claude_code_upstream(config: ProxyConfig) -> ClaudeCodeUpstream:
    """The upstream for ``config``; raises ImportError (:data:`MISSING_SDK`) without the SDK
    and ValueError for an MCP config file that cannot be used."""
    try:
        from bridge_rules.proxy.claude_code.session import Bounds, Policy
        from bridge_rules.proxy.claude_code.spares import Spares
        from bridge_rules.proxy.claude_code.upstream import ClaudeCodeUpstream, CliSettings
        from bridge_rules.proxy.upstream import Upstream as Pool
    except ImportError as exc:
        raise ImportError(MISSING_SDK) from exc
    path = config.claude_path or bundled_claude() or "claude"
    servers = read_mcp_config(config.claude_mcp_config) if config.claude_mcp_config else {}
    policy = Policy(config.claude_allow, servers)
    bounds = Bounds(config.claude_max_turns, config.claude_max_bytes, config.claude_max_time)
    settings = CliSettings(path, config.max_sessions, config.timeout, policy, bounds)
    spares = Spares(config.claude_spares, config.claude_spare_ttl)
    return ClaudeCodeUpstream(settings, Pool(config), spares, config.claude_prepare)
