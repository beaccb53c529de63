"""``count_tokens`` when the upstream has none: Claude Code's gateway protocol makes the
endpoint optional, and a client estimates locally on a 404. An upstream without it answers
404, 405 or 501 in its own words (an HTML page, an empty body); the client gets a 404 in the
API's error shape, which the official SDK reads as ``NotFoundError``. An upstream that counts
is passed through as before, and a 404 elsewhere is left alone."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest
from canned import Canned, Reply
from servers import running_app

import bridge_rules
from bridge_rules.proxy import ProxyConfig, create_app

ASK = {"model": "claude-sonnet-5-5", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def canned() -> Iterator[Canned]:
    with Canned() as server:
        yield server


def _client(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-ant-dummy", max_retries=0)


@pytest.mark.parametrize(
    ("status", "body", "ctype"),
    [
        (404, b"<html>Not Found</html>", "text/html"),
        (405, b"", None),
        (501, b'{"detail": "not implemented"}', "application/json"),
    ],
)
def test_an_upstream_without_count_tokens_is_a_404_the_client_estimates_on(
    canned: Canned, status: int, body: bytes, ctype: str | None
) -> None:
    canned.reply = Reply(status=status, body=[body], content_type=ctype)
    app = create_app(ProxyConfig(upstream=canned.url), engine=bridge_rules.load())
    with running_app(app) as url, pytest.raises(anthropic.NotFoundError) as err:
        _client(url).messages.count_tokens(**ASK)  # type: ignore[arg-type]
    assert err.value.status_code == 404
    assert err.value.body == {
        "type": "error",
        "error": {"type": "not_found_error", "message": err.value.body["error"]["message"]},
    }
    assert "estimate the count locally" in err.value.body["error"]["message"]
    assert canned.seen[-1].path == "/v1/messages/count_tokens"


def test_a_counting_upstream_and_other_404s_pass_through(canned: Canned) -> None:
    canned.reply = Reply(body=[b'{"input_tokens": 17}'])
    app = create_app(ProxyConfig(upstream=canned.url), engine=bridge_rules.load())
    with running_app(app) as url:
        assert _client(url).messages.count_tokens(**ASK).input_tokens == 17  # type: ignore[arg-type]
        canned.reply = Reply(status=405, body=[b"nope"], content_type="text/plain")
        with pytest.raises(anthropic.APIStatusError) as err:
            _client(url).messages.create(max_tokens=5, **ASK)  # type: ignore[arg-type]
    assert err.value.status_code == 405  # only count_tokens is optional in the protocol
