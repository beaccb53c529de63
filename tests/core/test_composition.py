"""Several files, directories and `extends` layer as documented in docs/rule-format.md."""

from __future__ import annotations

from pathlib import Path

import bridge_rules


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_user_file_extends_a_profile_and_merges_a_table_by_id(tmp_path: Path) -> None:
    user = write(
        tmp_path / "user.yaml",
        """\
bridge-rules: 1
extends: default
names:
  - kind: aliases
    id: companions
    map: {my_search: mcp__search__query}
""",
    )
    eng = bridge_rules.load(user)
    assert eng.outbound_name("my_search") == "mcp__search__query"
    assert eng.outbound_name("web_search_exa") == "mcp__exa__web_search"  # inherited entry kept
    ids = [s.id for s in eng.rules.stages]
    assert ids.count("companions") == 1  # merged in place, not duplicated
    explained = eng.explain("my_search")
    assert explained.decided_by is not None
    assert str(explained.decided_by.span).startswith(str(user.name)) or "user.yaml" in str(
        explained.decided_by.span
    )


def test_new_stage_goes_before_inherited_ones_and_can_disable_one(tmp_path: Path) -> None:
    user = write(
        tmp_path / "user.yaml",
        """\
bridge-rules: 1
extends: default
names:
  - kind: aliases
    id: mine
    case: exact
    map: {read: mcp__fs__read}
  - kind: prefix
    enabled: false
""",
    )
    eng = bridge_rules.load(user)
    assert eng.outbound_name("read") == "mcp__fs__read"  # user rule wins over capitalize
    assert eng.outbound_name("unknown") == "unknown"  # the default prefix stage is gone
    assert eng.rules.stages[0].id == "mine"


def test_later_file_overrides_settings_field_by_field(tmp_path: Path) -> None:
    base = write(
        tmp_path / "a.yaml",
        """\
bridge-rules: 1
gate: {api: anthropic-messages, model: "(?i)claude"}
names:
  - {kind: prefix, value: mcp__a__}
""",
    )
    over = write(
        tmp_path / "b.yaml",
        """\
bridge-rules: 1
gate: {model: "(?i)glm"}
names:
  - {kind: prefix, value: mcp__b__}
""",
    )
    eng = bridge_rules.load([base, over])
    assert eng.gate({"api": "anthropic-messages", "id": "glm-5"}, env={})
    assert not eng.gate({"api": "openai", "id": "glm-5"}, env={})  # api kept from a.yaml
    assert eng.outbound_name("x") == "mcp__b__x"


def test_directory_loads_files_in_name_order(tmp_path: Path) -> None:
    write(tmp_path / "10-base.yaml", "bridge-rules: 1\nnames:\n  - {kind: prefix, value: p1__}\n")
    write(tmp_path / "20-over.yaml", "bridge-rules: 1\nnames:\n  - {kind: prefix, value: p2__}\n")
    write(tmp_path / "notes.txt", "not a rule file")
    eng = bridge_rules.load(tmp_path)
    assert eng.outbound_name("x") == "p2__x"
    assert [Path(f.doc.path).name for f in eng.rules.files] == ["10-base.yaml", "20-over.yaml"]


def test_bindings_merge_by_local_name(tmp_path: Path) -> None:
    a = write(
        tmp_path / "a.yaml",
        """\
bridge-rules: 1
names: [{kind: bindings}]
bindings:
  - {local: thing, wire: mcp__a__thing}
  - {local: other, wire: mcp__a__other}
""",
    )
    b = write(
        tmp_path / "b.yaml",
        """\
bridge-rules: 1
bindings:
  - {local: thing, wire: mcp__b__thing}
""",
    )
    eng = bridge_rules.load([a, b])
    assert eng.outbound_name("thing") == "mcp__b__thing"
    assert eng.outbound_name("other") == "mcp__a__other"


def test_a_file_included_twice_is_applied_once(tmp_path: Path) -> None:
    base = write(
        tmp_path / "base.yaml", "bridge-rules: 1\nnames:\n  - {kind: aliases, map: {a: A1}}\n"
    )
    write(tmp_path / "x.yaml", "bridge-rules: 1\nextends: ./base.yaml\n")
    eng = bridge_rules.load([tmp_path / "x.yaml", base])
    assert len(eng.rules.files) == 2
