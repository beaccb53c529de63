"""The Claude Code CLI as the proxy's upstream (``serve --upstream claude-code``).

The proxy's request path is unchanged up to the forward step: the rules rewrite the
request for the wire, then, instead of an HTTP call, :class:`.upstream.ClaudeCodeUpstream`
runs the CLI and hands its answer back to the same turn. ``claude-agent-sdk`` (the
``claude-code`` extra) is imported only here, when that upstream is chosen.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge_rules.proxy.claude_code.upstream import ClaudeCodeUpstream
    from bridge_rules.proxy.config import ProxyConfig

MISSING_SDK = (
    "--upstream claude-code needs the claude-agent-sdk package: "
    "pip install 'bridge-rules[claude-code]'"
)


def bundled_claude() -> str | None:
    """The CLI binary inside the installed ``claude-agent-sdk`` wheel, if there is one."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(path) if path.is_file() else None


def read_mcp_config(path: str) -> dict[str, Any]:
    """The servers of an MCP config file (``{"mcpServers": {...}}``); ValueError with the
    reason when it cannot be used."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        raise ValueError(f'{path} must be {{"mcpServers": {{"name": {{...}}, ...}}}}')
    return servers


def claude_code_upstream(config: ProxyConfig) -> ClaudeCodeUpstream:
    """The upstream for ``config``; raises ImportError (:data:`MISSING_SDK`) without the SDK
    and ValueError for an MCP config file that cannot be used."""
    try:
        from bridge_rules.proxy.claude_code.session import Policy
        from bridge_rules.proxy.claude_code.upstream import ClaudeCodeUpstream, CliSettings
    except ImportError as exc:
        raise ImportError(MISSING_SDK) from exc
    path = config.claude_path or bundled_claude() or "claude"
    servers = read_mcp_config(config.claude_mcp_config) if config.claude_mcp_config else {}
    policy = Policy(config.claude_allow, servers)
    return ClaudeCodeUpstream(CliSettings(path, config.max_sessions, config.timeout, policy))
