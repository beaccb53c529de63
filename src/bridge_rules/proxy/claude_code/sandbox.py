"""Landlock around the Claude Code CLI: it reads the system's own directories, its own
binary and its scratch directory, and nothing else of the proxy's host.

The CLI's settings already keep a client's text from reading files (no ``@path`` mention,
no slash command, every tool denied); this is the second wall, for a CLI version that
changes them. Linux's Landlock (5.13 and later) lets an unprivileged process give up file
access for itself and its children, so the CLI is started through this file run as a
script (``python -I -S sandbox.py RULES -- CLI ARGS``: the standard library only, a few
milliseconds), which restricts itself and then becomes the CLI. Where the kernel has no
Landlock, or the CLI is a script whose interpreter lives elsewhere, the CLI starts as
before and :func:`wrapped` says why (docs/claude-code-upstream.md).

Run as a script this file must import nothing but the standard library.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # the syscall numbers, the same on every arch
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1
_NO_NEW_PRIVS = 38
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR, _TRUNCATE = 1, 2, 4, 8, 1 << 14
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE
"""The rights a rule on a file (not a directory) may hold; the kernel refuses the rest."""
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_RIGHTS = {1: 13, 2: 14, 3: 15, 4: 15}
"""Filesystem rights each ABI knows (later ABIs add none to the 16 of ABI 5)."""

SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc")
"""Read-only: shared libraries, certificates, resolv.conf. Not ``/proc``: the proxy's own
``/proc/<pid>/environ`` (its seal key, its upstream's key) is there."""
DEVICE_DIR = "/dev"


class _Attr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _Beneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        found = int(_libc().syscall(_CREATE, None, 0, _VERSION))
    except (OSError, AttributeError):
        return 0
    return max(found, 0)


def _all_rights(version: int) -> int:
    return (1 << _RIGHTS.get(version, 16)) - 1


def restrict(read: list[str], write: list[str]) -> None:
    """Give up every file right but reading ``read`` and everything in ``write``, for
    this process and all it starts. Raises OSError when the kernel refuses."""
    libc, version = _libc(), abi()
    everything = _all_rights(version)
    attr = _Attr(everything, 0, 0)
    size = ctypes.sizeof(_Attr) if version >= 6 else 16 if version >= 4 else 8
    ruleset = int(libc.syscall(_CREATE, ctypes.byref(attr), size, 0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for paths, granted in ((read, _READ), (write, everything)):
        for path in paths:
            rights = granted
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a system directory this machine does not have
            if not os.path.isdir(path):
                rights &= _FILE_RIGHTS
            rule = _Beneath(rights, fd)
            done = libc.syscall(_ADD_RULE, ruleset, _PATH_BENEATH, ctypes.byref(rule), 0)
            os.close(fd)
            if done != 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    if libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.syscall(_RESTRICT, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")


def why_not(cli: str) -> str | None:
    """Why the CLI at ``cli`` cannot be sandboxed here; None when it can."""
    if abi() == 0:
        return "this kernel has no Landlock (Linux 5.13 or later)"
    try:
        with open(cli, "rb") as binary:
            magic = binary.read(4)
    except OSError as exc:
        return f"{cli} cannot be read ({exc.strerror})"
    if magic != b"\x7fELF":
        return f"{cli} is a script, whose interpreter the sandbox would have to allow"
    return None


READ_FROM_ENV = ("GOOGLE_APPLICATION_CREDENTIALS", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE")
"""Files the CLI's environment names (child_env passes these): read-only."""
WRITE_FROM_ENV = ("CLAUDE_CONFIG_DIR",)
"""The CLI's own configuration and login, which it reads and updates."""


def wrapped(
    cmd: list[str], scratch: str, env: Mapping[str, str] | None = None
) -> tuple[list[str], str | None]:
    """``cmd`` (the CLI first) started inside the sandbox, reading its scratch directory
    and the files its environment names, and writing only there; or ``cmd`` itself and
    why not."""
    cli = os.path.realpath(cmd[0])
    reason = why_not(cli)
    if reason is not None:
        return cmd, reason
    env = env or {}
    rules = [f"r:{d}" for d in (*SYSTEM_DIRS, str(Path(cli).parent))]
    rules += [f"r:{env[k]}" for k in READ_FROM_ENV if env.get(k)]
    rules += [f"w:{env[k]}" for k in WRITE_FROM_ENV if env.get(k)]
    rules += [f"w:{DEVICE_DIR}", f"w:{scratch}"]
    launcher = [sys.executable, "-I", "-S", str(Path(__file__).resolve())]
    return [*launcher, *rules, "--", cli, *cmd[1:]], None


def main(argv: list[str]) -> None:
    split = argv.index("--")
    read = [r[2:] for r in argv[:split] if r.startswith("r:")]
    write = [r[2:] for r in argv[:split] if r.startswith("w:")]
    restrict(read, write)
    os.execv(argv[split + 1], argv[split + 1 :])


if __name__ == "__main__":
    main(sys.argv[1:])
