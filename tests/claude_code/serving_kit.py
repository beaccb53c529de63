"""``serve --upstream claude-code`` as a real process whose CLI sessions talk to a scripted
endpoint: what ``test_bounds`` and ``test_keys`` start their servers with."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from scripted import ScriptedEndpoint
from tests.ports import free_port


@contextmanager
def claude_code_serving(
    endpoint: ScriptedEndpoint, *args: str, quiet: bool = False
) -> Iterator[str]:
    """The server's URL once ``/healthz`` answers (at most 30 s); ``args`` go after
    ``serve --upstream claude-code --port PORT``; ``quiet`` drops the server's stderr."""
    port = free_port()
    env = {**os.environ, "ANTHROPIC_BASE_URL": endpoint.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
    code = "import sys\nfrom bridge_rules.cli.app import main\nsys.exit(main(sys.argv[1:]))\n"
    command = [sys.executable, "-c", code, "serve", "--upstream", "claude-code"]
    command += ["--port", str(port), *args]
    server = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL if quiet else None)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{url}/healthz", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(20)
