"""BR322: a ``serve --config`` route whose ``model:`` takes a model that refuses a forced
``tool_choice``, while the route's rules send one as it is.

The oracle does not share the code's assumptions: it reads the packaged profile with PyYAML
(not the loader), takes the models whose entry says ``auto`` or ``refuse``, and decides each
route's choice with ``fnmatch`` over the generated overlay, last matching entry wins, as
docs/models.md states the overlay rule. Routes and overlays are generated (hypothesis).
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

from bridge_rules.cli.serve_lint import lint_config
from bridge_rules.lint.route_models import FixedRoute, fixed_model_findings
from bridge_rules.ruleset import load_runtime

ROOT = Path(__file__).resolve().parents[2]
PACKAGED: dict[str, Any] = yaml.safe_load(
    (ROOT / "rules" / "profiles" / "models.yaml").read_text("utf-8")
)["models"]
IDS = sorted(PACKAGED)
REFUSING = sorted(
    m
    for m, e in PACKAGED.items()
    if (e.get("tool_choice") or {}).get("forced") in ("auto", "refuse")
)
FORCED = ("keep", "auto", "refuse")


def test_the_oracle_sees_the_models_the_issue_names() -> None:
    assert {"claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1"} <= set(REFUSING)
    assert "claude-haiku-5-5" not in REFUSING


@st.composite
def globs(draw: st.DrawFn) -> str:
    """A packaged id, cut short with ``*``, one character made ``?``, or a near miss."""
    model = draw(st.sampled_from([*IDS, "claude-opus-4-8", "claude-sonnet-5-7"]))
    how = draw(st.sampled_from(["exact", "star", "question", "typo", "any"]))
    if how == "star":
        return model[: draw(st.integers(0, len(model)))] + "*"
    if how == "question":
        at = draw(st.integers(0, len(model) - 1))
        return model[:at] + "?" + model[at + 1 :]
    if how == "typo":
        at = draw(st.integers(0, len(model) - 1))
        return model[:at] + model[at + 1 :]
    if how == "any":
        return "*"
    return model


overlays = st.lists(
    st.tuples(globs(), st.sampled_from([*FORCED, None])), max_size=4, unique_by=lambda e: e[0]
)


def decided(model: str, extends: bool, overlay: list[tuple[str, str | None]]) -> str:
    """The oracle: the last overlay entry that matches and sets it, else the profile's."""
    for glob, forced in reversed(overlay):
        if forced is not None and fnmatch.fnmatchcase(model, glob):
            return forced
    if extends:
        entry = PACKAGED.get(model) or {}
        return str((entry.get("tool_choice") or {}).get("forced") or "keep")
    return "keep"


def rule_file(extends: bool, overlay: list[tuple[str, str | None]]) -> str:
    lines = ["bridge-rules: 1", *(["extends: models"] if extends else []), "models:"]
    for glob, forced in overlay:
        lines.append(f"  {glob!r}:")
        lines.append(f"    tool_choice: {{forced: {forced}}}" if forced else "    display_name: X")
    if not overlay:
        lines[-1] = "models: {}"
    return "\n".join(lines) + "\n"


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route=globs(), extends=st.booleans(), overlay=overlays)
def test_a_route_is_reported_exactly_for_the_refusing_models_it_keeps_forcing(
    route: str, extends: bool, overlay: list[tuple[str, str | None]]
) -> None:
    expected = [
        m
        for m in REFUSING
        if fnmatch.fnmatchcase(m, route) and decided(m, extends, overlay) == "keep"
    ]
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "route.yaml"
        rules.write_text(rule_file(extends, overlay), encoding="utf-8")
        table = load_runtime(str(rules)).rules.models
    span = ("serve.yaml", 7, 12)
    found = list(fixed_model_findings([FixedRoute("r1", route, span, table)]))  # type: ignore[arg-type]
    if not expected:
        assert found == []
        return
    (finding,) = found
    assert finding.code == "BR322"
    assert tuple(finding.span) == span
    named = re.match(r"route 'r1' takes model '.*': (.*) refuses a forced", finding.message)
    assert named is not None, finding.message
    assert named[1].split(", ") == expected


SERVE = """\
upstream: http://127.0.0.1:8001
rules: [{serve_rules}]
routes:
  - name: flows
    rules: [pi-flows]
    model: "claude-*-5-5"
  - name: kept
    rules: [{kept}]
    model: claude-fable-5-1
  - name: fine
    model: "claude-opus-5-*"
  - name: anything
    default: true
"""


def test_lint_config_locates_each_route_by_file_line_and_name(tmp_path: Path) -> None:
    kept = tmp_path / "kept.yaml"
    kept.write_text(
        "bridge-rules: 1\nextends: models\nmodels:\n  claude-fable-*:\n"
        "    tool_choice: {forced: keep}\n",
        encoding="utf-8",
    )
    config = tmp_path / "serve.yaml"
    config.write_text(SERVE.format(serve_rules="default", kept=kept), encoding="utf-8")
    found = [d for d in lint_config(str(config)).diagnostics if d.code == "BR322"]
    lines = [d.line() for d in found]
    assert [(d.span.file, d.span.line, d.span.col) for d in found] == [
        (str(config), 6, 12),
        (str(config), 9, 12),
    ], lines
    assert "route 'flows'" in lines[0]
    assert "claude-opus-5-5, claude-sonnet-5-5 refuses" in lines[0]  # not haiku: it accepts
    assert "route 'kept'" in lines[1]
    assert f"kept by models['claude-fable-*'] at {kept}:5:27" in lines[1]
    related = [str(r.span) for r in found[1].related]
    assert f"{kept}:5:27" in related


def test_a_route_without_rules_of_its_own_is_judged_by_serves_rules(tmp_path: Path) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text(SERVE.format(serve_rules="pi-flows", kept="models"), encoding="utf-8")
    found = {
        d.message.split("'")[1] for d in lint_config(str(config)).diagnostics if d.code == "BR322"
    }
    assert found == {"flows", "fine"}  # `fine` now runs serve's pi-flows, without `models`


def test_lint_and_serve_report_it_from_the_command_line(tmp_path: Path) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text(SERVE.format(serve_rules="default", kept="models"), encoding="utf-8")
    cli = str(Path(sys.executable).with_name("bridge-rules"))
    lint = subprocess.run(
        [cli, "lint", "--config", str(config)], capture_output=True, text=True, check=False
    )
    assert lint.returncode == 0, lint.stderr  # a warning
    assert f"{config}:6:12: warning[BR322] route 'flows'" in lint.stdout
    strict = subprocess.run(
        [cli, "lint", "--strict", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert strict.returncode == 1
    said = _serve_stderr(cli, config)
    assert f"{config}:6:12: warning[BR322] route 'flows'" in said


def _serve_stderr(cli: str, config: Path) -> str:
    """What ``serve --config`` writes before it listens, read until its start event."""
    from tests.ports import free_port

    proc = subprocess.Popen(
        [cli, "serve", "--config", str(config), "--port", str(free_port())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if "serve.start" in line or len(lines) > 50:
                break
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    return "".join(lines)


def test_a_config_serve_would_refuse_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bridge_rules.cli.app import main

    config = tmp_path / "serve.yaml"
    config.write_text("upstrem: http://127.0.0.1:1\nroutes: 3\n", encoding="utf-8")
    assert main(["lint", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"--config {config}:1:1: unknown option 'upstrem'; did you mean 'upstream'?" in err
    assert f"--config {config}:2:9: 'routes' takes a list of routes" in err
    assert main(["lint", "default", "--config", str(config)]) == 2
    assert "name PATHs or --config FILE, not both" in capsys.readouterr().err
