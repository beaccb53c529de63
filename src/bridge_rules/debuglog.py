"""The debug log: one home for the file ``--debug-log`` or a peer's variable names.

pi-anthropic-messages reads ``PI_ANTHROPIC_MESSAGES_DEBUG_LOG=/path`` and appends every
payload before and after its rewrite, and every inbound rename; its profile declares that
variable as data (``debug_log: {env: VAR}``). ``serve``, ``bridge-rules transform``,
:class:`~bridge_rules.engine.Engine` and ``bridge_rules.compat`` all open the file through
:func:`open_declared` here, so the log has one set of safeguards wherever it is written:
created owner-only, a symlink or a file others may read refused, prompt text omitted
unless asked for. A module of the lowest layer, so that the engine may write it as the
proxy does.

Unlike the peer, an unset or empty variable means no log: the peer falls back to a fixed
file in the temporary directory, which would write every payload of every user by default.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol

from bridge_rules import jsonio

# Strings under these keys are structure (ids, names, types), never prompt text.
_STRUCTURAL = frozenset(
    {
        "type",
        "name",
        "id",
        "tool_use_id",
        "role",
        "model",
        "stop_reason",
        "stop_sequence",
        "media_type",
        "tool_choice",
        "event",
    }
)


def private_problem(path: str, info: os.stat_result) -> str | None:
    """Why the file ``info`` describes cannot hold a private log: a symbolic link (its
    target is chosen by whoever made it), not a regular file, or one others may read or
    write. The debug log holds request metadata even with every credential redacted."""
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link; name the file itself"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_mode & 0o077:
        mode = stat.S_IMODE(info.st_mode)
        return (
            f"{path} has mode {mode:04o}; a debug log must be readable by its owner only "
            f"(chmod 600 {path}, or name a new file)"
        )
    return None


OMIT_DEPTH = 64  # deeper containers are logged as one placeholder


def omit_text(value: Any, key: str | None = None, depth: int = 0) -> Any:
    """A JSON value with every free-text string replaced by ``<N chars omitted>``."""
    if isinstance(value, str):
        if key in _STRUCTURAL:
            return value
        return f"<{len(value)} chars omitted>"
    if isinstance(value, (dict, list)) and depth >= OMIT_DEPTH:
        return f"<nested deeper than {OMIT_DEPTH} levels omitted>"
    if isinstance(value, dict):
        return {k: omit_text(v, k, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [omit_text(v, key, depth + 1) for v in value]
    return value


class DebugLogRefused(OSError):
    """The debug log's path is a symbolic link, not a regular file, or open to others."""


class DebugLog:
    """JSON lines appended to a file; safe to share between a worker's requests.

    Created owner-only (0600): even with prompts omitted it holds ids, tool names and
    headers. A path that is a symbolic link is refused, not followed (``O_NOFOLLOW``), and
    so is an existing file others may read, checked on the opened file itself (no window
    between a check and the open)."""

    def __init__(self, path: str | Path, log_prompts: bool = False) -> None:
        self.log_prompts = log_prompts
        self._lock = threading.Lock()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:  # O_NONBLOCK: a FIFO without a reader fails (ENXIO) rather than blocks
            fd = os.open(Path(path), flags | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise DebugLogRefused(f"{path} is a symbolic link; name the file itself") from None
            if exc.errno == errno.ENXIO:
                raise DebugLogRefused(f"{path} is not a regular file") from None
            raise
        problem = private_problem(str(path), os.fstat(fd))
        if problem is not None:
            os.close(fd)
            raise DebugLogRefused(problem)
        self._file: IO[bytes] = os.fdopen(fd, "ab")

    def body(self, value: Any) -> Any:
        return value if self.log_prompts else omit_text(value)

    def text(self, data: bytes) -> str:
        if self.log_prompts:
            return data.decode("utf-8", "replace")
        return f"<{len(data)} bytes omitted>"

    def write(self, record: dict[str, Any]) -> None:
        line = jsonio.dumps(record) + b"\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        self._file.close()

    def outbound(self, before: Any, after: Any, renames: Mapping[str, str]) -> None:
        """A request before and after its rewrite, as pi-anthropic-messages logs it (its
        ``nameMap``: each renamed tool under its name and its lowercase name)."""
        self.write(
            {
                "event": "outbound",
                "before": self.body(before),
                "after": self.body(after),
                "name_map": name_map(renames),
            }
        )

    def inbound(self, renamed: Mapping[str, str], known: int = 0) -> None:
        """Each name mapped back (wire -> local) after the first ``known``, one line each."""
        for wire, local in list(renamed.items())[known:]:
            self.write({"event": "inbound_rename", "from": wire, "to": local})

    def stream(self, chunks: Iterator[bytes], renamed: Mapping[str, str]) -> Iterator[bytes]:
        """``chunks`` as they are; the names mapped back once the stream has ended."""
        known = len(renamed)
        yield from chunks
        self.inbound(renamed, known)


def name_map(renames: Mapping[str, str]) -> dict[str, str]:
    """pi-anthropic-messages' ``nameMap``: each renamed tool (local -> wire) under its name
    and its lowercase name."""
    out: dict[str, str] = {}
    for local, wire in renames.items():
        out[local] = wire
        out.setdefault(local.lower(), wire)
    return out


_open: dict[tuple[str, bool], DebugLog] = {}
_lock = threading.Lock()


class Declared(Protocol):
    """The rules' ``debug_log: {env: VAR}`` setting."""

    @property
    def env(self) -> str: ...


def declared_path(setting: Declared | None, env: Mapping[str, str] | None = None) -> str | None:
    """The file the rules' ``debug_log`` ``setting`` names through its variable in ``env``
    (``None`` reads ``os.environ``), or None: no such setting, or the variable unset or empty."""
    if setting is None:
        return None
    value = (os.environ if env is None else env).get(setting.env, "")
    return value or None


def open_declared(
    setting: Declared | None, env: Mapping[str, str] | None = None, log_prompts: bool = False
) -> DebugLog | None:
    """The debug log ``setting`` names, opened once per file and shared (a DebugLog is safe
    to share); None when there is none. ``OSError`` when the file cannot be opened, as for
    ``--debug-log``."""
    path = declared_path(setting, env)
    if path is None:
        return None
    key = (path, log_prompts)
    with _lock:
        log = _open.get(key)
        if log is None:
            log = _open[key] = DebugLog(path, log_prompts)
    return log
