"""Install and drive the real pi CLI (``@mariozechner/pi-coding-agent``) in a scratch dir.

The recipe is the one in the pi-e2e.md reference note: a private HOME and
agent dir whose ``models.json`` points pi's anthropic-messages provider at a
base URL, ``PI_OFFLINE=1``, one ``pi -p`` run with stdin closed.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from npm_install import NpmInstallError, npm_install
from toolchain import agent_path

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
HELLO = "Hello from the pi e2e test file.\nSecond line: 42.\n"


class PiInstallError(RuntimeError):
    pass


def install_pi(cache: Path) -> Path:
    """``pi`` from ``cache`` (toolchain.cache_dir()), installing it with npm the first time."""
    try:
        return npm_install(cache, PI_PACKAGE, PI_VERSION, "pi")
    except NpmInstallError as exc:
        raise PiInstallError(str(exc)) from None


@dataclass
class PiRun:
    returncode: int
    stdout: str
    stderr: str
    project: Path


OAUTH_KEY = "sk-ant-oat01-dummy-not-a-real-token"
"""A key of this shape puts pi-ai in its OAuth ("subscription") mode: Claude Code's tool
names with pi's own schemas, a bearer token, Claude Code's headers."""


def run_pi(
    pi: Path,
    scratch: Path,
    base_url: str,
    prompt: str,
    *extra: str,
    api_key: str = "dummy-not-a-real-key",
    model: str = "claude-sonnet-4-5",
    reasoning: bool = False,
) -> PiRun:
    """One ``pi -p`` in ``scratch``; ``model`` is declared in ``models.json`` (a reasoning
    one when ``reasoning``: pi then sends ``thinking`` when run with ``--thinking``)."""
    agent, home, project = scratch / "agent", scratch / "home", scratch / "project"
    for d in (agent, home, project):
        d.mkdir(parents=True, exist_ok=True)
    (project / "hello.txt").write_text(HELLO)
    models = {
        "providers": {
            "fakeanthropic": {
                "baseUrl": base_url,
                "api": "anthropic-messages",
                "apiKey": api_key,
                "models": [
                    {
                        "id": model,
                        "contextWindow": 200000,
                        "maxTokens": 64000,
                        **({"reasoning": True} if reasoning else {}),
                    }
                ],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    env = {
        "PATH": agent_path(),  # pi's launcher runs `node`: the venv's
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
    }
    done = subprocess.run(
        [
            str(pi),
            "--offline",
            "--no-session",
            "--provider",
            "fakeanthropic",
            "--model",
            model,
            *extra,
            "-p",
            prompt,
        ],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return PiRun(done.returncode, done.stdout, done.stderr, project)
