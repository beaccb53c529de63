"""``bridge-rules transform`` on malformed and hostile payloads.

Valid JSON of any shape passes through with every value intact (integers of any
size, any depth up to ``jsonio.STACK_PARSER_LIMIT`` characters past ~1,000 levels); what
is not JSON, or too deep and large to read, is a located ``BR501`` and exit 2. Never 3.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bridge_rules.cli import transform_cmd  # registers `transform` on the app
from bridge_rules.cli.app import app

assert transform_cmd is not None
BIG = "18446744073709551617"
HUGE = "9" * 5000
VALID: list[tuple[str, bytes]] = [
    ("big-int", b'{"model": "claude-sonnet-4-5", "x": ' + BIG.encode() + b"}"),
    ("huge-int", b'{"model": "m", "x": ' + HUGE.encode() + b"}"),
    ("negative-huge", b'{"x": [-' + HUGE.encode() + b"]}"),
    ("deep", b"[" * 3000 + b"]" * 3000),
    ("list", b"[1, 2]"),
    ("number", b"42"),
    ("string", b'"hi"'),
    ("null", b"null"),
    ("unknown-keys", b'{"x-y": {"z": [' + BIG.encode() + b"]}, \"messages\": 7}"),
    # Beside the timeout, which the rules convert (ms <-> s), in a field no rule touches.
    ("tool-use-big", b'{"role": "assistant", "content": [{"type": "tool_use", "id": "t", '
     b'"name": "Bash", "input": {"command": "ls", "timeout": 120000, "count": '
     + BIG.encode() + b"}}]}"),
]  # fmt: skip
INVALID: list[tuple[str, bytes, str]] = [
    ("empty", b"", "1:1"),
    ("truncated", b'{"a":', "1:6"),
    ("nan", b'{"a": NaN}', "1:7"),
    ("two-documents", b'{"a":1}{"b":2}', "1:8"),
    ("bom", b'\xef\xbb\xbf{"a": 1}', "1:1"),
    ("latin1", b'{"a": "caf\xe9"}', "1:"),
    ("binary", bytes(range(256)), "1:"),
    ("lone-surrogate", b'{"a": "\\ud800"}', "1:8"),
]


def _run(tmp_path: Path, command: str, data: bytes, *extra: str) -> tuple[int, str, str]:
    path = tmp_path / "in.json"
    path.write_bytes(data)
    result = CliRunner().invoke(app, ["transform", command, str(path), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", ["outbound", "inbound"])
@pytest.mark.parametrize(("name", "data"), VALID, ids=[v[0] for v in VALID])
def test_valid_json_passes_with_every_value(
    command: str, name: str, data: bytes, tmp_path: Path
) -> None:
    code, out, err = _run(tmp_path, command, data)
    assert code == 0, err
    for number in (BIG, HUGE):
        assert data.count(number.encode()) == out.count(number), name
    if name == "deep":
        assert out.strip() == data.decode()


@pytest.mark.parametrize("command", ["outbound", "inbound"])
@pytest.mark.parametrize(("name", "data", "where"), INVALID, ids=[v[0] for v in INVALID])
def test_invalid_json_is_a_located_error(
    command: str, name: str, data: bytes, where: str, tmp_path: Path
) -> None:
    code, out, err = _run(tmp_path, command, data)
    assert code == 2
    assert out == ""
    assert f"in.json:{where}" in err
    assert "error[BR501] invalid JSON" in err
    assert "Traceback" not in err


def test_pretty_keeps_big_integers(tmp_path: Path) -> None:
    code, out, _err = _run(tmp_path, "inbound", VALID[0][1], "--pretty")
    assert code == 0
    assert BIG in out


@pytest.mark.parametrize(
    "data", [bytes(range(256)) * 4, b"data: {\n\n" * 100, b"event: x\n" * 1000]
)
def test_streams_of_junk_pass_through(data: bytes, tmp_path: Path) -> None:
    code, out, _err = _run(tmp_path, "stream", data)
    assert code == 0
    assert out.encode("utf-8", "surrogateescape") == data or len(out) > 0


def test_json_too_deep_and_too_large_to_read_is_a_located_error(tmp_path: Path) -> None:
    depth = 200_000  # past the C parsers, and over jsonio.STACK_PARSER_LIMIT characters
    code, out, err = _run(tmp_path, "outbound", b"[" * depth + b"]" * depth)
    assert (code, out) == (2, "")
    assert "in.json:1:1: error[BR501] cannot read JSON: nested deeper than" in err
