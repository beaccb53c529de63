"""``serve --bindings-dir``: bindings read at start and on reload, for the next request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from canned import Canned
from servers import running_app
from test_serve_settings import GOOD
from tests.proxy import loopback
from tests.proxy.test_gate_env import canned

from bridge_rules import RulesError
from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.config import ServeSettings
from bridge_rules.ruleset import load_runtime

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "ask"}],
    "tools": [{"name": "ask_user", "input_schema": {"type": "object"}}],
}
__all__ = ["canned"]  # the canned upstream of the gate tests, as a fixture here too
ASK = "bridge-rules: 1\nbindings:\n  - {local: ask_user, wire: AskUserQuestion}\n"


def _sent_name(canned: Canned, proxy: str) -> str:
    r = loopback.post(proxy + "/v1/messages", content=orjson.dumps(REQUEST))
    assert r.status_code == 200, r.text
    return str(orjson.loads(canned.seen[-1].body)["tools"][0]["name"])


def test_the_directory_is_read_at_start_and_again_on_reload(canned: Canned, tmp_path: Path) -> None:
    (tmp_path / "ask.yaml").write_text(ASK)
    app = create_app(ProxyConfig(upstream=canned.url, bindings_dir=str(tmp_path)), load_runtime())
    with running_app(app) as proxy:
        assert _sent_name(canned, proxy) == "AskUserQuestion"
        (tmp_path / "ask.yaml").write_text(ASK.replace("AskUserQuestion", "mcp__ui__ask"))
        assert _sent_name(canned, proxy) == "AskUserQuestion"  # nothing read meanwhile
        app.reload_bindings()
        assert _sent_name(canned, proxy) == "mcp__ui__ask"  # the next request
        (tmp_path / "ask.yaml").write_text(ASK.replace("wire:", "wyre:"))
        with pytest.raises(RulesError) as exc:
            app.reload_bindings()
        assert [d.code for d in exc.value.diagnostics] == ["BR101", "BR102"]  # wire, wyre
        assert _sent_name(canned, proxy) == "mcp__ui__ask"  # a refused reload changes nothing


def test_new_rules_get_the_directory_laid_over_them(canned: Canned, tmp_path: Path) -> None:
    (tmp_path / "ask.yaml").write_text(ASK)
    app = create_app(ProxyConfig(upstream=canned.url, bindings_dir=str(tmp_path)), load_runtime())
    app.use_rules(app.rules.with_bindings([], origin="unused"))
    assert app.engine.outbound_name("ask_user") == "AskUserQuestion"
    assert app.engine.binding_origins == [str(tmp_path / "ask.yaml")]


def test_a_refused_binding_stops_the_start(canned: Canned, tmp_path: Path) -> None:
    (tmp_path / "ask.yaml").write_text("bridge-rules: 1\nnames: []\n")
    with pytest.raises(RulesError) as exc:
        create_app(ProxyConfig(upstream=canned.url, bindings_dir=str(tmp_path)), load_runtime())
    assert [d.code for d in exc.value.diagnostics] == ["BR410"]


def test_the_setting_must_name_a_directory(tmp_path: Path) -> None:
    options = {**GOOD, "bindings_dir": str(tmp_path / "missing")}
    settings, problems = ServeSettings.check(options, environ={})
    assert settings is None
    assert [p.message for p in problems] == [
        f"--bindings-dir must be a directory, got '{tmp_path / 'missing'}'"
    ]
    settings, _ = ServeSettings.check({**options, "bindings_dir": str(tmp_path)}, environ={})
    assert settings is not None
    assert settings.config.bindings_dir == str(tmp_path)


def test_serve_refuses_to_start_on_a_refused_binding(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("bridge-rules: 1\nnames: []\n")
    serve = Path(sys.executable).parent / "bridge-rules"
    args = ["serve", "--upstream", "http://127.0.0.1:9", "--port", "0"]
    done = subprocess.run(
        [str(serve), *args, "--bindings-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert f"{tmp_path / 'x.yaml'}:2:1: error[BR410]" in done.stderr
    assert "Traceback" not in done.stderr
