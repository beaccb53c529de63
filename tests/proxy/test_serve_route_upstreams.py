"""``serve --config`` whose routes each name their upstream starts without a top-level one
(issue 35.1), as real ``serve`` processes with several workers; a route that names none,
when ``serve`` has none either, is refused by name and place."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from canned import TEXT_ANSWER, Canned
from serve_process import serving
from tests.proxy import loopback

REQUEST = {"model": "claude-sonnet-4-5", "max_tokens": 9,
           "messages": [{"role": "user", "content": "hi"}],
           "tools": [{"name": "read", "input_schema": {"type": "object"}},
                     {"name": "write", "input_schema": {"type": "object"}}]}  # fmt: skip


def run_serve(config: Path) -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).with_name("bridge-rules")
    args = [str(cli), "serve", "--config", str(config), "--port", "1"]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)


def test_routes_with_their_own_upstreams_need_no_top_level_one(tmp_path: Path) -> None:
    with Canned() as one, Canned() as two:
        one.reply.body = two.reply.body = [TEXT_ANSWER]
        settings = tmp_path / "serve.yaml"
        settings.write_text(
            "workers: 2\nroutes:\n"
            f"  - {{name: ro, upstream: '{one.url}', policy: [read_only],\n"
            "      model: 'claude-opus-*'}\n"
            f"  - {{name: rw, upstream: '{two.url}', default: true}}\n",
            encoding="utf-8",
        )
        with serving("--config", str(settings)) as url:
            for _ in range(4):  # several workers answer; each knows both routes
                assert loopback.post(url + "/r/ro/v1/messages", json=REQUEST).status_code == 200
                assert loopback.post(url + "/r/rw/v1/messages", json=REQUEST).status_code == 200
            assert loopback.post(url + "/v1/messages", json=REQUEST).status_code == 200
            by_header = {"x-bridge-rules-route": "ro"}
            assert loopback.post(url + "/v1/messages", json=REQUEST, headers=by_header).is_success
            opus = {**REQUEST, "model": "claude-opus-4-1"}
            assert loopback.post(url + "/v1/messages", json=opus).status_code == 200
            ready = loopback.get(url + "/readyz")
            assert ready.status_code == 200, ready.text
            assert set(ready.json()["routes"]) == {"ro", "rw"}
    assert len(one.seen) == 6  # four by path, one by header, one by model
    assert len(two.seen) == 5  # four by path, one as the default
    assert {t["name"] for t in json.loads(one.seen[0].body)["tools"]} == {"Read"}
    assert {t["name"] for t in json.loads(two.seen[0].body)["tools"]} == {"Read", "Write"}


def test_routes_that_all_use_claude_code_need_no_top_level_upstream(tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")
    settings = tmp_path / "serve.yaml"
    settings.write_text(
        "workers: 2\nroutes:\n"
        "  - {name: a, upstream: claude-code, policy: [read_only]}\n"
        "  - {name: b, upstream: claude-code}\n",
        encoding="utf-8",
    )
    with serving("--config", str(settings)) as url:
        assert loopback.get(url + "/healthz").status_code == 200
        assert loopback.get(url + "/r/nosuch/v1/messages").status_code == 404


def test_a_route_without_an_upstream_is_named_with_its_place(tmp_path: Path) -> None:
    settings = tmp_path / "serve.yaml"
    settings.write_text(
        "port: 8787\nroutes:\n"
        "  - {name: has, upstream: 'http://127.0.0.1:9'}\n"
        "  - {name: lacks, rules: [default]}\n"
        "  - name: also\n"
        "    policy: [read_only]\n",
        encoding="utf-8",
    )
    done = run_serve(settings)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert f"--config {settings}:4:5: route 'lacks' names no upstream" in lines[0]
    assert f"--config {settings}:5:5: route 'also' names no upstream" in lines[1]
    assert len(lines) == 2
    assert "Missing option" not in done.stderr
    assert "Traceback" not in done.stderr


def test_no_routes_and_no_upstream_is_still_the_missing_option(tmp_path: Path) -> None:
    settings = tmp_path / "serve.yaml"
    settings.write_text("port: 8787\n", encoding="utf-8")
    done = run_serve(settings)
    assert done.returncode == 2
    assert "Missing option '--upstream'" in done.stderr
