"""``GET /v1/models`` on a Claude Code route: the Models API's list shape, read by the
official SDK (``client.models.list()`` pages through it, ``retrieve`` reads one), answered
from the route's rules without starting the CLI. The oracle is the SDK's own types and the
profile's dates written by hand below."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from servers import running_app

import bridge_rules
from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.config import CLAUDE_CODE

RELEASED = {  # the reference notes' release dates, newest first
    "claude-haiku-5-5": "2026-10-07",
    "claude-sonnet-5-5": "2026-09-28",
    "claude-opus-5-5": "2026-09-22",
    "claude-fable-5-1": "2026-09-01",
}


def _client(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-ant-dummy", max_retries=0)


def test_the_sdk_pages_through_the_packaged_models(tmp_path: Path) -> None:
    app = create_app(ProxyConfig(upstream=CLAUDE_CODE), engine=bridge_rules.load())
    with running_app(app) as url:
        client = _client(url)
        listed = list(client.models.list(limit=1))  # one a page: paging exercised
        one = client.models.retrieve("claude-opus-5-5")
        with pytest.raises(anthropic.NotFoundError):
            client.models.retrieve("claude-nosuch")
        with pytest.raises(anthropic.BadRequestError):
            client.models.list(limit=0)
    assert [m.id for m in listed] == list(RELEASED)
    assert [m.created_at.date().isoformat() for m in listed] == list(RELEASED.values())
    assert {m.type for m in listed} == {"model"}
    assert one.display_name == "Claude Opus 5.5"


def test_a_route_s_rules_add_a_model(tmp_path: Path) -> None:
    rules = tmp_path / "mine.yaml"
    rules.write_text(
        "bridge-rules: 1\nextends: default\nmodels:\n  claude-opus-5-5-fast:\n"
        "    display_name: Opus fast\n    created_at: '2026-11-01T00:00:00Z'\n",
        encoding="utf-8",
    )
    app = create_app(ProxyConfig(upstream=CLAUDE_CODE), engine=bridge_rules.load(rules))
    with running_app(app) as url:
        page = _client(url).models.list()
    assert page.data[0].id == "claude-opus-5-5-fast"
    assert page.first_id == "claude-opus-5-5-fast"
    assert page.last_id == "claude-fable-5-1"
    assert page.has_more is False
