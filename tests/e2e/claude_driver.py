"""Install the real Claude Code CLI (``@anthropic-ai/claude-code``) for the capture tests.

The npm package ships its native binary in a platform package, so ``npm install``
of an exact version is enough; ``claude -p`` then runs offline against any
``ANTHROPIC_BASE_URL`` (docs/pins.md).
"""

from __future__ import annotations

from pathlib import Path

from npm_install import NpmInstallError, npm_install

CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_VERSION = "2.1.330"
# No update check, no telemetry, every tool sent in full (not deferred to a search tool).
CLAUDE_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "ENABLE_TOOL_SEARCH": "false",
}


class ClaudeInstallError(RuntimeError):
    pass


def install_claude(cache: Path) -> Path:
    """``claude`` from ``cache`` (toolchain.cache_dir()), installing it with npm the first
    time."""
    try:
        return npm_install(cache, CLAUDE_PACKAGE, CLAUDE_VERSION, "claude")
    except NpmInstallError as exc:
        raise ClaudeInstallError(str(exc)) from None
