"""``serve --watch``: reload by itself when the rule files change, as on SIGHUP.

In a pod nothing sends SIGHUP: the kubelet updates a mounted ConfigMap by writing a new
timestamped directory and renaming the ``..data`` link over the old one. A thread polls a
fingerprint of every rule path (``--rules``, each route's rules, ``--bindings-dir``): each
file's resolved path, device, inode, size and mtime, symbolic links followed, so the swap of
``..data`` changes it even though no key file is written. On a change it sends this process
SIGHUP, so the reload is the SIGHUP reload itself (per route, old rules kept when the new
ones fail, ``/readyz`` saying so). With ``--workers N`` each worker runs a watcher of its
own (primed before it reads the rules) and reloads in place: nothing passes between
processes, so no worker can miss a swap while it starts. Polling needs no
inotify (which misses a rename of a parent link) and no dependency; its cost is a few stat
calls per interval.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bridge_rules.proxy.config import ProxyConfig

Fingerprint = tuple[tuple[str, int, int, int, int], ...]


def fingerprint(paths: Iterable[str]) -> Fingerprint:
    """What changes when any file under ``paths`` (files or directories, links followed)
    is replaced, written or removed; names that are not paths (profiles) are skipped."""
    found: list[tuple[str, int, int, int, int]] = []
    for path in paths:
        for file in _files(path):
            try:
                st = os.stat(file)
            except OSError:  # removed between listing and stat: the next poll sees it
                continue
            found.append((os.path.realpath(file), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(sorted(found))


def _files(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    files: list[str] = []
    for top, dirs, names in os.walk(path, followlinks=True):
        dirs[:] = [d for d in dirs if not d.startswith("..")]  # the kubelet's own entries
        files.extend(os.path.join(top, n) for n in names if not n.startswith(".."))
    return files


_NOT_YET = (signal.SIG_DFL, signal.SIG_IGN, None)


class Watcher:
    """Polls ``paths`` every ``interval`` seconds; sends SIGHUP to this process on a change."""

    def __init__(self, paths: Iterable[str], interval: float) -> None:
        self.paths = tuple(paths)
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bridge-rules-watch", daemon=True)

    def prime(self) -> Watcher:
        """Take the fingerprint now (before the rules are read), so that a change made
        while they load is seen by the first poll."""
        self._last = fingerprint(self.paths)
        return self

    def start(self) -> None:
        if not hasattr(self, "_last"):
            self.prime()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            now = fingerprint(self.paths)
            # Until the server has its SIGHUP handler, SIGHUP would end the process: the
            # change is kept for the next poll instead.
            if now != self._last and signal.getsignal(signal.SIGHUP) not in _NOT_YET:
                self._last = now
                os.kill(os.getpid(), signal.SIGHUP)


def watcher_of(config: ProxyConfig, interval: float) -> Watcher:
    """The watcher of every rule path ``config`` reads."""
    route_rules = [r for route in config.routes for r in route.rules]
    paths = watched_paths(config.rules, route_rules, config.bindings_dir)
    if config.keys:  # serve --keys: the keys file is read again on a reload too
        paths.append(config.keys)
    return Watcher(paths, interval)


def watched_paths(
    rules: Iterable[str], routes_rules: Iterable[str], bindings: str | None
) -> list[str]:
    """Every path a reload reads again."""
    paths = [*rules, *routes_rules]
    if bindings:
        paths.append(bindings)
    return paths
