"""Where rule files may come from: the project's bounds and the switch that lifts them.

``extends`` may not leave the extending file's directory tree, and a symlink may not lead
out of its project (the nearest folder holding ``pyproject.toml`` or ``.git``), unless
one process-wide switch allows it. A module of its own, with nothing heavy to import, so
the CLI can set it on every run without loading the rule model (``compose`` and lint's
discovery read it).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

ALLOW_OUTSIDE_ENV = "BRIDGE_RULES_ALLOW_OUTSIDE"

_SETTINGS = {"allow_outside": False}


def set_allow_outside(allowed: bool) -> None:
    """``bridge-rules --allow-outside``: the default for every later load in this process."""
    _SETTINGS["allow_outside"] = allowed


def allow_outside_default() -> bool:
    """Whether ``extends`` may leave the extending file's directory tree: the CLI's
    ``--allow-outside``, or ``BRIDGE_RULES_ALLOW_OUTSIDE=1``."""
    return _SETTINGS["allow_outside"] or os.environ.get(ALLOW_OUTSIDE_ENV, "") == "1"


PROJECT_MARKERS = ("pyproject.toml", ".git")


def project_root(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding ``pyproject.toml`` or ``.git`` (as
    ruff and pre-commit find a project), else ``start`` itself: the boundary that rule
    files reached through discovery, a directory or a symlink may not leave."""
    start = Path(os.path.abspath(start))
    for folder in (start, *start.parents):
        if any(os.path.lexists(folder / marker) for marker in PROJECT_MARKERS):
            return folder
    return start


def leaves(path: Path, root: Path) -> bool:
    """Whether ``path``, symlinks followed, lies outside ``root`` (symlinks followed too)."""
    try:
        real = os.path.realpath(path)
        base = os.path.realpath(root)
    except (OSError, ValueError):
        return True
    return real != base and not real.startswith(base.rstrip(os.sep) + os.sep)


KERNEL_FILESYSTEMS = frozenset(
    {
        "proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs", "configfs",
        "cgroup", "cgroup2", "pstore", "bpf", "fusectl", "mqueue", "hugetlbfs", "efivarfs",
        "binfmt_misc", "autofs", "selinuxfs", "rpc_pipefs", "nsfs",
    }
)  # fmt: skip
"""Filesystems whose files are the kernel's interfaces, not data: they report a size of 0
and yield bytes anyway, block, consume what they yield (``/proc/kmsg``) or fail to read."""
KERNEL_TREES = ("/proc", "/sys")
_TREE_KIND = {"/proc": "proc", "/sys": "sysfs"}
MOUNTINFO = "/proc/self/mountinfo"


def _under(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree + "/")


@lru_cache(maxsize=1)
def _kernel_devices() -> dict[int, str]:
    """``st_dev`` -> filesystem type of every mount of a kernel filesystem, or mounted under
    ``/proc`` or ``/sys`` (a ``tmpfs`` at ``/sys/fs/cgroup``), read once from the mount table
    (empty where there is none): a device number follows a file through symlinks, ``..`` and
    bind mounts, where a path prefix does not."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return {}
    found: dict[int, str] = {}
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if not sep or len(fields) < 5 or not tail:
            continue
        fstype = tail.split()[0]
        mount = fields[4].replace("\\040", " ")
        major, _, minor = fields[2].partition(":")
        if not (major.isdigit() and minor.isdigit()):
            continue
        tree = next((t for t in KERNEL_TREES if _under(mount, t)), None)
        if fstype in KERNEL_FILESYSTEMS or tree is not None:
            kind = fstype if fstype in KERNEL_FILESYSTEMS else _TREE_KIND[tree or ""]
            found[os.makedev(int(major), int(minor))] = kind
    return found


def kernel_filesystem(path: str | Path, device: int, linked: bool = True) -> str | None:
    """The kernel filesystem (``proc``, ``sysfs``, ...) that ``path``, found on ``device``
    (its ``st_dev``), belongs to, else ``None``. A path that goes through ``/proc`` or
    ``/sys`` counts too, wherever its magic links lead (``/proc/self/exe`` is the Python
    binary, ``/proc/self/root`` is ``/``): nothing there is a rule file of a project.
    ``linked=False``: the caller knows ``path`` is no symlink, so there is none to follow."""
    kind = _kernel_devices().get(device)
    if kind is not None:
        return kind
    for hop in _hops(path) if linked else [os.path.abspath(path)]:
        tree = next((t for t in KERNEL_TREES if _under(hop, t)), None)
        if tree is not None:
            return _TREE_KIND[tree]
    return None


def _hops(path: str | Path) -> list[str]:
    """``path`` as written, then each target its symlinks name in turn: a magic link of
    ``/proc`` resolves to something outside it (``realpath`` would never say ``/proc``)."""
    hops = [os.path.abspath(path)]
    for _ in range(40):  # the kernel's own limit on a chain of symlinks
        try:
            target = os.readlink(hops[-1])
        except (OSError, ValueError):
            break
        hops.append(os.path.normpath(os.path.join(os.path.dirname(hops[-1]), target)))
    return hops
