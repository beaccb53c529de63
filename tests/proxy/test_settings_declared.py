"""Each ``serve`` setting is declared once (proxy/settings.py), and every place a user meets
it agrees: ``serve --help`` as a user reads it, the settings table of docs/proxy.md read as
markdown, the environment variables ``serve`` really reads, and the keys ``--config FILE``
takes. None of these oracles calls the code that renders the others: the help is parsed
from the command's output, the table from the file's text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples
from typer.testing import CliRunner

from bridge_rules.cli import serve_cmd  # noqa: F401 - registers serve
from bridge_rules.cli.app import app, main
from bridge_rules.proxy import config as config_module
from bridge_rules.proxy.config import ProxyConfig
from bridge_rules.proxy.settings import BY_NAME, PROXY_FIELDS, SETTINGS
from bridge_rules.proxy.settingsfile import read_settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"


def _doc_rows() -> list[dict[str, str]]:
    """The settings table of docs/proxy.md, read as a reader's markdown table."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| flag | environment |"))
    names = [c.strip() for c in lines[head].strip("|").split("|")]
    rows = []
    for line in lines[head + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def _help() -> dict[str, dict[str, str]]:
    """``serve --help`` on a wide terminal: flag -> {env, default, text}."""
    result = CliRunner().invoke(app, ["serve", "--help"], terminal_width=1000, env={})
    assert result.exit_code == 0, result.output
    found: dict[str, dict[str, str]] = {}
    entries: list[str] = []  # one per option: a long flag's help goes on the next line
    for line in result.output.splitlines():
        if line.startswith("  -"):
            entries.append(line)
        elif entries and line.startswith("    "):
            entries[-1] += " " + line.strip()
    for line in entries:
        match = re.match(
            r"\s+(?:-\w, )?(--[a-z-]+)(?:\s*/\s*--no-[a-z-]+)?(?:, --[a-z-]+)*(?: [A-Z|]+)?\s+(.*)",
            line,
        )
        if not match:
            continue
        flag, rest = match.groups()
        extra = re.search(r"\[(.*)\]\s*$", rest)
        fields = dict(
            part.split(": ", 1) for part in (extra.group(1).split("; ") if extra else [])
            if ": " in part
        )  # fmt: skip
        found[flag] = {
            "env": fields.get("env var", ""),
            "default": fields.get("default", ""),
            "text": rest[: extra.start()].strip() if extra else rest.strip(),
        }
    return found


def test_the_docs_table_and_the_help_name_the_same_settings_with_the_same_facts() -> None:
    rows = {row["flag"].strip("`"): row for row in _doc_rows()}
    shown = _help()
    assert [s.flag for s in SETTINGS] == list(rows), (
        "docs/proxy.md's table: run scripts/settings_table.py"
    )
    for flag, row in rows.items():
        assert flag in shown, f"{flag} is documented but serve --help has no such option"
        assert row["environment"].strip("`") == shown[flag]["env"], flag
        assert row["what it does"].replace("\\|", "|") == shown[flag]["text"], flag
        default = row["default"].strip("`")
        if default == "true":  # typer shows a switch that is on by its flag's name
            default = flag.removeprefix("--")
        if default not in ("none", "false"):
            assert shown[flag]["default"] == default, flag
    own = {
        f for f in shown if f not in ("--config", "--color", "--pins", "--allow-outside", "--help")
    }
    assert own == set(rows), "serve --help has options the table lacks"


def test_each_documented_key_is_one_the_settings_file_takes(tmp_path: Path) -> None:
    for row in _doc_rows():
        key = row["`--config` key"].split("`")[1]
        setting = BY_NAME[key.replace("-", "_")]
        sample = "x" if setting.type is str else ("true" if setting.type is bool else "7")
        for spelling in (key, key.replace("-", "_")):
            path = tmp_path / "serve.yaml"
            path.write_text(f"{spelling}: {sample}\n", encoding="utf-8")
            found = read_settings(str(path))
            assert found.problems == (), (spelling, found.problems)
            assert list(found.values) == [setting.name]


def test_each_documented_variable_is_the_one_serve_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def capture(options: Any, where: Any = None, environ: Any = None) -> Any:
        seen.update(options=dict(options), where=dict(where or {}))
        return None, []

    monkeypatch.setattr(
        config_module.ServeSettings, "check", classmethod(lambda cls, *a, **k: capture(*a, **k))
    )
    env = {}
    for row in _doc_rows():
        name = row["environment"].strip("`")
        setting = BY_NAME[row["flag"].strip("`")[2:].replace("-", "_")]
        env[name] = {str: "http://v", int: "7", float: "7.5", bool: "true"}[setting.type]
    result = CliRunner().invoke(app, ["serve"], env=env)
    assert result.exit_code == 2
    for row in _doc_rows():
        name = row["environment"].strip("`")
        setting = BY_NAME[row["flag"].strip("`")[2:].replace("-", "_")]
        assert seen["where"][setting.name] == name
        value = seen["options"][setting.name]
        assert (value[0] if isinstance(value, (list, tuple)) else value) is not None


def test_proxy_config_takes_each_declared_field_with_its_declared_default() -> None:
    defaults = ProxyConfig(upstream="http://x")
    for name in PROXY_FIELDS:
        assert getattr(defaults, name) == BY_NAME[name].default, name


# ---------------------------------------------------------------- several mistakes, one run
_SCALARS = [s for s in SETTINGS if not s.repeat and s.type in (int, float) and s.check]
_KEYS = [s.key for s in SETTINGS]
_ROUTE_KEYS = ("name", "rules", "upstream", "target", "policy", "model", "default")


def _typo(word: str, where: int) -> str:
    """``word`` with one letter dropped: close enough for a did-you-mean, and no real key."""
    where %= len(word)
    return word[:where] + word[where + 1 :]


@st.composite
def _mistaken_files(draw: st.DrawFn) -> tuple[str, list[tuple[int, str]]]:
    """A settings file with a good upstream and 1-5 mistakes, and (line, what the report on
    that line must say) for each, computed from where the generator put it."""
    top: list[tuple[str, str | None]] = [("upstream: http://127.0.0.1:9", None)]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["typo", "type", "shape", "value"]))
        setting = draw(st.sampled_from(_SCALARS))
        if kind == "typo":
            typo = _typo(setting.key, draw(st.integers(0, 30)))
            if typo.replace("-", "_") in BY_NAME or any(
                typo == line.split(":")[0] for line, _ in top
            ):
                continue
            top.append((f"{typo}: 1", f"unknown option '{typo}'; did you mean '{setting.key}'?"))
        elif any(line.startswith(setting.key + ":") for line, _ in top):
            continue
        elif kind == "type":
            top.append((f"{setting.key}: soon", f"'{setting.key}' takes"))
        elif kind == "shape":
            top.append((f"{setting.key}: [1, 2]", f"'{setting.key}' takes one value, got list"))
        else:
            top.append((f"{setting.key}: -1", f"{setting.flag} must be"))
    order = draw(st.permutations(top))
    lines = [line for line, _ in order]
    expected = [(i + 1, why) for i, (_, why) in enumerate(order) if why is not None]
    if draw(st.booleans()):
        lines += ["routes:", "  - name: pi", "    rules: pi"]
        key = draw(st.sampled_from([k for k in _ROUTE_KEYS if len(k) > 4]))
        typo = _typo(key, draw(st.integers(0, 30)))
        lines.append(f"    {typo}: x")
        expected.append(
            (len(lines), f"route 'pi': unknown route key '{typo}'; did you mean '{key}'?")
        )
    return "\n".join(lines) + "\n", expected


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=_mistaken_files())
def test_a_file_with_several_mistakes_reports_each_once_at_its_line_in_one_run(
    case: tuple[str, list[tuple[int, str]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = case
    path = tmp_path / "serve.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["serve", "--config", str(path)]) == 2
    errors = [
        e for e in capsys.readouterr().err.splitlines() if e.startswith("bridge-rules: error")
    ]
    assert len(errors) == len(expected), (text, errors)
    for line, why in expected:
        hits = [e for e in errors if e.startswith(f"bridge-rules: error: --config {path}:{line}:")]
        assert len(hits) == 1, (text, line, errors)
        assert why in hits[0], (text, hits[0])
