"""The real pi CLI through ``serve --keys --workers 2``: its configured API key is the
client key. With it pi's tool round trip works and the upstream sees the proxy's own
credential; with a wrong key, or one revoked and reloaded by SIGHUP, pi gets the 401 and
the upstream nothing. The oracle is the fake upstream's record and pi's own output.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from fake_upstream import FakeUpstream, tool_results
from pi_driver import run_pi
from tests.proxy.clientkeys import Keys
from tests.proxy.test_serve_signals import serving

pytestmark = pytest.mark.e2e
CREDENTIAL = "sk-ant-pi-upstream-credential-77"


def test_pi_with_a_key_a_wrong_key_and_a_revoked_key(
    pi: Path, upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = Keys(tmp_path / "keys.yaml", credentials=[CREDENTIAL])
    monkeypatch.setenv("PI_TEAM_UPSTREAM", CREDENTIAL)
    key = keys.new("pi-team", "upstream_key: {env: PI_TEAM_UPSTREAM}")
    args = ["--upstream", upstream.url, "--keys", str(keys.path), "--workers", "2"]
    with serving(args) as server:
        run = run_pi(pi, tmp_path / "good", server.url, "Do the thing.", api_key=key)
        assert run.returncode == 0, run.stderr
        assert len(upstream.requests) == 2, run.stdout + run.stderr
        assert {r.header("x-api-key")[0] for r in upstream.requests} == {CREDENTIAL}
        assert tool_results(upstream.requests[1].json)[0]["is_error"] is False
        assert "FAKE-UPSTREAM-FINAL" in run.stdout

        wrong = run_pi(pi, tmp_path / "wrong", server.url, "Do it.", api_key="brk_" + "z" * 43)
        said = wrong.stdout + wrong.stderr
        assert "authentication_error" in said or "401" in said, said
        assert len(upstream.requests) == 2
        for secret in keys.secrets():
            assert secret not in said

        keys.revoke("pi-team")
        server.proc.send_signal(signal.SIGHUP)
        server.wait_for("serve.reload")
        for attempt in range(3):  # each run is a new connection: any worker
            late = run_pi(pi, tmp_path / f"revoked{attempt}", server.url, "Again.", api_key=key)
            said = late.stdout + late.stderr
            assert "authentication_error" in said or "401" in said, said
        assert len(upstream.requests) == 2
