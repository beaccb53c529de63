"""``pin capture`` against the real agents: pi 0.73.1 and Claude Code 2.1.330, offline.

Each agent is pointed at the capture endpoint the way docs/pins.md tells users to, and
the pin it yields is compared with the packaged pin of the same version.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_driver import CLAUDE_ENV, CLAUDE_VERSION, ClaudeInstallError, install_claude
from opencode_driver import OPENCODE_VERSION, SetupError, install_opencode
from pi_driver import PI_VERSION
from toolchain import agent_path

from bridge_rules.cli.app import main
from bridge_rules.drift import compare
from bridge_rules.pins import load_file, load_pin, use_dirs

pytestmark = pytest.mark.e2e

DOC = Path(__file__).resolve().parents[2] / "docs" / "pins.md"


def documented_template(name: str) -> str:
    """The config file a recipe of docs/pins.md writes (``cat > NAME <<'EOF'``)."""
    text = DOC.read_text(encoding="utf-8")
    return text.split(f"cat > {name} <<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0] + "\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    monkeypatch.setenv("PATH", agent_path())  # `pin capture` runs the agent with this PATH
    use_dirs([])
    return tmp_path


@pytest.fixture(scope="module")
def claude(npm_cache: Path) -> Path:
    try:
        return install_claude(npm_cache)
    except ClaudeInstallError as exc:
        pytest.fail(str(exc))


def capture(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["pin", "capture", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_pi_capture_reproduces_the_packaged_pin(
    root: Path, pi: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = workdir / "models.json"
    template.write_text(documented_template("models.json"))
    out = capture(
        capsys, f"pi@{PI_VERSION}", "--template", str(template),
        "--env", "PI_CODING_AGENT_DIR={config_dir}", "--env", "HOME={tmp}", "--env", "PI_OFFLINE=1",
        "--", str(pi), "--offline", "--no-session", "--provider", "capture",
        "--model", "claude-sonnet-5-5", "--tools", "read,bash,edit,write,grep,find,ls", "-p", "hi",
    )  # fmt: skip
    assert "7 tool(s)" in out
    captured = load_pin(f"pi@{PI_VERSION}")
    assert captured.origin == "project"
    packaged = load_file(root / "schemas" / "pi" / f"{PI_VERSION}.json")
    assert compare(packaged, captured).changes == []
    assert captured.descriptions["read"] == packaged.descriptions["read"]
    assert captured.provenance["sources"][0]["user_agent"].startswith("Anthropic/JS")


def test_claude_code_capture_has_every_packaged_runtime_tool(
    root: Path, claude: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = [f"--env={k}={v}" for k, v in CLAUDE_ENV.items()]
    capture(
        capsys, f"claude-code@{CLAUDE_VERSION}", "--env", "HOME={tmp}", *env,
        "--", str(claude), "-p", "hi", "--model", "claude-sonnet-4-5",
    )  # fmt: skip
    out = capture(
        capsys, f"claude-code@{CLAUDE_VERSION}", "--merge", "--env", "HOME={tmp}", *env,
        "--", str(claude), "-p", "hi", "--model", "claude-sonnet-4-5", "--tools", "Glob,Grep",
    )  # fmt: skip
    assert "merged 2 new tool(s) (Glob, Grep)" in out
    captured = load_pin(f"claude-code@{CLAUDE_VERSION}")
    assert captured.origin == "project"
    assert {"Skill", "SendMessage", "ListAgents", "Read", "Glob"} <= set(captured.tools)
    packaged = load_file(root / "schemas" / "claude-code" / f"{CLAUDE_VERSION}.json")
    assert set(captured.tools) <= set(packaged.tools)
    assert captured.tools["Skill"]["required"] == ["skill"]
    assert captured.provenance["sources"][0]["user_agent"].startswith("claude-cli/")


def test_opencode_capture_reproduces_the_packaged_pin(
    root: Path, npm_cache: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        opencode = install_opencode(npm_cache)
    except SetupError as exc:
        pytest.fail(str(exc))
    template = workdir / "capture-opencode.json"
    template.write_text(documented_template("capture-opencode.json"))
    home = [
        "--env=HOME={tmp}", "--env=XDG_CONFIG_HOME={tmp}/.config",
        "--env=XDG_DATA_HOME={tmp}/.local/share", "--env=XDG_CACHE_HOME={tmp}/.cache",
        "--env=OPENCODE_DISABLE_MODELS_FETCH=1", "--env=OPENCODE_DISABLE_AUTOUPDATE=1",
    ]  # fmt: skip
    out = capture(
        capsys, f"opencode@{OPENCODE_VERSION}", "--template", str(template),
        "--env", "OPENCODE_CONFIG={config}", *home,
        "--", str(opencode), "run", "-m", "capture/claude-sonnet-5-5", "say hi",
    )  # fmt: skip
    assert "10 tool(s)" in out
    captured = load_pin(f"opencode@{OPENCODE_VERSION}")
    assert captured.origin == "project"
    packaged = load_file(root / "schemas" / "opencode" / f"{OPENCODE_VERSION}.json")
    assert compare(packaged, captured).changes == []
    assert captured.descriptions == packaged.descriptions
