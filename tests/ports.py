"""A port for a server a test starts as a process, which cannot bind port 0 and say which
port it got.

``bind(("127.0.0.1", 0))`` hands out a port from the kernel's ephemeral range, and the
suite's clients (thousands of loopback connections, 1,100 at once in the slowloris test,
on every xdist worker) take their local ports from that same range. A server started on
such a port a moment after the probe closed it can find it taken by a client's
connection. Ports below the range are never given to a client, so only another test's
server could take one, and a random pick among ~12,000 makes that rare.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_PICK = random.Random()  # its own state: Hypothesis seeds and restores the global one


def _ephemeral_low() -> int:
    try:
        return int(_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port() -> int:
    """A loopback port nothing is bound to now, below the ephemeral range when there is room
    for one (else one the kernel picks)."""
    low = _ephemeral_low()
    start = max(1024, low - 12_000)
    for _ in range(50 if low - start >= 1000 else 0):
        port = _PICK.randrange(start, low)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
