"""``pin import``, ``list``, ``show``, ``diff`` and ``check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pin_fixtures import DATA

from bridge_rules.cli.app import main
from bridge_rules.pins import check_document, load_pin

ROOT = Path(__file__).resolve().parents[2]
PI_TURN1 = ROOT / "tests" / "golden" / "captures" / "pi-turn1.json"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_takes_a_body_a_wrapped_capture_or_a_schema_table(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    code, out, _ = run(capsys, "pin", "import", str(PI_TURN1), "--name", "pi@0.73.1")
    assert code == 0
    assert "wrote .bridge-rules/pins/pi@0.73.1.json: 4 tool(s)" in out
    pi = load_pin("pi@0.73.1")
    assert pi.origin == "project"
    assert list(pi.tools) == ["read", "bash", "edit", "write"]
    assert pi.provenance["method"] == "import"
    assert pi.provenance["sources"][0]["file"] == "pi-turn1.json"
    # the packaged pi pin holds the same tools (the recipe's wire rule aside)
    assert set(pi.tools) <= set(load_pin("pi@0.73.1").tools)
    wrapped = DATA / "opencode-1.18.33-request.json"
    assert run(capsys, "pin", "import", str(wrapped), "--name", "opencode@1.18.33")[0] == 0
    assert "todowrite" in load_pin("opencode@1.18.33").tools
    table = DATA / "claude-code-2.1.330.runtime.json"
    assert run(capsys, "pin", "import", str(table), "--name", "claude-code@2.1.330")[0] == 0
    assert {"Skill", "SendMessage", "ListAgents"} <= set(load_pin("claude-code@2.1.330").tools)


def test_import_errors(capsys: pytest.CaptureFixture[str], isolated: Path) -> None:
    (isolated / "no-tools.json").write_text('{"messages": []}')
    (isolated / "broken.json").write_text("{")
    cases = {
        "no-tools.json": "no 'tools' in it",
        "broken.json": "broken.json: Expecting property name",
        "missing.json": "cannot read missing.json",
    }
    for name, says in cases.items():
        code, _, err = run(capsys, "pin", "import", name, "--name", "x@1")
        assert code == 2, name
        assert says in err, err
    code, _, err = run(capsys, "pin", "import", str(PI_TURN1), "--name", "pi")
    assert (code, "'pi' is not a pin" in err) == (2, True)


def test_list_shows_source_method_date_and_shadowing(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    run(capsys, "pin", "import", str(PI_TURN1), "--name", "pi@0.73.1")
    code, out, _ = run(capsys, "pin", "list")
    assert code == 0
    lines = out.splitlines()
    project = next(line for line in lines if line.startswith("pi@0.73.1") and "project" in line)
    assert "import" in project
    assert "pi@0.73.1.json" in project
    packaged = next(line for line in lines if line.startswith("pi@0.73.1") and "packaged" in line)
    assert packaged.endswith("(shadowed)")
    rows = json.loads(run(capsys, "pin", "list", "--format", "json")[1])
    assert {r["pin"] for r in rows} >= {"claude-code@2.1.0", "claude-code@2.1.330", "pi@0.73.1"}


def test_show_a_pin_and_one_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "pin", "show", "claude-code@2.1.330")
    assert code == 0
    assert out.splitlines()[0].startswith("claude-code@2.1.330  packaged  ")
    read = next(line for line in out.splitlines() if line.split()[0] == "Read")
    assert "file_path," in read
    assert "limit?" in read
    code, out, _ = run(capsys, "pin", "show", "pi@0.73.1", "read")
    tool = json.loads(out)
    assert tool["name"] == "read"
    assert tool["description"].startswith("Read the contents of a file.")
    assert tool["input_schema"]["required"] == ["path"]
    code, _, err = run(capsys, "pin", "show", "claude-code@2.1.330", "Reed")
    assert code == 2
    assert "has no tool 'Reed'; did you mean 'Read'?" in err
    code, _, err = run(capsys, "pin", "show", "claude-code@8")
    assert code == 2
    assert "unknown pin 'claude-code@8'" in err


def test_diff_shares_drift_and_takes_files(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    code, out, _ = run(capsys, "pin", "diff", "claude-code@2.1.0", "claude-code@2.1.330")
    assert code == 0
    assert "tool-renamed    Task renamed Agent (AgentInput)" in out
    assert "touch the given rules" not in out
    table = DATA / "claude-code-2.1.330.runtime.json"
    run(capsys, "pin", "import", str(table), "--name", "claude-code@2.1.330", "-o", "rt.json")
    packaged = str(ROOT / "schemas" / "claude-code" / "2.1.330.json")
    code, out, _ = run(capsys, "pin", "diff", packaged, "rt.json", "--format", "json")
    changes = json.loads(out)["changes"]
    assert {"kind": "field-removed", "tool": "Agent", "field": "team_name"}.items() <= next(
        c for c in changes if c["field"] == "team_name"
    ).items()


def test_check_validates_pin_files(capsys: pytest.CaptureFixture[str], isolated: Path) -> None:
    run(capsys, "pin", "import", str(PI_TURN1), "--name", "pi@1", "-o", "good.json")
    doc = json.loads((isolated / "good.json").read_text())
    doc["tools"]["read"]["input_schema"]["required"] = []
    (isolated / "edited.json").write_text(json.dumps(doc))
    (isolated / "bad.json").write_text(json.dumps({"format": "bridge-rules-pin/9", "tools": {}}))
    packaged = [str(p) for p in sorted((ROOT / "schemas").glob("*/*.json"))]
    code, out, _ = run(capsys, "pin", "check", "good.json", *packaged)
    assert (code, out) == (0, f"{1 + len(packaged)} pin file(s) valid\n")
    code, out, _ = run(capsys, "pin", "check", "good.json", "edited.json", "bad.json")
    assert code == 1
    assert out.splitlines() == [
        "edited.json: error: provenance.sha256: does not match the tools (edited by hand?)",
        "bad.json: error: format: 'bridge-rules-pin/9' is not a known pin format "
        "(bridge-rules-pin/1)",
    ]


def test_every_pin_file_passes_the_pin_json_schema(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    """schemas/pin.schema.json and check_document agree on the shipped and written pins."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "schemas" / "pin.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    run(capsys, "pin", "import", str(PI_TURN1), "--name", "pi@1", "-o", "written.json")
    files = [isolated / "written.json", *(ROOT / "schemas").glob("*/*.json"), *DATA.glob("*@*")]
    for path in files:
        assert list(validator.iter_errors(json.loads(path.read_text()))) == [], path
    bad = {"format": "bridge-rules-pin/1", "tools": {"x": {}}}
    assert list(validator.iter_errors(bad))
    assert check_document(bad)
