"""A ``--workers`` process ends when the supervisor that started it dies, even by SIGKILL.

uvicorn's workers do not watch their parent: a supervisor killed by SIGKILL (an OOM kill, a
container runtime's timeout, a test) left them serving on the inherited socket, and their
Claude Code CLIs running. On Linux each worker asks the kernel for SIGTERM when its parent
dies (``PR_SET_PDEATHSIG``), which starts the ordinary drain; elsewhere nothing changes.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys

_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(sig: signal.Signals = signal.SIGTERM) -> bool:
    """Ask for ``sig`` when this process's parent dies; send it now if the parent is already
    gone. False where the kernel offers no such request (not Linux, no libc)."""
    if not sys.platform.startswith("linux"):
        return False
    # The parent multiprocessing started this worker from, if it did: a worker still loading
    # when its supervisor died already has init as its parent, and must see that.
    spawner = multiprocessing.parent_process()
    parent = spawner.pid if spawner is not None and spawner.pid else os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:  # it died before the request took effect
        os.kill(os.getpid(), sig)
    return True
