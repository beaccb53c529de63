"""``serve --keys``: who may call, seen from outside a real ``serve --workers 2``.

The keys are made by the real ``bridge-rules keys new``; the clients are the official
``anthropic`` SDK and plain HTTP; the oracle for what went upstream is the fake upstream's
own record of every request, and for what a key may reach, two upstreams that are told
apart by which one recorded the request. Every refusal goes through the leak check of
tests/proxy/clientkeys.py.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest
from fake_upstream import FakeUpstream
from tests.proxy import loopback
from tests.proxy.clientkeys import Keys, anthropic_error, assert_no_leak
from tests.proxy.test_serve_signals import REQUEST, Serve, serving

CREDENTIAL = "sk-ant-upstream-credential-0123456789"


@pytest.fixture
def second() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


def sdk(url: str, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)


def ask(client: anthropic.Anthropic) -> str:
    reply = client.messages.create(
        model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )
    return reply.id


def test_a_key_from_the_sdk_is_let_in_and_named_in_the_log_never_shown(
    upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = Keys(tmp_path / "keys.yaml", credentials=[CREDENTIAL])
    (tmp_path / "cred").write_text(CREDENTIAL + "\n", encoding="utf-8")
    alpha = keys.new("team-alpha", f"upstream_key: {{file: {tmp_path / 'cred'}}}")
    beta = keys.new("team-beta")
    args = ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", "2"]
    args += ["--debug-log", str(tmp_path / "debug.jsonl")]
    with serving(args) as server:
        assert ask(sdk(server.url, alpha)) == "msg_fake"
        sent = upstream.requests[-1]
        assert sent.header("x-api-key") == [CREDENTIAL]  # the key stands for the credential
        assert sent.header("authorization") == []
        assert ask(sdk(server.url, beta)) == "msg_fake"
        sent = upstream.requests[-1]  # no credential of its own: the client's key stays here
        assert sent.header("x-api-key") == []
        assert sent.header("authorization") == []
        with pytest.raises(anthropic.AuthenticationError) as refused:
            ask(sdk(server.url, "brk_" + "x" * 43))
        assert refused.value.status_code == 401
        assert_no_leak(refused.value.response, keys)
        count = len(upstream.requests)
        r = loopback.post(server.url + "/v1/messages", json=REQUEST)
        anthropic_error(r, 401, "authentication_error")
        assert_no_leak(r, keys)
        assert len(upstream.requests) == count  # a refused request never goes upstream
        server.stop()
    log = "\n".join(server.lines) + (tmp_path / "debug.jsonl").read_text(encoding="utf-8")
    for secret in (alpha, beta, CREDENTIAL):
        assert secret not in log
    named = [json.loads(line).get("key") for line in server.lines if line.startswith('{"ts"')]
    assert {"team-alpha", "team-beta"} <= set(named)
    debug = [json.loads(line) for line in (tmp_path / "debug.jsonl").read_text().splitlines()]
    assert {d.get("key") for d in debug} >= {"team-alpha", "team-beta"}


def test_a_revoked_key_is_refused_by_every_worker_after_sighup(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    gone = keys.new("leaving")
    kept = keys.new("staying")
    args = ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", "2"]
    with serving(args) as server:
        assert ask(sdk(server.url, gone)) == "msg_fake"
        keys.revoke("leaving")
        server.proc.send_signal(signal.SIGHUP)
        server.wait_for("serve.reload")
        deadline = time.monotonic() + 20
        answers: list[int] = []
        while len(answers) < 8:  # new connections: each worker, after its restart
            status = loopback.post(
                server.url + "/v1/messages", json=REQUEST, headers={"x-api-key": gone}
            ).status_code
            answers = [*answers, status] if status == 401 else []
            assert time.monotonic() < deadline, "a worker still lets the revoked key in"
        r = loopback.post(server.url + "/v1/messages", json=REQUEST, headers={"x-api-key": gone})
        anthropic_error(r, 401, "authentication_error")
        assert_no_leak(r, keys)
        assert ask(sdk(server.url, kept)) == "msg_fake"


def test_a_keys_file_that_breaks_on_reload_keeps_the_old_keys(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    key = keys.new("steady")
    for workers in ("1", "2"):
        args = ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", workers]
        text = keys.path.read_text(encoding="utf-8")
        with serving(args) as server:
            keys.path.write_text(text + "  - name: broken\n", encoding="utf-8")
            server.proc.send_signal(signal.SIGHUP)
            failed = server.wait_for(
                "serve.reload_failed" if workers == "2" else "serve.keys_reload_failed"
            )
            assert "sha256" in json.dumps(failed)
            assert ask(sdk(server.url, key)) == "msg_fake"
        keys.path.write_text(text, encoding="utf-8")


def routes_config(tmp_path: Path, a: FakeUpstream, b: FakeUpstream, keys: Path) -> Path:
    path = tmp_path / "serve.yaml"
    path.write_text(
        f"keys: {keys}\nroutes:\n"
        f"  - {{name: strict, upstream: '{a.url}', default: true}}\n"
        f"  - {{name: lenient, upstream: '{b.url}', model: 'claude-opus-*'}}\n",
        encoding="utf-8",
    )
    return path


def test_a_key_pinned_to_a_route_goes_there_whatever_it_asks(
    upstream: FakeUpstream, second: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    pinned = keys.new("pinned-team", "routes: [strict]")
    free = keys.new("free-team")
    config = routes_config(tmp_path, upstream, second, keys.path)
    with serving(["--config", str(config), "--workers", "2"]) as server:
        url = server.url
        asks = [
            ({"x-bridge-rules-route": "lenient"}, REQUEST),
            ({}, {**REQUEST, "model": "claude-opus-4-1"}),
            ({"x-bridge-rules-route": "lenient"}, {**REQUEST, "model": "claude-opus-4-1"}),
        ]
        for headers, body in asks:
            r = loopback.post(
                url + "/v1/messages", json=body, headers={"x-api-key": pinned, **headers}
            )
            assert r.status_code == 200, r.text
        assert len(upstream.requests) == 3
        assert second.requests == []
        for path in ("/r/lenient/v1/messages", "/r/nowhere/v1/messages", "/r/LENIENT/v1/messages"):
            r = loopback.post(url + path, json=REQUEST, headers={"x-api-key": pinned})
            anthropic_error(r, 403, "permission_error")
            assert_no_leak(r, keys, allowed_names=("pinned-team",))
            assert "lenient" not in r.text
            assert "strict" not in r.text
        assert second.requests == []
        r = loopback.post(
            url + "/v1/messages",
            json=REQUEST,
            headers={"x-api-key": free, "x-bridge-rules-route": "lenient"},
        )
        assert r.status_code == 200
        assert len(second.requests) == 1


def test_route_choice_off_for_all_sends_everyone_to_the_default(
    upstream: FakeUpstream, second: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    key = keys.new("anyone")
    config = routes_config(tmp_path, upstream, second, keys.path)
    with serving(["--config", str(config), "--no-route-choice", "--workers", "2"]) as server:
        for headers, body in [
            ({"x-bridge-rules-route": "lenient"}, REQUEST),
            ({}, {**REQUEST, "model": "claude-opus-4-1"}),
        ]:
            r = loopback.post(
                server.url + "/v1/messages", json=body, headers={"x-api-key": key, **headers}
            )
            assert r.status_code == 200, r.text
        assert len(upstream.requests) == 2
        assert second.requests == []
        r = loopback.post(
            server.url + "/r/lenient/v1/messages", json=REQUEST, headers={"x-api-key": key}
        )
        assert r.status_code == 200
        assert len(second.requests) == 1


def test_a_keys_policy_narrows_its_requests(upstream: FakeUpstream, tmp_path: Path) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    reader = keys.new("reader", "policy: [read_only]")
    writer = keys.new("writer")
    tools = [{"name": t, "input_schema": {"type": "object"}} for t in ("read", "write", "bash")]
    body = {**REQUEST, "tools": tools}
    with serving(
        ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", "2"]
    ) as server:

        def sent(headers: dict[str, str]) -> list[str]:
            r = loopback.post(server.url + "/v1/messages", json=body, headers=headers)
            assert r.status_code == 200, r.text
            return [t["name"] for t in upstream.requests[-1].json["tools"]]

        everything = sent({"x-api-key": writer})
        by_header = sent({"x-api-key": writer, "x-bridge-rules-policy": "read_only"})
        assert by_header != everything  # the oracle: what the switch does by header
        assert sent({"x-api-key": reader}) == by_header
        # a header asks for more switches, never fewer
        assert sent({"x-api-key": reader, "x-bridge-rules-policy": "no_web"}) == by_header


def test_a_keys_policy_switch_the_rules_lack_stops_serve(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    keys.new("odd", "policy: [no_such_switch]")
    server = Serve(["--upstream", upstream.url, "--keys", str(keys.path)])
    assert server.proc.wait(timeout=30) == 2
    server._reader.join(timeout=5)
    assert "no_such_switch" in "\n".join(server.lines)
    assert "Traceback" not in "\n".join(server.lines)


def test_metrics_and_readyz_detail_need_an_admin_key(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    admin = keys.new("ops-admin", "admin: true")
    user = keys.new("plain-user")
    with serving(
        ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", "2"]
    ) as server:
        url = server.url
        assert loopback.get(url + "/healthz").status_code == 200
        for method in ("GET", "HEAD"):
            r = loopback.request(method, url + "/metrics")
            assert r.status_code == 401
            r = loopback.request(method, url + "/metrics", headers={"x-api-key": user})
            assert r.status_code == 403
        r = loopback.get(url + "/metrics", headers={"x-api-key": user})
        anthropic_error(r, 403, "permission_error")
        assert_no_leak(r, keys, allowed_names=("plain-user",))
        for headers in ({}, {"x-api-key": user}, {"x-api-key": "brk_wrong"}):
            r = loopback.get(url + "/readyz", headers=headers)
            assert r.json() == {"status": "ready"}
            assert_no_leak(r, keys)
        r = loopback.get(url + "/readyz", headers={"authorization": f"Bearer {admin}"})
        assert r.json()["rules_hash"]
        assert r.json()["status"] == "ready"
        r = loopback.get(url + "/metrics", headers={"authorization": f"Bearer {admin}"})
        assert r.status_code == 200
        assert "bridge_rules_requests" in r.text


def test_watch_takes_up_a_revocation_by_itself(upstream: FakeUpstream, tmp_path: Path) -> None:
    keys = Keys(tmp_path / "keys.yaml")
    gone = keys.new("rotated-out")
    args = [
        "--upstream",
        upstream.url,
        "--keys",
        str(keys.path),
        "--watch",
        "--watch-interval",
        "0.2",
    ]
    with serving(args) as server:
        assert ask(sdk(server.url, gone)) == "msg_fake"
        keys.revoke("rotated-out")
        server.wait_for("serve.keys_reload")
        r = loopback.post(server.url + "/v1/messages", json=REQUEST, headers={"x-api-key": gone})
        anthropic_error(r, 401, "authentication_error")
