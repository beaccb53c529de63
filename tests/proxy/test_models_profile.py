"""The packaged ``models`` profile as data, read with PyYAML (not bridge-rules' loader):
each constraint's source is named beside it, it agrees with the strict fake upstream
(model_upstream.py, written separately from the reference notes), and docs/models.md's
table says what the profile does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from model_upstream import DISABLED_REFUSED, FORCED_REFUSED, SYSTEM_ROLE_OK

ROOT = Path(__file__).resolve().parents[2]
PROFILE: dict[str, Any] = yaml.safe_load(
    (ROOT / "rules" / "profiles" / "models.yaml").read_text("utf-8")
)["models"]
DOC = (ROOT / "docs" / "models.md").read_text("utf-8")


def _set_fields(entry: dict[str, Any]) -> list[str]:
    fields = [
        f"{section}.{key}"
        for section in ("tool_choice", "thinking")
        for key in entry.get(section) or {}
    ]
    return fields + [key for key in ("system_in_messages", "created_at") if key in entry]


@pytest.mark.parametrize("model", sorted(PROFILE))
def test_every_setting_names_its_source(model: str) -> None:
    entry = PROFILE[model]
    assert _set_fields(entry), model
    missing = [f for f in _set_fields(entry) if f not in entry.get("sources", {})]
    assert missing == [], f"{model}: no source for {missing}"
    unused = [s for s in entry.get("sources", {}) if s not in _set_fields(entry)]
    assert unused == [], f"{model}: a source for what the entry does not set: {unused}"


@pytest.mark.parametrize("model", sorted(PROFILE))
def test_the_profile_fixes_what_the_fake_refuses(model: str) -> None:
    entry = PROFILE[model]
    forced = (entry.get("tool_choice") or {}).get("forced")
    if forced is not None:
        assert (forced != "keep") == (model in FORCED_REFUSED)
    elif model in FORCED_REFUSED:
        pytest.fail(f"{model} refuses a forced tool_choice and its entry says nothing")
    disabled = (entry.get("thinking") or {}).get("disabled")
    if disabled is not None:
        assert (disabled != "keep") == (model in DISABLED_REFUSED)
    system = entry.get("system_in_messages")
    if system is not None:
        assert (system != "keep") == (model not in SYSTEM_ROLE_OK)


def _table() -> dict[str, list[str]]:
    section = DOC.split("## The current models", 1)[1].split("\n\n", 2)[1]
    rows = [line.split("|")[1:-1] for line in section.splitlines()[2:]]
    return {cells[0].strip().strip("`"): [c.strip() for c in cells[1:]] for cells in rows}


def test_the_docs_table_says_what_the_profile_does() -> None:
    table = _table()
    assert set(table) == set(PROFILE)
    for model, (released, forced, _foreign, disabled, system) in table.items():
        entry = PROFILE[model]
        assert released == str(entry.get("created_at", ""))[:10], model
        said_forced = (entry.get("tool_choice") or {}).get("forced")
        assert forced == ("accepted" if said_forced == "keep" else f"400 → `{said_forced}`") or (
            said_forced is None and forced == "(no entry)"
        ), model
        said_system = entry.get("system_in_messages")
        assert system == {None: "(no entry)", "keep": "accepted"}.get(
            said_system, f"400 → `{said_system}`"
        ), model
        said_disabled = (entry.get("thinking") or {}).get("disabled")
        if said_disabled is None:
            assert disabled == "(no entry)", model
        elif said_disabled == "keep":
            assert disabled == "accepted", model
        else:
            shown = "{" + ", ".join(f"{k}: {v}" for k, v in said_disabled.items()) + "}"
            assert re.search(rf"→ `{re.escape(shown)}`$", disabled), (model, disabled)
