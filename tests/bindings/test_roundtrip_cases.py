"""The cases issue 16 measured, one by one: each goes wire -> local -> wire (and back) exactly."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import bridge_rules
from bridge_rules.bindings.roundtrip import differences, same_json
from bridge_rules.diagnostics import RulesError

ENG = bridge_rules.load()
REGISTERED = ["read", "write", "edit", "bash", "grep", "find", "web_search", "fetch_content"]


def trip(wire: str, args: dict[str, Any]) -> tuple[Any, Any]:
    call = ENG.inbound_call(wire, args, registered=REGISTERED)
    return call.arguments, ENG.outbound_call(call.name, call.arguments).arguments


# ------------------------------------------------------------------ numbers
def test_every_millisecond_timeout_up_to_100_seconds_comes_back_as_the_same_int() -> None:
    bad = []
    for ms in range(100_001):
        local, back = trip("Bash", {"command": "x", "timeout": ms})
        seconds = local["timeout"]
        if Fraction(repr(seconds)) != Fraction(ms, 1000) or not same_json(ms, back["timeout"]):
            bad.append((ms, seconds, back["timeout"]))
    assert bad == []


@pytest.mark.parametrize(
    ("ms", "seconds"),
    [(1001, 1.001), (5, 0.005), (120_000, 120), (0, 0), (-1, -0.001), (1.5, 0.0015)],
)
def test_scale_is_exact_and_integral_results_are_ints(ms: float, seconds: float) -> None:
    local, back = trip("Bash", {"command": "x", "timeout": ms})
    assert local["timeout"] == seconds
    assert type(local["timeout"]) is type(seconds)
    assert back["timeout"] == ms
    assert type(back["timeout"]) is type(ms)


def test_an_agent_float_is_read_through_its_shortest_repr() -> None:
    assert ENG.outbound_call("bash", {"command": "x", "timeout": 1.001}).arguments == {
        "command": "x",
        "timeout": 1001,
    }
    assert type(ENG.outbound_call("bash", {"timeout": 1.001}).arguments["timeout"]) is int


@pytest.mark.parametrize(
    ("value", "nearest"),
    [
        (2**53 + 1, 9007199254740.993),
        (0.30000000000000004, 0.00030000000000000003),
        (10**25 + 1, 1e22),
        (133247.61194143188, 133.24761194143187),
    ],
)
def test_a_product_no_json_number_holds_exactly_is_the_nearest_double(
    value: float, nearest: float
) -> None:
    """A unit left unconverted (a timeout 1000 times too long) is worse than a last digit."""
    local, _ = trip("Bash", {"command": "x", "timeout": value})
    assert local["timeout"] == nearest
    assert type(local["timeout"]) is float


def test_a_product_that_would_round_to_zero_is_left_as_sent() -> None:
    local, _ = trip("Bash", {"command": "x", "timeout": 5e-324})
    assert local["timeout"] == 5e-324


@pytest.mark.parametrize("value", ["10", True, None, [1], float("inf")])
def test_what_is_not_a_finite_number_is_not_scaled(value: Any) -> None:
    local, _ = trip("Bash", {"command": "x", "timeout": value})
    assert local["timeout"] == value


# ------------------------------------------------------------------ dialect
@pytest.mark.parametrize(
    ("sent", "local"),
    [
        ({"file_path": "a", "old_string": "x"}, {"path": "a", "oldText": "x"}),
        ({"file_path": "a", "new_string": "y"}, {"path": "a", "newText": "y"}),
        ({"old_string": "x", "replace_all": True}, {"oldText": "x", "replace_all": True}),
    ],
)
def test_a_partial_edit_replays_in_the_wire_dialect(
    sent: dict[str, Any], local: dict[str, Any]
) -> None:
    got, back = trip("Edit", sent)
    assert got == local
    assert back == sent


def test_a_leftover_beside_one_edit_is_not_unwrapped_over() -> None:
    local = {"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "newText": "z"}
    wire = ENG.outbound_call("edit", local).arguments
    assert wire == {
        "file_path": "a",
        "edits": [{"oldText": "x", "newText": "y"}],
        "new_string": "z",
    }


# ------------------------------------------------------------------ domains
@pytest.mark.parametrize(
    "sent",
    [
        {"query": "q", "allowed_domains": ["-odd.example"]},
        {"query": "q", "allowed_domains": ["a.org", "-odd.example"], "blocked_domains": ["b"]},
        {"query": "q", "allowed_domains": []},
        {"query": "q", "blocked_domains": []},
        {"query": "q", "allowed_domains": [], "blocked_domains": []},
        {"query": "q", "allowed_domains": ["a.org"], "blocked_domains": []},
        {"query": "q", "allowed_domains": [], "blocked_domains": ["-b.org"]},
    ],
)
def test_domain_lists_come_back_as_sent(sent: dict[str, Any]) -> None:
    _, back = trip("WebSearch", sent)
    assert back == sent


def test_an_allowed_domain_starting_with_the_prefix_is_never_blocked() -> None:
    local, _ = trip("WebSearch", {"query": "q", "allowed_domains": ["-odd.example"]})
    assert local == {"query": "q", "allowed_domains": ["-odd.example"]}  # merge refused


@pytest.mark.parametrize(
    "local", [[], ["a.org", "-b.org"], ["--b.org"], ["-"], [""], ["a", "-b", "c"]]
)
def test_domain_filters_come_back_as_sent(local: list[str]) -> None:
    wire = ENG.outbound_call("web_search", {"query": "q", "domainFilter": local})
    back = ENG.inbound_call(wire.name, wire.arguments, registered=REGISTERED).arguments
    losses = ENG.rules.bindings["web_search"].binding.losses
    sent = {"query": "q", "domainFilter": local}
    assert all(d.loss is not None for d in differences(losses, "local", sent, back))
    assert sorted(back["domainFilter"]) == sorted(local)
    if local == sorted(local, key=lambda d: d.startswith("-")):
        assert back["domainFilter"] == local  # allowed before blocked: the order is kept


# ------------------------------------------------------------------ declarations
def test_a_declared_loss_is_shown_by_explain() -> None:
    section = ENG.explain("bash", args={"command": "x", "description": "d"}).to_dict()
    trip_ = section["arguments"]["round_trip"]
    assert trip_["exact"] is False
    assert trip_["lawful"] is True
    assert [d["field"] for d in trip_["differences"]] == ["description"]
    loss = section["arguments"]["losses"][0]
    assert loss["fields"] == ["description"]
    # Located like every operation: the file and line of its entry under `losses:`.
    line = Path(loss["file"]).read_text(encoding="utf-8").splitlines()[loss["line"] - 1]
    assert line.strip() == "- fields: [description]"
    text = ENG.explain("bash", args={"command": "x", "description": "d"}).render_text()
    assert "declared loss: description (wire)" in text
    assert f"[{loss['file']}:{loss['line']}:{loss['col']}]" in text
    assert '~ description: sent "d", replayed (absent) (declared:' in text


def test_explain_shows_an_exact_round_trip() -> None:
    explanation = ENG.explain("bash", args={"command": "x", "timeout": 1001})
    text = explanation.render_text()
    assert 'local call: {"command": "x", "timeout": 1.001}' in text
    assert 'replayed:   {"command": "x", "timeout": 1001}' in text
    assert "round trip: exact" in text


def _rules(tmp_path: Path, body: str) -> bridge_rules.Engine:
    path = tmp_path / "rules.yaml"
    path.write_text("bridge-rules: 1\nextends: default\n" + body, encoding="utf-8")
    return bridge_rules.load(str(path))


UNDECLARED = """
bindings:
  - local: bash
    wire: Bash
    schema: canonical
    input:
      - drop: [description]
"""


def test_explain_marks_a_difference_no_declaration_allows(tmp_path: Path) -> None:
    eng = _rules(tmp_path, UNDECLARED)
    explanation = eng.explain("bash", args={"command": "x", "description": "d"})
    assert explanation.to_dict()["arguments"]["round_trip"]["lawful"] is False
    assert '! description: sent "d", replayed (absent) (NOT DECLARED)' in explanation.render_text()


def test_a_malformed_declaration_is_a_located_error(tmp_path: Path) -> None:
    body = UNDECLARED + "    losses: [{fields: [description], sid: wire, why: x}]\n"
    with pytest.raises(RulesError) as info:
        _rules(tmp_path, body)
    assert "sid" in str(info.value)
