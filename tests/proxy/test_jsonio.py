"""jsonio: orjson's output whenever orjson is exact; exact integers and any depth otherwise."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge_rules import jsonio

# JSON values orjson can hold exactly (64-bit integers, finite floats, valid strings).
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)
anywhere_ints = st.recursive(
    st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(values)
def test_the_fast_path_is_orjson(value: Any) -> None:
    data = orjson.dumps(value)
    assert jsonio.dumps(value) == data
    assert jsonio.loads(data) == orjson.loads(data)


@given(anywhere_ints)
def test_integers_of_any_size_round_trip_byte_exact(value: Any) -> None:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    parsed = jsonio.loads(text)
    assert parsed == value
    assert jsonio.dumps(parsed) == text


@given(values)
def test_the_slow_path_writes_what_orjson_writes(value: Any) -> None:
    wrapped = [value, 2**64 + 1]  # forces the slow path on both sides
    data = jsonio.dumps(wrapped)
    assert data == orjson.dumps(value).join([b"[", b",18446744073709551617]"])
    assert jsonio.loads(data) == wrapped


@pytest.mark.parametrize(
    "text",
    [
        b"18446744073709551617",
        b"-9223372036854775809",
        b'{"a":[1,' + b"7" * 5000 + b',{"b":-' + b"3" * 4400 + b"}]}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"k":' * 3000 + b"null" + b"}" * 3000,
    ],
)
def test_exact_and_deep_documents_round_trip(text: bytes) -> None:
    assert jsonio.dumps(jsonio.loads(text)) == text


def test_a_lone_surrogate_keeps_its_escape() -> None:
    text = b'["a\\ud800b",' + b"1" * 25 + b"]"
    assert jsonio.dumps(jsonio.loads(text)) == text


@pytest.mark.parametrize(
    "text",
    [b"", b"[1,]", b'{"a" 1}', b"[1] x", b"01", b"[NaN]", b"{1:2}", b'"\xff"', b"[" * 2000],
)
def test_invalid_json_is_a_decode_error_on_both_paths(text: bytes) -> None:
    for doc in (text, b"[" + b"1" * 25 + b"," + text + b"]"):
        with pytest.raises(jsonio.JSONDecodeError):
            jsonio.loads(doc)


def test_non_json_values_are_a_type_error() -> None:
    with pytest.raises(TypeError):
        jsonio.dumps([2**70, object()])
    with pytest.raises(TypeError):
        jsonio.dumps({1: 2**70})
