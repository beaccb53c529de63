"""Sealed ids: the original comes back byte for byte, only this key's seals open, and
nothing a client sends can make opening raise or unpack more than a seal holds."""

from __future__ import annotations

import base64
import re
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge_rules.sealing import MARK, MAX_SEALED_CHARS, Sealer, SealKeyError, may_be_sealed

KEY = b"0123456789abcdef-test"
SEALER = Sealer(KEY)
API_ID = re.compile(r"[a-zA-Z0-9_-]+")
ids = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1
)


@given(call_id=ids, payload=st.binary(max_size=2000))
def test_a_sealed_id_opens_to_the_original_and_keeps_the_api_charset(
    call_id: str, payload: bytes
) -> None:
    sealed = SEALER.seal(call_id, payload)
    assert API_ID.fullmatch(sealed)
    assert may_be_sealed(sealed)
    assert SEALER.open(sealed) == (call_id, payload)
    assert Sealer(b"another key, 16+ bytes").open(sealed) is None


@given(call_id=st.text(min_size=1), payload=st.binary(max_size=200))
def test_any_original_id_comes_back_even_one_holding_the_marker(
    call_id: str, payload: bytes
) -> None:
    for original in (call_id, call_id + MARK, MARK + call_id + MARK + "0abc"):
        assert SEALER.open(SEALER.seal(original, payload)) == (original, payload)


@given(st.text())
def test_anything_else_does_not_open(value: str) -> None:
    assert SEALER.open(value) is None
    assert SEALER.open(value + MARK + "1" + "a" * 40) is None


@given(
    call_id=ids,
    payload=st.binary(min_size=1, max_size=300),
    at=st.integers(min_value=0),
    char=st.sampled_from("abcdefghijklmnopqrstuvwxyz234567ABZ01_-"),
)
def test_a_changed_character_breaks_the_seal(
    call_id: str, payload: bytes, at: int, char: str
) -> None:
    """Any one character changed, anywhere, to any character of the id's alphabet: the
    seal does not open. (It used to allow a change that opened to the same payload, which
    let base32's twin spellings of the body's last character through; see 4a2b6b3.)"""
    sealed = SEALER.seal(call_id, payload)
    i = at % len(sealed)
    changed = sealed[:i] + char + sealed[i + 1 :]
    assert SEALER.open(changed) is None or changed == sealed


def test_long_repetitive_payloads_are_compressed() -> None:
    payload = b"grep FAIL | head -n 5 " * 50
    assert len(SEALER.seal("toolu_1", payload)) < len(payload)


def test_a_forged_compressed_body_is_refused_before_it_is_unpacked() -> None:
    bomb = zlib.compress(b"\0" * 50_000_000)
    body = base64.b32encode(bomb).decode().rstrip("=").lower()
    assert SEALER.open(f"toolu_1{MARK}1{body}{'a' * 26}") is None


@pytest.mark.parametrize("key", [b"", b"short"])
def test_a_short_key_is_refused(key: bytes) -> None:
    with pytest.raises(SealKeyError, match="at least 16 bytes"):
        Sealer(key)


def test_the_key_comes_from_the_environment() -> None:
    assert Sealer.from_env({}) is None
    assert Sealer.from_env({"BRIDGE_RULES_SEAL_KEY": ""}) is None
    sealer = Sealer.from_env({"BRIDGE_RULES_SEAL_KEY": KEY.decode()})
    assert sealer is not None
    assert sealer.open(SEALER.seal("t", b"x")) == ("t", b"x")


SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


@given(call_id=st.text(st.one_of(st.characters(), SURROGATES)), payload=st.binary(max_size=50))
def test_an_upstream_id_of_any_characters_seals_and_opens(call_id: str, payload: bytes) -> None:
    """A lone surrogate or any non-ASCII an upstream's JSON holds: no UnicodeEncodeError."""
    assert SEALER.open(SEALER.seal(call_id, payload)) == (call_id, payload)


def test_past_the_bound_nothing_is_read() -> None:
    sealed = SEALER.seal("t", b"x")
    assert SEALER.open(sealed) == ("t", b"x")
    padded = "t" * (MAX_SEALED_CHARS - len(sealed) + 1) + sealed
    assert SEALER.open(padded) is None
    assert not may_be_sealed(padded)
