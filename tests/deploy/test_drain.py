"""SIGTERM during a rolling update: streams finish, ``/readyz`` turns 503, nobody hangs.

A real ``serve --workers 2`` relays long SSE streams (the fake upstream spaces its events
out) when it is sent SIGTERM. The oracle for "not cut short" is a stream of the same
request taken before the signal, unhurried: each stream in flight must carry as many
events and end with ``message_stop``. Meanwhile the test connects again and again with a
client timeout: each attempt is refused (or reset) by the system or answered, and an answer to
``/readyz`` is a 503; a timeout (a connection accepted and left hanging) fails the test.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from fake_upstream import FakeUpstream
from tests.proxy import loopback
from tests.proxy.test_serve_signals import REQUEST, serving

from bridge_rules.proxy.settingsfile import read_settings

STREAM = {**REQUEST, "stream": True}
GRACE = 30.0  # the drain deadline given to serve; the streams take about 3 s


def sse_events(url: str) -> list[str]:
    with loopback.stream("POST", url + "/v1/messages", json=STREAM, timeout=60) as answer:
        assert answer.status_code == 200
        text = "".join(answer.iter_text())
    return [line for line in text.splitlines() if line.startswith("event: ")]


@pytest.mark.parametrize(
    ("workers", "flag"), [(1, "--shutdown-grace"), (2, "--drain-timeout")]
)  # one setting under its name and its former one
def test_sigterm_drains_streams_and_leaves_no_connection_hanging(
    upstream: FakeUpstream, workers: int, flag: str
) -> None:
    args = ["--upstream", upstream.url, "--workers", str(workers)]
    with serving([*args, flag, str(GRACE)]) as server:
        reference = sse_events(server.url)
        assert reference[-1] == "event: message_stop"
        upstream.script.event_gap = 3.0 / len(reference)
        streams: list[list[str]] = []
        threads = [
            threading.Thread(target=lambda: streams.append(sse_events(server.url)))
            for _ in range(4)
        ]
        seen = len(upstream.requests)
        for thread in threads:
            thread.start()
        while len(upstream.requests) < seen + len(threads):
            time.sleep(0.02)
        server.proc.terminate()
        signalled = time.monotonic()
        # "at once" is once the signal is delivered: a probe sent in the same microsecond
        # may be answered before it; 0.1 s is far below any balancer's probe period
        time.sleep(0.1)

        answers: list[int | str] = []
        while server.proc.poll() is None and time.monotonic() - signalled < GRACE:
            try:
                reply = loopback.get(server.url + "/readyz", timeout=1.0)
                answers.append(reply.status_code)
            except httpx.ConnectError:
                answers.append("refused")
            except (httpx.ReadError, httpx.RemoteProtocolError):
                answers.append("reset")  # taken from the backlog as the socket closed
            except httpx.TimeoutException:
                hung = time.monotonic() - signalled
                pytest.fail(f"a connection {hung:.2f} s into the drain hung")
            time.sleep(0.05)
        for thread in threads:
            thread.join(timeout=GRACE)
        assert server.proc.wait(timeout=GRACE) == 0
    assert answers, "the drain ended before any connection was tried"
    assert set(answers) <= {503, "refused", "reset"}, answers
    assert len(streams) == len(threads)
    assert all(s == reference for s in streams), [len(s) for s in streams]


@pytest.mark.parametrize(
    "key", ["drain-timeout", "drain_timeout", "shutdown-grace", "shutdown_grace"]
)
def test_the_drain_is_one_setting_under_its_name_and_its_former_one(
    tmp_path: Path, key: str
) -> None:
    path = tmp_path / "serve.yaml"
    path.write_text(f"{key}: 7.5\n", encoding="utf-8")
    found = read_settings(str(path))
    assert not found.problems
    assert found.values == {"drain_timeout": 7.5}
