"""The debug log a profile names through the environment (``debug_log: {env: VAR}``).

pi-anthropic-messages reads ``PI_ANTHROPIC_MESSAGES_DEBUG_LOG=/path`` and appends
every payload before and after its rewrite, and every inbound rename. Its profile
declares that variable as data; ``serve`` (when ``--debug-log`` is not given) and
this package open the file it names through the proxy's
:class:`~bridge_rules.proxy.obs.DebugLog`, so the log has that class's safety:
created owner-only, credentials redacted, prompt text omitted unless asked for.

Unlike the peer, an unset or empty variable means no log: the peer falls back to a
fixed file in the temporary directory, which would write every payload of every
user by default.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from bridge_rules.compiled import CompiledRules
from bridge_rules.proxy.obs import DebugLog

_open: dict[tuple[str, bool], DebugLog] = {}
_lock = threading.Lock()


def declared_path(rules: CompiledRules, env: Mapping[str, str] | None = None) -> str | None:
    """The file the rules' ``debug_log.env`` variable names, or None (no setting, unset,
    empty). ``env=None`` reads ``os.environ``."""
    setting = rules.debug_log
    if setting is None:
        return None
    value = (os.environ if env is None else env).get(setting.env, "")
    return value or None


def open_declared(
    rules: CompiledRules, env: Mapping[str, str] | None = None, log_prompts: bool = False
) -> DebugLog | None:
    """The debug log the environment names for these rules, opened once per file and
    shared (DebugLog is safe to share); None when there is none. ``OSError`` when the
    file cannot be opened, as for ``--debug-log``."""
    path = declared_path(rules, env)
    if path is None:
        return None
    key = (path, log_prompts)
    with _lock:
        log = _open.get(key)
        if log is None:
            log = _open[key] = DebugLog(path, log_prompts)
    return log
