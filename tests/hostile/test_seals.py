"""Sealed ids from the attacker's side (issue 34, point 8).

A sealed id is a client's to send back, so anything can come back in its place: any
unicode, a lone surrogate, a megabyte, a seal cut short or with a character changed, a
genuine seal moved onto another call or another tool. None of it may raise, answer 500
or open a seal on a call it was not made for. The oracle for "passes as it is": what an
engine under another key writes for the same request (it can open nothing), and, through
a real ``serve``, the upstream receiving the client's command and output untouched.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from tests.hostile.http_kit import Lost, counted
from tests.proxy.canned import Canned, Reply

import bridge_rules
from bridge_rules.engine import Engine
from bridge_rules.sealing import MARK, MAX_SEALED_CHARS, Sealer

KEY = b"hostile-seal-key-0123456789abcdef"
GUARD = bridge_rules.load("pi-tool-guard", seal_key=KEY)
FOREIGN = bridge_rules.load("pi-tool-guard", seal_key=b"another deployment's key, 32 b")
OUTPUT = "ok a\nFAIL b\nok c\nFAIL d\n"
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
ANY_CHAR = st.one_of(st.characters(), SURROGATE)  # lone surrogates too, as JSON can hold them


def given_call(call_id: str, command: str, name: str = "bash") -> dict[str, Any]:
    """The ``tool_use`` block the agent gets from the proxy for a model's call."""
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {"command": command}}
    out: dict[str, Any] = GUARD.inbound({"content": [block]})["content"][0]
    return out


A = given_call("toolu_01A", "make 2>&1 | grep FAIL")
B = given_call("toolu_01B", "make test 2>&1 | head -n 1")


def request(*pairs: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """The agent's next request: each call in its history, then each call's result."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "tools": [
            {"name": "bash", "input_schema": {"type": "object"}},
            {"name": "read", "input_schema": {"type": "object"}},
        ],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call for call, _ in pairs]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": result_id, "content": OUTPUT}
                    for _, result_id in pairs
                ],
            },
        ],
    }


def wire(body: dict[str, Any]) -> bytes:
    """The body as a client writes it; a lone surrogate goes as its ``\\ud800`` escape."""
    return json.dumps(body).encode()


def sent(engine: Engine, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(engine.turn(wire(body), env={}).body)
    return out


def test_the_genuine_seals_open() -> None:
    """The control: unchanged, both calls get their id, command and filter back."""
    out = sent(GUARD, request((A, A["id"]), (B, B["id"])))
    uses, results = out["messages"][1]["content"], out["messages"][2]["content"]
    assert [u["id"] for u in uses] == ["toolu_01A", "toolu_01B"]
    assert [u["input"]["command"] for u in uses] == [
        "make 2>&1 | grep FAIL",
        "make test 2>&1 | head -n 1",
    ]
    assert [r["content"] for r in results] == ["FAIL b\nFAIL d\n", "ok a\n"]


def _opaque(body: dict[str, Any]) -> None:
    """``body`` goes out as under a key that opens nothing: every id passes as it is. A lone
    surrogate makes the body no JSON the codec reads: refused alike, before any seal."""
    with counted():
        try:
            ours = sent(GUARD, body)
        except ValueError:
            with pytest.raises(ValueError, match="surrogate"):
                sent(FOREIGN, body)
            return
        if ours != sent(FOREIGN, body):
            raise Lost(body["messages"][1:])


@st.composite
def tampered(draw: st.DrawFn) -> str:
    """A genuine seal changed the ways a client or a proxy in between could change it."""
    sealed = A["id"]
    how = draw(st.sampled_from(["cut", "flip", "insert", "swap_case", "grow", "tail"]))
    at = draw(st.integers(0, len(sealed) - 1))
    if how == "cut":
        return sealed[:at]
    if how == "flip":
        return (
            sealed[:at] + chr(ord(sealed[at]) ^ (1 << draw(st.integers(0, 6)))) + sealed[at + 1 :]
        )
    if how == "insert":
        return sealed[:at] + draw(st.text(ANY_CHAR, min_size=1, max_size=3)) + sealed[at:]
    if how == "swap_case":
        return sealed[:at] + sealed[at:].upper()
    if how == "grow":
        return sealed + draw(st.sampled_from(["a", "é", "\ud800", "\x00"])) * draw(
            st.integers(1, MAX_SEALED_CHARS)
        )
    return sealed[: -draw(st.integers(1, 26))] + draw(st.text(ANY_CHAR, min_size=1, max_size=26))


def test_no_seal_with_one_character_changed_opens() -> None:
    """Every single-character change a client could make within the alphabet, at every
    place: none opens. Found by the ``flip`` strategy through ``serve``: base32's last
    character carries bits its decoder drops, so ``...trqq...`` opened as ``...trsq...``."""
    sealer = Sealer(KEY)
    for sealed in (A["id"], B["id"], sealer.seal("x", b""), sealer.seal("toolu_9", b"z" * 7)):
        assert sealer.open(sealed) is not None
        changed = {
            sealed[:at] + c + sealed[at + 1 :]
            for at in range(len(sealed))
            for c in "abcdefghijklmnopqrstuvwxyz234567_01ABZ"
        } - {sealed}
        opened = sorted(forged for forged in changed if sealer.open(forged) is not None)
        assert opened == []


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forged=tampered())
def test_a_changed_seal_passes_as_it_is(forged: str) -> None:
    if forged == A["id"]:
        return
    _opaque(request(({**A, "id": forged}, forged)))


@settings(max_examples=examples(150), deadline=None)
@given(
    head=st.text(ANY_CHAR, max_size=40),
    rest=st.text(ANY_CHAR, max_size=60),
    flag=st.sampled_from(["0", "1", "2", ""]),
)
def test_any_unicode_after_a_marker_passes_as_it_is(head: str, rest: str, flag: str) -> None:
    """The issue's TypeError: a non-ASCII character where the tag goes."""
    forged = f"{head}{MARK}{flag}{rest}"
    with counted():
        assert Sealer(KEY).open(forged) is None
    _opaque(request(({**A, "id": forged}, forged)))


def test_a_megabyte_id_passes_as_it_is_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rejected before anything is decoded or hashed: the tag is never computed."""
    forged = A["id"] + "a" * (1 << 20)
    calls: list[object] = []
    real = Sealer._tag
    monkeypatch.setattr(Sealer, "_tag", lambda *a: calls.append(a) or real(*a))
    _opaque(request(({**A, "id": forged}, forged)))
    marked_foreign = "x" * (1 << 20) + MARK + "1" + "é" * 40
    _opaque(request(({**A, "id": marked_foreign}, marked_foreign)))
    assert calls == []


def test_a_genuine_seal_with_a_megabyte_original_id_is_not_opened() -> None:
    """The bound is on what is read, whoever made it: an upstream's 1 MB id loses its filter
    (the agent's output comes back whole), never the proxy's time."""
    sealed = Sealer(KEY).seal("t" * (1 << 20), b"[]")
    assert Sealer(KEY).open(sealed) is None


MOVED = {
    "swapped between two calls": [({**A, "id": B["id"]}, B["id"]), ({**B, "id": A["id"]}, A["id"])],
    "on another tool": [
        ({"type": "tool_use", "id": A["id"], "name": "read", "input": {"path": "x"}}, A["id"])
    ],
    "on another command": [({**A, "input": {"command": "rm -rf /tmp/x"}}, A["id"])],
    "on a call with no input": [({k: v for k, v in A.items() if k != "input"}, A["id"])],
}


@pytest.mark.parametrize("pairs", MOVED.values(), ids=MOVED.keys())
def test_a_seal_moved_onto_another_call_or_tool_is_not_opened_there(
    pairs: list[tuple[dict[str, Any], str]],
) -> None:
    """No ``tool_use`` opens, so neither its id nor its command changes, and the result that
    answers it stays closed too: still paired, unfiltered. From the message cache alike."""
    body = request(*pairs)
    body["messages"][0]["content"] = "x" * 100_000  # past the message cache's size floor
    with counted():
        for _ in range(2):  # the second time from the message cache
            out = json.loads(GUARD.outbound_bytes(wire(body)).body)
            uses, results = out["messages"][1]["content"], out["messages"][2]["content"]
            if uses != [call for call, _ in pairs] or [r["content"] for r in results] != [
                OUTPUT
            ] * len(pairs):
                raise Lost((uses, results))
            assert [r["tool_use_id"] for r in results] == [i for _, i in pairs]
        assert out == sent(GUARD, body)


def test_a_seal_replayed_with_its_whole_call_is_that_call() -> None:
    """Another conversation holding the same call (id, tool, command) is the call the seal
    was made for: the filter is the one the model asked for on it, nothing else."""
    elsewhere = request((A, A["id"]))
    elsewhere["messages"][0]["content"] = "a different conversation"
    out = sent(GUARD, elsewhere)
    assert out["messages"][1]["content"][0]["input"]["command"] == "make 2>&1 | grep FAIL"


# Through a real serve: the CLI, its workers, uvicorn, a client on loopback.


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Canned]]:
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    from serve_process import serving  # tests/e2e, on the path once http_kit is imported

    with Canned() as upstream:
        upstream.reply = Reply(body=[orjson.dumps(answer)])
        argv = ["--rules", "pi-tool-guard", "--upstream", upstream.url, "--workers", "2"]
        # Its log goes to a file: 400 requests' access lines filled the stderr pipe this
        # fixture held unread, and serve's workers blocked writing (the deep profile).
        with serving(*argv, env={"BRIDGE_RULES_SEAL_KEY": KEY.decode()}) as url:
            yield url, upstream


def _has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a UTF-16 surrogate (U+D800-U+DFFF, high or low), which no
    UTF-8 JSON can carry alone."""
    return any("\ud800" <= c <= "\udfff" for c in text)


def _through_serve(served: tuple[str, Canned], body: dict[str, Any]) -> dict[str, Any] | None:
    """What the upstream received for ``body``; None when ``serve`` refused it as no JSON."""
    url, upstream = served
    with upstream.lock:
        upstream.seen.clear()
    r = httpx.post(url + "/v1/messages", content=wire(body), timeout=60, trust_env=False)
    with counted():
        if r.status_code == 400 and _has_surrogate(json.dumps(body, ensure_ascii=False)):
            return None  # a lone surrogate: not JSON to the proxy's codec (never a 500)
        assert r.status_code == 200, (r.status_code, r.text[:300])
        seen: dict[str, Any] = json.loads(upstream.seen[-1].body)
    return seen


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    forged=st.one_of(
        tampered(), st.text(ANY_CHAR, max_size=30).map(lambda t: t + MARK + "0" + t * 9)
    )
)
def test_serve_passes_forged_seals_as_they_are(served: tuple[str, Canned], forged: str) -> None:
    if forged == A["id"]:
        return
    seen = _through_serve(served, request(({**A, "id": forged}, forged)))
    if seen is None:
        return
    use, result = seen["messages"][1]["content"][0], seen["messages"][2]["content"][0]
    with counted():
        if use["input"] != A["input"] or result["content"] != OUTPUT:
            raise Lost((use, result))
        assert use["id"] == result["tool_use_id"]  # still paired, whatever the id rule did


def test_serve_opens_the_genuine_seal_and_not_a_swapped_one(served: tuple[str, Canned]) -> None:
    seen = _through_serve(served, request((A, A["id"])))
    assert seen is not None
    assert seen["messages"][2]["content"][0]["content"] == "FAIL b\nFAIL d\n"
    seen = _through_serve(served, request(({**B, "id": A["id"]}, A["id"])))
    assert seen is not None
    assert seen["messages"][1]["content"][0] == {**B, "id": A["id"]}
    assert seen["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": A["id"],
        "content": OUTPUT,
    }
