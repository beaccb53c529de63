"""Install and drive the real pi CLI (``@mariozechner/pi-coding-agent``) in a scratch dir.

The recipe is the one in ../shared/reference/pi-e2e.md: a private HOME and
agent dir whose ``models.json`` points pi's anthropic-messages provider at a
base URL, ``PI_OFFLINE=1``, one ``pi -p`` run with stdin closed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
HELLO = "Hello from the pi e2e test file.\nSecond line: 42.\n"


class PiInstallError(RuntimeError):
    pass


def install_pi(prefix: Path) -> Path:
    """``pi`` from ``prefix`` (a cache dir), installing it with npm the first time."""
    binary = prefix / "node_modules" / ".bin" / "pi"
    manifest = prefix / "node_modules" / PI_PACKAGE / "package.json"
    if (
        binary.exists()
        and manifest.exists()
        and json.loads(manifest.read_text()).get("version") == PI_VERSION
    ):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise PiInstallError("npm is not on PATH; the pi end-to-end tests install pi with it")
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{PI_PACKAGE}@{PI_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not binary.exists():
        raise PiInstallError(f"npm install {PI_PACKAGE}@{PI_VERSION} failed:\n{done.stderr}")
    return binary


@dataclass
class PiRun:
    returncode: int
    stdout: str
    stderr: str
    project: Path


def run_pi(pi: Path, scratch: Path, base_url: str, prompt: str, *extra: str) -> PiRun:
    agent, home, project = scratch / "agent", scratch / "home", scratch / "project"
    for d in (agent, home, project):
        d.mkdir(parents=True, exist_ok=True)
    (project / "hello.txt").write_text(HELLO)
    models = {
        "providers": {
            "fakeanthropic": {
                "baseUrl": base_url,
                "api": "anthropic-messages",
                "apiKey": "dummy-not-a-real-key",
                "models": [
                    {"id": "claude-sonnet-4-5", "contextWindow": 200000, "maxTokens": 64000}
                ],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    env = {
        "PATH": os.environ.get("PATH", ""),
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
            "claude-sonnet-4-5",
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
