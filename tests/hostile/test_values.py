"""Values a rule converts or matches are never lost on hostile input (issue 26): a lone
surrogate in text RE2 matches, a float with more digits than a unit conversion keeps."""

from __future__ import annotations

import pytest
from tests.hostile.http_kit import Lost, counted

import bridge_rules
from bridge_rules.patterns import compile_pattern


@pytest.mark.parametrize(
    ("model", "opens"),
    [("claude\ud800", True), ("\udfffclaude-sonnet-4-5", True), ("gpt-\ud83d", False)],
)
def test_a_model_id_with_a_lone_surrogate_is_matched_not_a_traceback(
    model: str, opens: bool
) -> None:
    with counted():
        result = bridge_rules.load().outbound({"model": model, "messages": []})
        assert result.gate_open is opens
        if result.payload["model"] != model:
            raise Lost(result.payload)


@pytest.mark.parametrize(
    ("ms", "seconds"),
    [
        (133247.61194143188, 133.24761194143187),  # the value: 17 digits
        (0.30000000000000004, 0.00030000000000000003),
        (1.7976931348623157e308, 1.7976931348623157e305),
        (120000, 120),
        (1001, 1.001),
    ],
)
def test_every_bash_timeout_is_converted_to_seconds(ms: float, seconds: float) -> None:
    with counted():
        call = bridge_rules.load().inbound_call("Bash", {"command": "x", "timeout": ms}, ["bash"])
        got = call.arguments["timeout"]
        if got != seconds:
            raise Lost(f"{ms} ms became {got!r}, not {seconds!r} s")


def test_a_substitution_gives_back_every_surrogate_it_did_not_replace() -> None:
    with counted():
        pattern = compile_pattern("a(.)b")
        if pattern.sub(r"<\1>", "\ud800xa\udfffb\udc00") != "\ud800x<\udfff>\udc00":
            raise Lost("a surrogate was changed")
