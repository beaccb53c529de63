"""The Landlock wall around the CLI (proxy/claude_code/sandbox.py), with ``cat`` standing for
the CLI: what it may read, what it may not, and when it is not put up."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from bridge_rules.proxy.claude_code import sandbox

pytestmark = pytest.mark.skipif(sandbox.abi() == 0, reason="this kernel has no Landlock")
CAT = shutil.which("cat") or "/bin/cat"


def run(
    cmd: list[str], scratch: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    wrapped, why = sandbox.wrapped(cmd, str(scratch), env)
    assert why is None, why
    return subprocess.run(wrapped, capture_output=True, text=True, timeout=30, check=False)


def test_the_cli_reads_its_scratch_and_nothing_of_the_project_or_home(tmp_path: Path) -> None:
    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    scratch.mkdir()
    outside.mkdir()
    token = secrets.token_hex(16)
    (scratch / "mine.txt").write_text(token, encoding="utf-8")
    (outside / "canary.txt").write_text(token, encoding="utf-8")
    assert run([CAT, str(scratch / "mine.txt")], scratch).stdout == token
    for path in (outside / "canary.txt", Path(__file__), Path.home() / ".bashrc"):
        done = run([CAT, str(path)], scratch)
        assert token not in done.stdout
        assert done.returncode != 0, path
    # not /proc either: the proxy's own environment (its keys) is there
    environ = run([CAT, "/proc/1/environ"], scratch)
    assert environ.returncode != 0
    assert environ.stdout == ""


def test_a_script_cli_is_supervised_without_the_wall_and_says_why(tmp_path: Path) -> None:
    script = tmp_path / "claude"
    script.write_text('#!/bin/sh\necho hi "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    cmd = [str(script), "--print"]
    launched, why = sandbox.wrapped(cmd, str(tmp_path))
    assert "script" in (why or "")
    assert launched[launched.index("--") + 1 :] == cmd
    assert not any(a.startswith(("r:", "w:")) for a in launched[: launched.index("--")])
    done = subprocess.run(launched, capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stdout) == (0, "hi --print\n")


def test_the_files_and_config_dir_its_environment_names_stay_readable(tmp_path: Path) -> None:
    scratch, config = tmp_path / "scratch", tmp_path / "config"
    scratch.mkdir()
    config.mkdir()
    token = secrets.token_hex(16)
    cert = tmp_path / "ca.pem"
    cert.write_text(token, encoding="utf-8")
    (config / ".credentials.json").write_text(token, encoding="utf-8")
    env = {"SSL_CERT_FILE": str(cert), "CLAUDE_CONFIG_DIR": str(config)}
    assert run([CAT, str(cert)], scratch, env).stdout == token
    assert run([CAT, str(config / ".credentials.json")], scratch, env).stdout == token
    assert run([CAT, str(cert)], scratch).returncode != 0  # named by nothing: not readable
