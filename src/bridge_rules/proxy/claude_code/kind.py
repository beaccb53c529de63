"""``claude-code`` as an upstream kind: its spelling, its settings' problems, and the
upstream it opens (:func:`bridge_rules.proxy.claude_code.claude_code_upstream`).

Standard library only, like :mod:`bridge_rules.proxy.kinds`: ``serve`` judges the
``claude-*`` settings before anything of the SDK is imported.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

from bridge_rules.proxy.config import CLAUDE_CODE, MISSING_SDK, ProxyConfig, read_mcp_config
from bridge_rules.proxy.kinds import Problem, Upstream, UpstreamKind, register


@register
class ClaudeCodeKind(UpstreamKind):
    """The Claude Code CLI answers the Messages requests (docs/claude-code-upstream.md)."""

    spelled = CLAUDE_CODE
    owner_credentials = True  # the CLI's subscription login or API key

    def claims(self, value: str) -> bool:
        return value == CLAUDE_CODE

    def problems(self, value: str, options: Mapping[str, Any]) -> tuple[str, list[Problem]]:
        """No SDK, no sessions, or an MCP config file that cannot be used."""
        problems: list[Problem] = []
        if importlib.util.find_spec("claude_agent_sdk") is None:
            problems.append(("upstream", MISSING_SDK, False))
        if options.get("max_sessions", 1) < 1:
            problems.append(("max_sessions", "--max-sessions must be at least 1", False))
        for name in ("claude_max_turns", "claude_max_bytes", "claude_max_time"):
            if options.get(name, 1) <= 0:
                flag = "--" + name.replace("_", "-")
                problems.append((name, f"{flag} must be positive", False))
        if options.get("claude_mcp_config"):
            try:
                read_mcp_config(options["claude_mcp_config"])
            except ValueError as exc:
                problems.append(("claude_mcp_config", f"--claude-mcp-config: {exc}", False))
        return value, problems

    def open(self, config: ProxyConfig) -> Upstream:
        from bridge_rules.proxy.claude_code import claude_code_upstream

        return claude_code_upstream(config)
