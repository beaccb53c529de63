"""The rule-format JSON Schema is generated from the models and must not go stale."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from bridge_rules import schema_gen

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted([ROOT / "rules" / "default.yaml", *(ROOT / "rules" / "profiles").glob("*.yaml")])


def test_checked_in_schema_is_current() -> None:
    on_disk = (ROOT / "schemas" / "bridge-rules.schema.json").read_text(encoding="utf-8")
    assert on_disk == schema_gen.render(), (
        "schemas/bridge-rules.schema.json is stale: run `python -m bridge_rules.schema_gen`"
    )
    assert schema_gen.main(["--check"]) == 0


def test_check_mode_reports_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "bridge-rules.schema.json"
    stale.write_text("{}\n", encoding="utf-8")
    monkeypatch.setattr(schema_gen, "schema_path", lambda: stale)
    assert schema_gen.main(["--check"]) == 1
    assert stale.read_text(encoding="utf-8") == "{}\n"
    assert schema_gen.main([]) == 0
    assert schema_gen.main(["--check"]) == 0


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_rules_validate_and_carry_the_modeline(path: Path) -> None:
    schema = json.loads((ROOT / "schemas" / "bridge-rules.schema.json").read_text("utf-8"))
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    target = (path.parent / first.split("$schema=", 1)[1].strip()).resolve()
    assert target == (ROOT / "schemas" / "bridge-rules.schema.json").resolve()
    data = YAML(typ="safe", pure=True).load(text)
    jsonschema.Draft202012Validator(schema).validate(data)


def test_schema_rejects_what_the_models_reject() -> None:
    schema = json.loads(schema_gen.render())
    validator = jsonschema.Draft202012Validator(schema)
    assert not validator.is_valid({"bridge-rules": 1, "names": [{"kind": "alias", "map": {}}]})
    assert not validator.is_valid({"bridge-rules": 1, "pinn": "claude-code@2.1.330"})
    assert validator.is_valid({"bridge-rules": 1, "names": [{"kind": "prefix", "value": "x"}]})
