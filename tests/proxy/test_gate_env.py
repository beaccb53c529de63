"""The gate's environment overrides, as ``serve`` reads them: once, when the app is made."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from canned import Canned, Reply
from servers import running_app
from tests.proxy import loopback
from tests.proxy.test_proxy_http import REQUEST

from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.ruleset import load_runtime

DISABLE = "PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL"


@pytest.fixture
def canned() -> Iterator[Canned]:
    with Canned() as server:
        server.reply = Reply(body=[b'{"type":"message","role":"assistant","content":[]}'])
        yield server


def sent_tool(canned: Canned, app: object) -> str:
    with running_app(app) as proxy:
        r = loopback.post(proxy + "/v1/messages", content=orjson.dumps(REQUEST))
        assert r.status_code == 200, r.text
    return str(orjson.loads(canned.seen[-1].body)["tools"][0]["name"])


def test_the_environment_at_start_up_decides(
    canned: Canned, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DISABLE, raising=False)
    open_app = create_app(ProxyConfig(upstream=canned.url), load_runtime())
    monkeypatch.setenv(DISABLE, "1")
    closed_app = create_app(ProxyConfig(upstream=canned.url), load_runtime())
    assert sent_tool(canned, open_app) == "Read"  # made before the override was set
    assert sent_tool(canned, closed_app) == "read"  # the gate closed: sent untouched
