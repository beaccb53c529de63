"""The debug log never holds a credential, and its file is private (issue 26)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.hostile.http_kit import READ_CALL, REQUEST, counted, proxies, upstream
from tests.proxy import loopback
from tests.proxy.canned import Reply

from bridge_rules.cli.app import click_command
from bridge_rules.debuglog import DebugLog, DebugLogRefused
from bridge_rules.proxy.config import private_file_problem
from bridge_rules.proxy.headers import LOGGED_HEADERS, LOGGED_QUERY

SECRETS = {
    "x-session-id": "sess-SECRET-1",
    "x-csrf-token": "csrf-SECRET-2",
    "x-amz-security-token": "amz-SECRET-3",
    "proxy-authorization": "Basic SECRET-4",
    "my-odd-header": "odd-SECRET-5",
}


def _written(path: Path) -> str:
    """The log once its first line is there: it is written just after the answer went."""
    deadline = time.monotonic() + 5
    while not path.read_text().endswith("\n") and time.monotonic() < deadline:
        time.sleep(0.01)
    return path.read_text()


def test_the_debug_log_redacts_every_header_and_parameter_it_does_not_know(
    tmp_path: Path,
) -> None:
    with counted(), upstream() as up, proxies() as make:
        up.reply = Reply(headers=[("x-upstream-session", "up-SECRET-6")], body=[READ_CALL])
        path = tmp_path / "debug.jsonl"
        proxy = make(up.url, debug_log=str(path))
        query = "?beta=true&sig=SECRET-7&session=SECRET-8&X-Amz-Signature=SECRET-9"
        r = loopback.post(
            proxy + "/v1/messages" + query,
            json=REQUEST,
            headers={**SECRETS, "anthropic-version": "2023-06-01"},
        )
        assert r.status_code == 200
        text = _written(path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert "SECRET" not in text
        record = json.loads(text.splitlines()[0])
        headers = dict(record["request_headers"])
        assert headers["anthropic-version"] == "2023-06-01"  # allowlisted: kept
        assert headers["x-session-id"] == "<redacted>"
        assert dict(record["query"])["beta"] == "true"
        assert dict(record["query"])["sig"] == "<redacted>"


def test_a_debug_log_open_to_others_is_refused(tmp_path: Path) -> None:
    with counted():
        path = tmp_path / "debug.jsonl"
        path.write_text("")
        path.chmod(0o644)
        with pytest.raises(DebugLogRefused, match="mode 0644"):
            DebugLog(path)
        assert "mode 0644" in (private_file_problem(str(path)) or "")
        path.chmod(0o600)
        DebugLog(path).close()
        assert private_file_problem(str(path)) is None


def test_a_debug_log_path_that_is_a_symlink_is_refused_not_followed(tmp_path: Path) -> None:
    with counted():
        target = tmp_path / "elsewhere"
        link = tmp_path / "debug.jsonl"
        link.symlink_to(target)
        with pytest.raises(DebugLogRefused, match="symbolic link"):
            DebugLog(link)
        assert not target.exists()
        assert "symbolic link" in (private_file_problem(str(link)) or "")


def test_a_debug_log_path_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    with counted():
        fifo = tmp_path / "debug.jsonl"
        os.mkfifo(fifo, 0o600)
        with pytest.raises(DebugLogRefused, match="not a regular file"):
            DebugLog(fifo)


def test_the_documented_allowlist_is_the_one_the_log_applies() -> None:
    with counted():
        text = " ".join((Path(__file__).parents[2] / "docs" / "proxy.md").read_text().split())
        listed = text.split("an allowlist names it (headers: ", 1)[1].split("; query:", 1)[0]
        assert {name.strip(" `") for name in listed.split(",")} == LOGGED_HEADERS
        assert text.split("; query: ", 1)[1].startswith("`beta`)")
        assert {"beta"} == LOGGED_QUERY


@pytest.mark.parametrize("kind", ["symlink", "mode 0644", "fifo"])
def test_serve_refuses_a_debug_log_it_cannot_keep_private(tmp_path: Path, kind: str) -> None:
    with counted():
        path = tmp_path / "debug.jsonl"
        if kind == "symlink":
            path.symlink_to(tmp_path / "elsewhere")
        elif kind == "fifo":
            os.mkfifo(path, 0o600)
        else:
            path.write_text("")
            path.chmod(0o644)
        args = ["serve", "--upstream", "http://127.0.0.1:9", "--debug-log", str(path)]
        result = CliRunner().invoke(click_command(), args)
        assert result.exit_code == 2, result.output
        assert f"--debug-log {path}" in result.output
        assert "Traceback" not in result.output
