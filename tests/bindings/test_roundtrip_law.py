"""The round-trip law (issue 16), as a property over every binding the shipped rules hold.

For the default rules and every profile, for every binding: calls generated from the schema
the model is shown (the pinned wire schema, plus a hybrid binding's extras), including partial
calls (any subset of fields), empty lists and boundary numbers, go wire -> local -> wire and
come back as sent, with equal JSON types. Calls generated from the local schema go local ->
wire -> local the same way. The only exceptions are the binding's own `losses:` declarations
in the rule file; this test reads them and keeps no list of its own.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

import bridge_rules
from bridge_rules.bindings.roundtrip import differences
from bridge_rules.engine import Engine
from bridge_rules.resources import profile_names

DATA = Path(__file__).parent / "data"
EXTENSIONS: dict[str, Any] = json.loads((DATA / "extension_tools.json").read_text("utf-8"))
SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck)
)

# ------------------------------------------------------------------ values
BOUNDARY_INTS = [0, 1, -1, 2, 999, 1000, 1001, 59_999, 600_000, 600_001, 2**31 - 1, 2**31]
BOUNDARY_INTS += [2**32, 10**15 - 1, -(10**15 - 1)]


def _decimal(mantissa: int, exponent: int) -> float:
    """A decimal of at most 15 significant digits: every such number is a double exactly
    (its shortest repr), which is the domain the law promises (docs/bindings.md)."""
    return float(Decimal(mantissa).scaleb(exponent))


NUMBERS_INT = st.sampled_from(BOUNDARY_INTS) | st.integers(-(10**15) + 1, 10**15 - 1)
DECIMALS = st.builds(_decimal, st.integers(-(10**15) + 1, 10**15 - 1), st.integers(-20, 5))
NUMBERS = (
    NUMBERS_INT
    | DECIMALS
    | st.sampled_from([0.0, -0.0, 0.5, 1.5, 0.001, 1.001, 2000.0, 1e-9, 1e20, 123456.789])
)
TEXT = st.text(max_size=8) | st.sampled_from(["", "-", "-a.com", "--b.org", "a.com", "ls | head"])


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of a tool schema; objects as any subset of their fields (partial calls)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return TEXT
    if kind == "number":
        return NUMBERS
    if kind == "integer":
        return NUMBERS_INT
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = from_schema(schema.get("items", {"type": "string"}))
        return st.just([]) | st.lists(items, min_size=1, max_size=3)
    props = schema.get("properties", {})
    return st.fixed_dictionaries({}, optional={k: from_schema(v) for k, v in props.items()})


# ------------------------------------------------------------------ cases
def _local_schema(eng: Engine, local: str) -> dict[str, Any] | None:
    pin = eng.rules.local_pin
    if pin is not None and local in pin.tools:
        return dict(pin.tools[local])
    return EXTENSIONS.get(local)


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for profile in profile_names():
        eng = _engine(profile)
        for local, binding in eng.rules.bindings.items():
            out.append((profile, local, binding.binding.wire))
    return out


_ENGINES: dict[str, Engine] = {}


def _engine(profile: str) -> Engine:
    if profile not in _ENGINES:
        _ENGINES[profile] = bridge_rules.load(profile)
    return _ENGINES[profile]


CASES = _cases()


def _registered(eng: Engine) -> list[str]:
    return list(eng.rules.bindings)


def _losses(eng: Engine, local: str) -> list[Any]:
    return list(eng.rules.bindings[local].binding.losses)


def test_every_profile_with_bindings_is_covered() -> None:
    profiles = {p for p, _, _ in CASES}
    assert {"default", "pi-claude-cli", "claude-agent-sdk-pi"} <= profiles
    assert {local for p, local, _ in CASES if p == "default"} >= {"read", "edit", "web_search"}


@pytest.mark.parametrize(("profile", "local", "wire"), CASES)
def test_wire_local_wire(profile: str, local: str, wire: str) -> None:
    eng = _engine(profile)
    shown = eng.wire_schema(local, _local_schema(eng, local))
    registered = _registered(eng)
    losses = _losses(eng, local)

    @SETTINGS
    @given(from_schema(shown))
    def law(sent: dict[str, Any]) -> None:
        call = eng.inbound_call(wire, sent, registered=registered)
        assert call.name == local
        replay = eng.outbound_call(local, call.arguments)
        diffs = differences(losses, "wire", sent, replay.arguments)
        broken = [d.describe() for d in diffs if d.loss is None]
        assert not broken, (sent, call.arguments, replay.arguments, broken)

    law()


@pytest.mark.parametrize(("profile", "local", "wire"), CASES)
def test_local_wire_local(profile: str, local: str, wire: str) -> None:
    eng = _engine(profile)
    schema = _local_schema(eng, local)
    if schema is None:
        pytest.skip(f"no local schema for {local}")
    registered = _registered(eng)
    losses = _losses(eng, local)

    @SETTINGS
    @given(from_schema(schema))
    def law(sent: dict[str, Any]) -> None:
        out = eng.outbound_call(local, sent)
        back = eng.inbound_call(out.name, out.arguments, registered=registered)
        assert back.name == local
        diffs = differences(losses, "local", sent, back.arguments)
        broken = [d.describe() for d in diffs if d.loss is None]
        assert not broken, (sent, out.arguments, back.arguments, broken)

    law()
