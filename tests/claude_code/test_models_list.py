"""``GET /v1/models`` on a Claude Code route: the Models API's list shape, read by the
official SDK (``client.models.list()`` pages through it, ``retrieve`` reads one).

What is listed is what the CLI offers, as its ``initialize`` answer names it, aliases
resolved: a stand-in CLI replays the answer the real 2.1.330 gave (data/, captured
2026-11-28), and the e2e test asks the real one. Without an answer from the CLI the route's
rules list the models. Oracles: the SDK's own types, the captured answer read by hand below.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import anthropic
import pytest
from servers import running_app

import bridge_rules
from bridge_rules.proxy import ProxyConfig, create_app
from bridge_rules.proxy.config import CLAUDE_CODE

DATA = Path(__file__).resolve().parent / "data" / "initialize-2.1.330.json"
RELEASED = {  # the reference notes' release dates, newest first
    "claude-haiku-5-5": "2026-10-07",
    "claude-sonnet-5-5": "2026-09-28",
    "claude-opus-5-5": "2026-09-22",
    "claude-fable-5-1": "2026-09-01",
}


def _client(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-ant-dummy", max_retries=0)


def _stand_in(tmp_path: Path) -> str:
    """A CLI that answers ``initialize`` with the captured answer, as the real one does."""
    script = tmp_path / "claude"
    answer = json.loads(DATA.read_text())
    reply = {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": "REQ",
            "response": {"models": answer["models"], "claude_code_version": "2.1.330"},
        },
    }
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        "ask = json.loads(sys.stdin.readline())\n"
        f"reply = json.loads({json.dumps(json.dumps(reply))})\n"
        "reply['response']['request_id'] = ask['request_id']\n"
        "print(json.dumps({'type': 'system', 'subtype': 'noise'}))\n"
        "print(json.dumps(reply), flush=True)\nsys.stdin.read()\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_the_cli_s_models_are_listed_with_its_aliases_resolved(tmp_path: Path) -> None:
    config = ProxyConfig(upstream=CLAUDE_CODE, claude_path=_stand_in(tmp_path))
    app = create_app(config, engine=bridge_rules.load())
    with running_app(app) as url:
        client = _client(url)
        listed = list(client.models.list(limit=2))  # two a page: paging exercised
        fable = client.models.retrieve("claude-fable-5-2")
    captured = json.loads(DATA.read_text())["models"]
    resolved = list(dict.fromkeys(m["resolvedModel"] for m in captured))  # aliases merged
    assert sorted(m.id for m in listed) == sorted(resolved)
    assert len(listed) == 4  # default and opus are one model
    dated = [m.id for m in listed if m.created_at.year > 1970]
    assert dated == ["claude-haiku-5-5", "claude-sonnet-5-5", "claude-opus-5-5"]  # newest first
    assert listed[-1].id == "claude-fable-5-2"  # not in the profile: the epoch, as the API says
    assert fable.display_name == "Fable 5.2"  # the CLI's own description names it
    names = {m.id: m.display_name for m in listed}
    assert names["claude-opus-5-5"] == "Claude Opus 5.5"  # the profile's name wins


def test_without_the_cli_the_route_s_rules_list_the_models(tmp_path: Path) -> None:
    config = ProxyConfig(upstream=CLAUDE_CODE, claude_path=str(tmp_path / "no-such-claude"))
    app = create_app(config, engine=bridge_rules.load())
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
    config = ProxyConfig(upstream=CLAUDE_CODE, claude_path=str(tmp_path / "no-such-claude"))
    app = create_app(config, engine=bridge_rules.load(rules))
    with running_app(app) as url:
        page = _client(url).models.list()
    assert page.data[0].id == "claude-opus-5-5-fast"
    assert page.first_id == "claude-opus-5-5-fast"
    assert page.last_id == "claude-fable-5-1"
    assert page.has_more is False
