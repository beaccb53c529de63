"""Install the real Claude Code CLI (``@anthropic-ai/claude-code``) for the capture tests.

The npm package ships its native binary in a platform package, so ``npm install``
of an exact version is enough; ``claude -p`` then runs offline against any
``ANTHROPIC_BASE_URL`` (../shared/reference/claude-code-capture.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

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


def install_claude(prefix: Path) -> Path:
    """``claude`` from ``prefix`` (a cache dir), installing it with npm the first time."""
    binary = prefix / "node_modules" / ".bin" / "claude"
    manifest = prefix / "node_modules" / CLAUDE_PACKAGE / "package.json"
    if (
        binary.exists()
        and manifest.exists()
        and json.loads(manifest.read_text()).get("version") == CLAUDE_VERSION
    ):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise ClaudeInstallError(
            "npm is not on PATH; the capture tests install Claude Code with it"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
         f"{CLAUDE_PACKAGE}@{CLAUDE_VERSION}"],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not binary.exists():
        raise ClaudeInstallError(
            f"npm install {CLAUDE_PACKAGE}@{CLAUDE_VERSION} failed:\n{done.stderr}"
        )
    return binary
