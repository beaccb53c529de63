"""Whether the Claude Code CLI has credentials, judged as the CLI judges it, without a
model call.

Without this ``/readyz`` said ready and every request got the interactive CLI's advice
("Not logged in · Please run /login"), which a proxy's client cannot follow.

The CLI (2.1.x, its own code) logs in from, in this order: an API key or token in its
environment, a cloud provider's settings, or the files in its configuration directory:
``.credentials.json`` (a ``claude login``'s OAuth tokens, under ``claudeAiOauth``) and
``.claude.json`` (a key saved by ``/login``, ``primaryApiKey``). The proxy gives the CLI a
scratch ``HOME``, so that directory is ``CLAUDE_CONFIG_DIR`` or nothing. Whether the
credentials are still valid only the model endpoint can say (a 401 is a 502, as before).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path

KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
"""Environment variables the CLI authenticates with as they are."""
CLOUDS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")
"""With one of these set, the cloud's own credentials apply, which the CLI does not hold."""
FILES = ((".credentials.json", "claudeAiOauth"), (".claude.json", "primaryApiKey"))
"""A login file in the configuration directory, and the key that makes it one."""
ADVICE = (
    "set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`), in the "
    "environment of bridge-rules serve, or CLAUDE_CONFIG_DIR to the directory holding a "
    "`claude` login (e.g. ~/.claude)"
)


def _on(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no")


@functools.lru_cache(maxsize=8)
def _holds(path: str, key: str, stamp: tuple[int, int]) -> bool:
    """Whether the JSON object in ``path`` has ``key`` (read again when ``stamp``, its
    modification time and size, changes)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get(key))


def _login_file(config_dir: str) -> bool:
    for name, key in FILES:
        path = os.path.join(config_dir, name)
        try:
            info = os.stat(path)
        except OSError:
            continue
        if _holds(path, key, (info.st_mtime_ns, info.st_size)):
            return True
    return False


def missing(environ: Mapping[str, str]) -> str | None:
    """Why the CLI started with ``environ`` (the proxy's) would not be logged in, with what
    to set; None when it has something to log in with."""
    if any(environ.get(k, "").strip() for k in KEYS) or any(_on(environ.get(k)) for k in CLOUDS):
        return None
    config_dir = environ.get("CLAUDE_CONFIG_DIR", "")
    if config_dir and _login_file(config_dir):
        return None
    where = f" (none in CLAUDE_CONFIG_DIR={config_dir})" if config_dir else ""
    return f"the Claude Code CLI has no credentials{where}: {ADVICE}"
