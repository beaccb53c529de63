"""A round-robin TCP balancer on loopback, one backend per client connection (as an L4
balancer in front of several ``serve`` processes), for the tests that show nothing a later
request needs lives in one worker."""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Balancer:
    """Round-robin over backends, one backend per client connection (as an L4 balancer)."""

    backends: list[int]
    port: int = 0
    picked: list[int] = field(default_factory=list)

    @contextmanager
    def running(self) -> Iterator[str]:
        listener = socket.create_server(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        turn = itertools.cycle(self.backends)
        stop = threading.Event()

        def pump(src: socket.socket, dst: socket.socket) -> None:
            for _ in relayed(src, dst):
                pass

        def accept() -> None:
            listener.settimeout(0.1)
            while not stop.is_set():
                try:
                    client, _ = listener.accept()
                except TimeoutError:
                    continue
                backend = next(turn)
                self.picked.append(backend)
                server = socket.create_connection(("127.0.0.1", backend))
                for a, b in ((client, server), (server, client)):
                    threading.Thread(target=pump, args=(a, b), daemon=True).start()

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{self.port}"
        finally:
            stop.set()
            thread.join(5)
            listener.close()


def relayed(src: socket.socket, dst: socket.socket) -> Iterator[bytes]:
    """Copy ``src`` to ``dst`` until either side closes, yielding each chunk as it arrives
    (before it is passed on, so that a time taken then is when the relay got it)."""
    try:
        while data := src.recv(65536):
            yield data
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
