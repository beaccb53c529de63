"""Install and drive the real opencode CLI (npm ``opencode-ai``) offline, in a scratch dir.

The recipe is the one in the opencode.md reference note: ``npm install
opencode-ai@1.18.33`` (its optional dependency ships the binary; nothing is
downloaded at run time), an ``opencode.json`` in the project (the snippet that
docs/profiles/opencode.md documents: opencode's own ``anthropic`` provider with
a ``baseURL``), a private HOME and XDG dirs, no model-list fetch and no update
check, one ``opencode run``.

opencode's grep and glob run ripgrep: without ``rg`` on PATH they fail with
"ripgrep execution failed". The dev extras install it (the ``ripgrep`` wheel), and
opencode runs with the venv's bin directory first on PATH (toolchain.py).
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npm_install import NpmInstallError, npm_install
from serve_process import SetupError, serving
from tests.ports import free_port
from toolchain import agent_path

OPENCODE_PACKAGE = "opencode-ai"
OPENCODE_VERSION = "1.18.33"
DOC = Path(__file__).resolve().parents[2] / "docs" / "profiles" / "opencode.md"


def install_opencode(cache: Path) -> Path:
    """``opencode`` from ``cache`` (toolchain.cache_dir()), installing it with npm the first
    time."""
    try:
        return npm_install(cache, OPENCODE_PACKAGE, OPENCODE_VERSION, "opencode")
    except NpmInstallError as exc:
        raise SetupError(str(exc)) from None


@contextmanager
def bridge_rules_serve(upstream: str, *rules: str) -> Iterator[str]:
    """``bridge-rules serve --rules ...`` as a separate process; yields its base URL."""
    options = ["--upstream", upstream]
    for ref in rules:
        options += ["--rules", ref]
    with serving(*options) as url:
        yield url


@dataclass
class OpencodeRun:
    returncode: int
    stdout: str
    stderr: str


def documented_config() -> dict[str, Any]:
    """The ``opencode.json`` snippet of docs/profiles/opencode.md (its first JSON block)."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("```json\n", 1)[1].split("```", 1)[0]
    config: dict[str, Any] = json.loads(block)
    return config


def opencode_config(base_url: str) -> dict[str, Any]:
    """The documented snippet pointed at ``base_url``, with a dummy key, offline settings."""
    config = documented_config()
    options = config["provider"]["anthropic"]["options"]
    assert options["baseURL"] == "http://127.0.0.1:8787/v1", "the snippet changed"
    options.update(baseURL=f"{base_url}/v1", apiKey="sk-test-not-a-key")
    return {**config, "model": f"anthropic/{model()}", "autoupdate": False, "share": "disabled"}


def model() -> str:
    """The model id the documented snippet declares: opencode runs it offline only because the
    snippet lists it (1.18.33's own catalogue has no claude-sonnet-5-5)."""
    declared: dict[str, Any] = documented_config()["provider"]["anthropic"]["models"]
    return next(iter(declared))


def _env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": agent_path(),  # the venv's rg for grep and glob
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
    }


def run_opencode(
    opencode: Path, home: Path, project: Path, base_url: str, prompt: str
) -> OpencodeRun:
    """One ``opencode run`` in ``project``; ``home`` holds its HOME and XDG dirs (a
    session-wide one saves opencode's first-start setup on later runs)."""
    env = _env(home)
    (project / "opencode.json").write_text(json.dumps(opencode_config(base_url)))
    done = subprocess.run(
        [
            str(opencode),
            "run",
            "--print-logs",
            "--log-level",
            "WARN",
            "-m",
            f"anthropic/{model()}",
            prompt,
        ],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    return OpencodeRun(done.returncode, done.stdout, done.stderr)


@contextmanager
def opencode_serving(
    opencode: Path, home: Path, project: Path, base_url: str, session: dict[str, Any]
) -> Iterator[tuple[str, str]]:
    """``opencode serve`` on loopback in ``project``, its model at ``base_url``; yields its
    URL and the id of a session created with ``session`` (``{"title": ...}`` spares the
    request for a title)."""
    env = _env(home)
    (project / "opencode.json").write_text(json.dumps(opencode_config(base_url)))
    port = free_port()
    server = subprocess.Popen(
        [str(opencode), "serve", "--hostname", "127.0.0.1", "--port", str(port)],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                created = call_api(f"{url}/session", session, 5)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SetupError("opencode serve did not answer") from None
                time.sleep(0.2)
        yield url, str(created["id"])
    finally:
        server.terminate()
        try:
            server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()


def run_opencode_structured(
    opencode: Path, home: Path, project: Path, base_url: str, *, schema: dict[str, Any]
) -> dict[str, Any]:
    """One prompt asking for structured output, the way opencode's SDK asks: ``opencode
    serve`` on loopback, ``POST /session``, then ``POST /session/{id}/message`` with
    ``format: {type: json_schema, schema}``. opencode then offers a ``StructuredOutput``
    tool and sends ``toolChoice: "required"``, which its Anthropic provider writes as
    ``tool_choice: {"type": "any"}``. ``opencode run`` has no option for it. Returns the
    assistant message opencode answered with (its ``info.error`` says what failed)."""
    with opencode_serving(opencode, home, project, base_url, {}) as (url, session):
        body = {
            "parts": [{"type": "text", "text": "Read hello.txt and answer in the schema."}],
            "model": {"providerID": "anthropic", "modelID": model()},
            "format": {"type": "json_schema", "schema": schema},
        }
        answer: dict[str, Any] = call_api(f"{url}/session/{session}/message", body, 180)
        return answer


def call_api(url: str, body: dict[str, Any] | None, timeout: float) -> Any:
    """opencode's HTTP API: a POST of ``body``, or a GET without one; the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())
