"""The launcher every Claude Code CLI starts through: the CLI dies with the proxy's worker,
and (where it can) reads the system's own directories, its own binary and its scratch
directory, and nothing else of the proxy's host.

Nothing left behind: the launcher asks the kernel for a signal when the worker thread that
started it dies (``PR_SET_PDEATHSIG``, even after a SIGKILL no handler sees), forks the CLI
with the same request for itself, and on that signal (or a SIGTERM from the proxy) kills
the CLI and everything it started, in its group or not (:func:`_end_tree`). It checks its
parent after asking, so a worker that died in between is noticed too (:func:`supervise`).

The CLI's settings already keep a client's text from reading files (no ``@path`` mention,
no slash command, every tool denied); this is the second wall, for a CLI version that
changes them. Linux's Landlock (5.13 and later) lets an unprivileged process give up file
access for itself and its children, so the CLI is started through this file run as a
script (``python -I -S sandbox.py p:PID RULES -- CLI ARGS``: the standard library only, a
few milliseconds), which restricts itself and then starts the CLI. Where the kernel has no
Landlock, the CLI is a script whose interpreter lives elsewhere, or the operator let the CLI
reach the host (``--claude-allow``, MCP servers), the launcher still supervises it, without
the wall, and :func:`wrapped` says why (docs/claude-code-upstream.md).

Run as a script this file must import nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # the syscall numbers, the same on every arch
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1
_NO_NEW_PRIVS = 38
_SET_PDEATHSIG, _SET_CHILD_SUBREAPER = 1, 36
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
    cmd: list[str], scratch: str | None, env: Mapping[str, str] | None = None
) -> tuple[list[str], str | None]:
    """``cmd`` (the CLI first, an absolute path) started through the launcher, which
    supervises it and, given a ``scratch`` directory, confines it to reading that and the
    files its environment names, and writing only there. The second item says why there is
    no wall (None: there is one, or ``scratch`` is None and none was asked for)."""
    cli = os.path.realpath(cmd[0])
    launcher = [sys.executable, "-I", "-S", str(Path(__file__).resolve()), f"p:{os.getpid()}"]
    reason = None if scratch is None else why_not(cli)
    if scratch is None or reason is not None:
        return [*launcher, "--", cli, *cmd[1:]], reason
    env = env or {}
    rules = [f"r:{d}" for d in (*SYSTEM_DIRS, str(Path(cli).parent))]
    rules += [f"r:{env[k]}" for k in READ_FROM_ENV if env.get(k)]
    rules += [f"w:{env[k]}" for k in WRITE_FROM_ENV if env.get(k)]
    rules += [f"w:{DEVICE_DIR}", f"w:{scratch}"]
    return [*launcher, *rules, "--", cli, *cmd[1:]], None


def _children() -> list[int]:
    found: list[int] = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children", encoding="ascii") as f:
            found += [int(pid) for pid in f.read().split()]
    return found


def _end_tree() -> None:
    """Kill every descendant, those that left the process group too (the CLI runs its
    Bash tool in a session of its own): as a subreaper this process inherits each one whose
    parent dies, so killing its children round by round reaches them all. Under the wall
    there is no ``/proc`` to read, and no tool of the CLI's runs: the group is all there is."""
    for _ in range(64):
        try:
            children = _children()
        except OSError:
            return
        if not children:
            return
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in children:
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _end_group(signum: int = signal.SIGKILL, frame: object = None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _end_tree()
    os.killpg(0, signal.SIGKILL)  # the launcher's own group: the CLI, its children, itself


def supervise(parent: int, cmd: list[str], null: int) -> int:
    """Run ``cmd`` as a child that dies with this process, while this process dies (and
    takes its descendants along) with ``parent`` or on SIGTERM; the child's exit status,
    once the descendants it left are gone too. ``null``: an open ``/dev/null``, for this
    process's own standard streams once the child has them."""
    libc = _libc()
    signal.signal(signal.SIGTERM, _end_group)
    if libc.prctl(_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0 or os.getppid() != parent:
        _end_group()  # no promise from the kernel, or the worker is already gone
    libc.prctl(_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    me = os.getpid()
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if libc.prctl(_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != me:
            os._exit(125)
        try:
            os.execv(cmd[0], cmd)
        except OSError as exc:
            os.write(2, f"cannot start {cmd[0]}: {exc.strerror}\n".encode())
            os._exit(127)
    for fd in (0, 1, 2):  # the pipes stay the CLI's alone: its exit is their end
        os.dup2(null, fd)
    while True:
        done, status = os.waitpid(child, 0)
        if done == child:
            _end_tree()
            return os.waitstatus_to_exitcode(status)


def main(argv: list[str]) -> None:
    split = argv.index("--")
    parent = next(int(r[2:]) for r in argv[:split] if r.startswith("p:"))
    read = [r[2:] for r in argv[:split] if r.startswith("r:")]
    write = [r[2:] for r in argv[:split] if r.startswith("w:")]
    null = os.open(os.devnull, os.O_RDWR)  # before the wall, which may not allow /dev
    if read or write:
        restrict(read, write)
    code = supervise(parent, argv[split + 1 :], null)
    if code < 0:  # the CLI was killed: so is its launcher, as the caller would see the CLI
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main(sys.argv[1:])
