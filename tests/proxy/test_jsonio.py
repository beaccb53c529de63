"""jsonio: orjson's output whenever orjson is exact; exact integers and any depth otherwise."""

from __future__ import annotations

import json
import re
from typing import Any
from unittest import mock

import msgspec
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge_rules import jsonio, jsonslow

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
    ids=["past-u64", "past-i64", "huge-ints", "deep-arrays", "deep-objects"],
)
def test_exact_and_deep_documents_round_trip(text: bytes) -> None:
    assert jsonio.dumps(jsonio.loads(text)) == text


def test_a_lone_surrogate_is_refused_as_orjson_refuses_it() -> None:
    with pytest.raises(jsonio.JSONDecodeError):
        jsonio.loads(b'["a\\ud800b",' + b"1" * 25 + b"]")


@pytest.mark.parametrize(
    "text",
    [
        b'["a\\ud800b",' + b"1" * 5000 + b"]",  # an integer past int()'s limit: the exact path
        b"[" + b"1" * 5000 + b',{"\\udc00":1}]',
        b"[" * 1100 + b'"\\ud83d"' + b"]" * 1100,  # past the recursion limit
    ],
    ids=["string-first", "key-after-integer", "deep"],
)
def test_a_lone_surrogate_is_refused_on_every_path(text: bytes) -> None:
    with pytest.raises(jsonio.JSONDecodeError, match="surrogate"):
        jsonio.loads(text)


def test_a_surrogate_pair_escape_is_read_on_every_path() -> None:
    for text in (b'["\\ud83d\\ude00",1]', b'["\\ud83d\\ude00",' + b"1" * 5000 + b"]"):
        assert jsonio.loads(text)[0] == "\U0001f600"


@pytest.mark.parametrize(
    "text",
    [b"", b"[1,]", b'{"a" 1}', b"[1] x", b"01", b"[NaN]", b"{1:2}", b'"\xff"', b"[" * 2000],
)
def test_invalid_json_is_a_decode_error_on_both_paths(text: bytes) -> None:
    exact = b"[" + b"1" * 5000 + b"," + text + b"]"  # past int()'s limit: the exact path
    deep = b"[" * 1100 + b"0," + text + b"]" * 1100  # past the recursion limit: the stack parser
    for doc in (text, exact, deep):
        with pytest.raises(jsonio.JSONDecodeError):
            jsonio.loads(doc)


def test_non_json_values_are_a_type_error() -> None:
    with pytest.raises(TypeError):
        jsonio.dumps([2**70, object()])
    with pytest.raises(TypeError):
        jsonio.dumps({1: 2**70})


digit_strings = st.from_regex(r"\A[a-z:]{0,3}[0-9]{19,40}[a-z]{0,3}\Z")
# Floats below 2**63 in magnitude: a larger one may be an integer orjson rounded, and is
# read again by the slow parser (tested below).
small_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(min_value=-9e18, max_value=9e18)
    | st.text()
)
values_with_long_runs = st.recursive(
    small_scalars | digit_strings,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=3) | digit_strings, inner, max_size=4)
    ),
    max_leaves=30,
)


@given(values_with_long_runs)
def test_long_digit_runs_in_strings_keep_the_fast_path(value: Any) -> None:
    # A nanosecond timestamp or a snowflake id in a tool result is a run of 19+ digits
    # inside a string: the C parser reads it, never the explicit-stack one (20x slower).
    def refuse(text: str) -> None:
        raise AssertionError("the slow parser ran")

    data = orjson.dumps(value)
    with mock.patch.object(jsonio, "_Parser", refuse):
        assert jsonio.loads(data) == orjson.loads(data)


@pytest.mark.parametrize(
    "text",
    [
        b'["1732550000000000000000",18446744073709551616]',
        b'{"ts":"1732550000000000000000","x":-9223372036854775809}',
        b'["1732550000000000000000",' + b"9" * 400 + b"]",
    ],
)
def test_a_long_run_beside_a_big_integer_is_still_exact(text: bytes) -> None:
    assert jsonio.dumps(jsonio.loads(text)) == text


def test_a_large_float_beside_a_long_run_is_still_a_float() -> None:
    parsed = jsonio.loads(b'["1732550000000000000000",1e19,-1.5e300,9223372036854775807]')
    assert parsed == ["1732550000000000000000", 1e19, -1.5e300, 2**63 - 1]
    assert [type(v) for v in parsed] == [str, float, float, int]


def test_a_big_integer_is_read_by_the_c_parser_not_value_by_value() -> None:
    # The standard library's C parser keeps integers exact; the explicit-stack parser (20
    # times slower) is only for nesting past the recursion limit.
    text = orjson.dumps({"messages": [{"n": i, "t": "x"} for i in range(1000)]})[:-1]
    text += b',"big":18446744073709551617,"huge":' + b"7" * 5000 + b"}"

    def refuse(text: str) -> None:
        raise AssertionError("the explicit-stack parser ran")

    with mock.patch.object(jsonio, "_Parser", refuse):
        parsed = jsonio.loads(text)
    assert parsed["big"] == 2**64 + 1
    assert parsed["huge"] == jsonio.BigNumber("7" * 5000)
    assert jsonio.dumps(parsed) == text


def test_only_the_path_to_a_big_integer_is_written_value_by_value() -> None:
    value = {"messages": [{"n": i, "t": "x"} for i in range(1000)], "tail": [[[2**70]]]}
    written = []
    scalar = jsonslow._scalar

    def counted(item: Any) -> bytes:
        written.append(item)
        return scalar(item)

    with mock.patch.object(jsonslow, "_scalar", counted):
        data = jsonio.dumps(value)
    assert data == orjson.dumps({**value, "tail": [[[0]]]}).replace(
        b"[[[0]]]", b"[[[1180591620717411303424]]]"
    )
    assert written == ["messages", "tail", 2**70]  # the keys on the way, and the integer


@pytest.mark.parametrize("depth", [300, 1000, 3000])
def test_a_deep_value_inside_a_wide_body_is_written_whole(depth: int) -> None:
    text = orjson.dumps({"messages": [{"n": i} for i in range(100)]})[:-1]
    text += b',"deep":' + b"[" * depth + b"1" + b"]" * depth + b"}"
    assert jsonio.dumps(jsonio.loads(text)) == text


EDIT_BYTES = list(b'{}[],:"\\0123456789.eE+-tfnrulsa \t\n\x00\x01\x7f\xff\xc3\xa9')
edits = st.lists(
    st.tuples(st.integers(0, 1 << 16), st.sampled_from(EDIT_BYTES), st.sampled_from("idr")),
    min_size=1,
    max_size=3,
)


@given(values, edits)
def test_what_orjson_refuses_is_refused(value: Any, changes: list[tuple[int, int, str]]) -> None:
    """Reading is msgspec's, errors orjson's: over JSON damaged at random, both agree on
    what is not JSON (and on the value of what is, integers beyond 64 bits aside)."""
    data = bytearray(orjson.dumps(value))
    for where, byte, how in changes:
        at = where % (len(data) + 1)
        if how == "i" or at == len(data):
            data.insert(at, byte)
        elif how == "d":
            del data[at]
        else:
            data[at] = byte
    doc = bytes(data)
    try:
        expected = orjson.loads(doc)
    except orjson.JSONDecodeError:
        with pytest.raises(jsonio.JSONDecodeError):
            jsonio.loads(doc)
        return
    got = jsonio.loads(doc)
    if not re.search(rb"[0-9]{19}", doc):  # no integer orjson would round
        assert got == expected


def test_a_deep_document_is_read_whatever_error_msgspec_gives_for_the_depth() -> None:
    # msgspec raises RecursionError for the depth today; should it say "malformed" instead,
    # orjson's depth error still sends the document to the explicit-stack parser.
    text = b"[" * 2000 + b"1" + b"]" * 2000

    def malformed(raw: bytes) -> None:
        raise msgspec.DecodeError("JSON is malformed")

    with mock.patch.object(jsonio, "_decode", malformed):
        assert jsonio.dumps(jsonio.loads(text)) == text


def test_json_nested_past_the_c_parsers_is_read_up_to_the_limit() -> None:
    # The explicit-stack parser reads ~1 MB a second: a larger body that deep is refused at
    # once instead of holding the worker (32 MB of brackets took about a minute).
    fits = jsonio.STACK_PARSER_LIMIT // 2 - 1
    text = b"[" * fits + b"]" * fits
    assert jsonio.dumps(jsonio.loads(text)) == text
    over = fits + 1000
    for doc in (b"[" * over + b"]" * over, b'{"a":' + b"[" * over + b"]" * over + b"}"):
        with pytest.raises(jsonio.NestedTooDeep, match="nested deeper"):
            jsonio.loads(doc)
    assert issubclass(jsonio.NestedTooDeep, jsonio.JSONDecodeError)  # callers' handling holds


@pytest.mark.parametrize(("token", "says"), [("1e400", "out of range"), ("NaN", "not JSON")])
def test_a_number_json_or_a_double_lacks_is_located_on_the_exact_path(
    token: str, says: str
) -> None:
    text = b"[" + b"1" * 5000 + b"," + token.encode() + b"]"  # past int()'s limit first
    with pytest.raises(jsonio.JSONDecodeError, match=says) as caught:
        jsonio.loads(text)
    assert caught.value.pos == 5002


# ------------------------------------------------------------------ top_field
def _field_as_loads_reads_it(data: bytes, key: str) -> Any:
    payload = jsonio.loads(data)
    return payload.get(key) if isinstance(payload, dict) else None


def _outcome(read: Any) -> tuple[str, bytes]:
    """What a reader gave, written out (a 3000-deep value cannot be compared with ==)."""
    try:
        return ("value", jsonio.dumps(read()))
    except jsonio.JSONDecodeError:
        return ("refused", b"")


@given(
    st.one_of(
        values,
        anywhere_ints,
        st.dictionaries(st.sampled_from(["model", "a", "mod"]), values | anywhere_ints),
    ),
    st.booleans(),
)
def test_top_field_gives_what_loads_gives(value: Any, spaced: bool) -> None:
    data = json.dumps(value).encode() if spaced else jsonio.dumps(value)
    assert jsonio.top_field(data, "model") == _field_as_loads_reads_it(data, "model")


EDGES = {
    "duplicate": b'{"model":"a","model":"b"}',  # the last one, as loads keeps it
    "nested": b'{"a":{"model":"nested"}}',  # only the top level counts
    "surrogate": b'{"model":"\\ud800x"}',  # a lone surrogate: refused both ways
    "surrogate-elsewhere": b'{"a":"\\udc00","model":"m"}',
    "huge-int": b'{"model":1' + b"9" * 5000 + b"}",  # past int()'s limit under the key
    "huge-elsewhere": b'{"a":[1,' + b"9" * 5000 + b'],"model":"m"}',
    "deep": b'{"model":' + b"[" * 3000 + b"]" * 3000 + b"}",  # deeper than msgspec goes
    "array": b"[1,2]",
    "string": b'"model"',
    "null": b"null",
}


@pytest.mark.parametrize("data", list(EDGES.values()), ids=list(EDGES))
def test_top_field_edges_agree_with_loads(data: bytes) -> None:
    expected = _outcome(lambda: _field_as_loads_reads_it(data, "model"))
    assert _outcome(lambda: jsonio.top_field(data, "model")) == expected


@pytest.mark.parametrize("data", [b"", b'{"model":"a"', b'{"model":"a"} x', b"{'model':1}"])
def test_top_field_of_what_is_not_json_raises_as_loads_does(data: bytes) -> None:
    with pytest.raises(jsonio.JSONDecodeError):
        jsonio.top_field(data, "model")
