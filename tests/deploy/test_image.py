"""The Dockerfile's steps work: its own install and start commands, run as the image runs them.

No container engine runs on most test machines, so the test reads the Dockerfile and runs its
steps in a fresh venv of the system Python: the build stage's ``pip wheel``, the runtime
stage's ``pip install`` of that wheel (from the package registry, as the build does), then its
ENTRYPOINT with its ENV as the unprivileged ``nobody`` (who can write nothing but its own
TMPDIR, as in a read-only root filesystem with a tmpfs /tmp) against rules laid out
read-only as a kubelet ConfigMap volume. The proxy must answer /healthz, /readyz and a
request rewritten by those rules, and the HEALTHCHECK command must pass. Where ``docker info``
succeeds the image itself is built, run read-only and probed; otherwise that test is skipped
and says why. The listen address is loopback here, not the image's 0.0.0.0: tests serve on
127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fake_upstream import FakeUpstream
from tests.deploy import kubelet
from tests.deploy.dockerfile import Stage, parse
from tests.ports import free_port
from tests.proxy import loopback
from tests.proxy.test_proxy_cli import wait_healthy

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
RULES = (
    "bridge-rules: 1\nextends: default\nnames:\n  - kind: aliases\n    id: companions\n"
    "    map: {search_docs: mcp__docs__search}\n"
)
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "search_docs", "input_schema": {"type": "object"}}],
}
SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.fixture(scope="module")
def stages() -> dict[str, Stage]:
    return parse(DOCKERFILE)


def test_the_dockerfile_is_multi_stage_non_root_and_read_only_ready(
    stages: dict[str, Stage],
) -> None:
    build, proxy = stages["build"], stages["proxy"]
    assert any(cmd.startswith("pip wheel") for cmd in build.all("RUN"))
    assert proxy.base == build.base == "${PYTHON_IMAGE}"
    assert any("--from=build" in arg for arg in proxy.all("COPY"))
    user = proxy.one("USER").split(":")[0]
    assert user.isdigit()
    assert int(user) != 0
    env = proxy.env()
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["TMPDIR"] == env["HOME"] == "/tmp"
    assert proxy.exec_form("ENTRYPOINT") == ["bridge-rules", "serve"]
    check = proxy.one("HEALTHCHECK")
    assert "curl" not in check
    assert "/healthz" in check
    claude = stages["claude-code"]
    assert claude.base == "proxy"
    assert any("[claude-code]" in cmd for cmd in claude.all("RUN"))
    assert claude.all("USER")[-1] == proxy.one("USER")
    assert stages["<default>"].base == "proxy"


@pytest.fixture(scope="module")
def installed(stages: dict[str, Stage]) -> Iterator[Path]:
    """A fresh venv, world-readable and owned by root, with the wheel installed as the
    Dockerfile installs it."""
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no system Python at /usr/bin/python3 to make a venv nobody can run")
    top = Path(tempfile.mkdtemp(prefix="bridge-rules-image-", dir="/tmp"))
    top.chmod(0o755)
    try:
        wheels = top / "wheels"
        (build_cmd,) = [c for c in stages["build"].all("RUN") if c.startswith("pip wheel")]
        argv = shlex.split(build_cmd.replace("/wheels", str(wheels)))
        assert argv[:2] == ["pip", "wheel"]
        assert argv[-1] == "."
        # Offline: the shared venv's hatchling builds it, as the build stage's pip would.
        subprocess.run(
            [sys.executable, "-m", *argv[:-1], "--no-build-isolation", str(ROOT)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        (wheel,) = wheels.glob("bridge_rules-*.whl")
        venv = top / "venv"
        subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", str(venv)], check=True, timeout=120)
        (install_cmd,) = [c for c in stages["proxy"].all("RUN") if c.startswith("pip install")]
        first = install_cmd.split("&&")[0].replace("/wheels/*.whl", str(wheel))
        argv = shlex.split(first)
        assert argv[:2] == ["pip", "install"]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-m", *argv],
            check=False,
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        yield venv
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _as_nobody_env(stages: dict[str, Stage], home: Path, port: int) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", **stages["proxy"].env()}
    env.update(HOME=str(home), TMPDIR=str(home), BRIDGE_RULES_HOST="127.0.0.1")
    env["BRIDGE_RULES_PORT"] = str(port)
    return env


def test_the_installed_wheel_serves_as_nobody_from_read_only_rules(
    stages: dict[str, Stage], installed: Path, upstream: FakeUpstream
) -> None:
    nobody = pwd.getpwnam("nobody")
    top = installed.parent
    tmpfs = top / "tmp"
    tmpfs.mkdir()
    os.chown(tmpfs, nobody.pw_uid, nobody.pw_gid)
    rules = kubelet.mount(top / "rules", {"rules.yaml": RULES})
    port = free_port()
    env = _as_nobody_env(stages, tmpfs, port)
    entry = stages["proxy"].exec_form("ENTRYPOINT")
    argv = [str(installed / "bin" / entry[0]), *entry[1:]]
    proc = subprocess.Popen(
        [*argv, "--upstream", upstream.url, "--rules", str(rules), "--workers", "2"],
        env=env,
        user=nobody.pw_uid,
        group=nobody.pw_gid,
        extra_groups=[],
        cwd=tmpfs,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        ready = loopback.get(url + "/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["rules_hash"]
        answer = loopback.post(url + "/v1/messages", json=REQUEST, timeout=30)
        assert answer.status_code == 200, answer.text
        assert upstream.requests[-1].json["tools"][0]["name"] == "mcp__docs__search"
        check = stages["proxy"].one("HEALTHCHECK").split(" CMD ", 1)[1]
        command = [str(installed / "bin" / "python") if w == "python" else w for w in _json(check)]
        probe = subprocess.run(
            command,
            check=False,
            env=env,
            user=nobody.pw_uid,
            group=nobody.pw_gid,
            extra_groups=[],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert probe.returncode == 0, probe.stderr
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert not list(installed.rglob("__pycache__/*bridge_rules*")), "bytecode was written"


def _json(text: str) -> list[str]:
    value = json.loads(text)
    assert isinstance(value, list)
    return [str(v) for v in value]


def _docker_unavailable() -> str | None:
    if shutil.which("docker") is None:
        return "no docker client on PATH"
    done = subprocess.run(
        ["docker", "info"], check=False, capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        return "no container engine: `docker info` failed: " + done.stderr.strip()[-300:]
    return None


def test_the_image_builds_runs_read_only_and_answers_its_probes(upstream: FakeUpstream) -> None:
    reason = _docker_unavailable()
    if reason is not None:
        pytest.skip(reason)
    tag = "bridge-rules-test:latest"
    subprocess.run(["docker", "build", "-t", tag, str(ROOT)], check=True, timeout=1800)
    port = free_port()
    name = f"bridge-rules-test-{port}"
    subprocess.run(
        ["docker", "run", "-d", "--rm", "--name", name, "--read-only", "--tmpfs", "/tmp",
         "--network", "host", "-e", "BRIDGE_RULES_HOST=127.0.0.1",
         "-e", f"BRIDGE_RULES_PORT={port}", "-e", f"BRIDGE_RULES_UPSTREAM={upstream.url}", tag],
        check=True, timeout=120,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if loopback.get(url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            subprocess.run(["sleep", "0.1"], check=True)
        assert loopback.get(url + "/healthz").status_code == 200
        assert loopback.get(url + "/readyz").status_code == 200
        user = subprocess.run(
            ["docker", "exec", name, "id", "-u"], capture_output=True, text=True, check=True
        )
        assert user.stdout.strip() != "0"
    finally:
        subprocess.run(["docker", "rm", "-f", name], check=False, capture_output=True, timeout=60)
