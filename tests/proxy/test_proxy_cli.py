"""``bridge-rules serve`` as a user runs it: a real process, one worker or several."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fake_upstream import FakeUpstream
from tests.ports import free_port
from tests.proxy import loopback

BIN = Path(sys.executable).parent / "bridge-rules"


def wait_healthy(url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited early: {proc.communicate()}")
        try:
            if loopback.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("serve never became healthy")


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_forwards_and_logs_one_line_per_request(upstream: FakeUpstream, workers: int) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [
            str(BIN),
            "serve",
            "--upstream",
            upstream.url,
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        request = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "read", "input_schema": {"type": "object"}}],
        }
        r = loopback.post(url + "/v1/messages", json=request)
        assert r.status_code == 200
        assert r.json()["content"][0]["name"] == "read"
        assert upstream.requests[-1].json["tools"][0]["name"] == "Read"
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    logged = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    access = [a for a in logged if "event" not in a]  # the start line is an event
    assert [(a["path"], a["status"]) for a in access][-1] == ("/v1/messages", 200)
    assert access[-1]["renames"] == {"read": "Read"}
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream", "ftp://x"], "--upstream must be an http(s) URL"),
        (["--upstream", "http://x", "--workers", "0"], "--workers must be at least 1"),
        (["--upstream", "http://x", "--log-prompts"], "--log-prompts only applies"),
        (["--upstream", "http://x", "--rules", "no-such-profile"], "no-such-profile"),
        (["--upstream", "http://x", "--max-headers", "0"], "--max-headers must be at least 1"),
        (["--upstream", "http://x", "--body-timeout", "0"], "--body-timeout must be positive"),
        (
            ["--upstream", "http://x", "--upstream-keepalive", "-1"],
            "--upstream-keepalive must be 0 (no reuse) or more",
        ),
        (["--upstream", "http://x", "--host", "192.0.2.1"], "cannot listen on 192.0.2.1:8787"),
    ],
)
def test_serve_usage_errors_exit_2(args: list[str], message: str) -> None:
    done = subprocess.run(
        [str(BIN), "serve", *args], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_metrics_directory_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    done = subprocess.run(
        [str(BIN), "serve", "--upstream", "http://127.0.0.1:9", "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(missing)},
    )
    assert done.returncode == 2
    assert f"PROMETHEUS_MULTIPROC_DIR={missing} is not a directory" in done.stderr
    assert "internal error" not in done.stderr


HEAVY = ("bridge_rules.model", "pydantic", "uvicorn", "aiohttp")


def test_a_bad_option_is_reported_before_the_rules_or_the_server_stack_load() -> None:
    # What makes a usage error answer in a fifth of a second: nothing heavy is imported.
    code = (
        "import sys\n"
        "from bridge_rules.cli.app import main\n"
        "status = main(['serve', '--upstream', 'http://x', '--workers', '0'])\n"
        f"print(status, [m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.stdout.splitlines()[0] == "2 []", done.stdout + done.stderr
    assert "--workers must be at least 1" in done.stderr


def test_metrics_from_any_worker_count_every_worker(upstream: FakeUpstream, tmp_path: Path) -> None:
    """With --workers 2 a scrape reaches one worker; it must still report every request."""
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    proc = subprocess.Popen(
        [str(BIN), "serve", "--upstream", upstream.url, "--port", str(port), "--workers", "2"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    sent = 40
    try:
        wait_healthy(url, proc)
        (shared,) = tmp_path.glob("bridge-rules-metrics-*")
        count = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}
        for _ in range(sent):  # a new connection each: the workers take turns accepting
            answer = loopback.post(url + "/v1/messages/count_tokens", json=count)
            assert answer.status_code == 200
        route = 'route="/v1/messages/count_tokens",status="2xx"'  # only these requests
        line = f"bridge_rules_requests_total{{{route}}} {sent:.1f}"
        deadline = time.monotonic() + 10  # counted just after each response has gone
        while line not in loopback.get(url + "/metrics").text:
            assert time.monotonic() < deadline, "no scrape showed every request"
            time.sleep(0.05)
        scrapes = [loopback.get(url + "/metrics").text for _ in range(8)]
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert all(line in text for text in scrapes)
    assert "Traceback" not in err
    assert not shared.exists()  # the workers' metric files go with them
