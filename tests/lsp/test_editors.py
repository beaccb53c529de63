"""docs/editors.md's setups, the VS Code extension and the schema an editor reads.

Each snippet is parsed by a parser of its own language (json, tomllib, luaparser), and the
command it names is started as an editor would (the venv's ``bin`` on ``PATH``) and must
answer an LSP ``initialize`` request over stdio as ``bridge-rules``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib
from luaparser import ast, astnodes

from bridge_rules.schema_gen import SCHEMA_NAME

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", PAGE, re.S)
BIN = Path(sys.executable).parent


def _blocks(lang: str) -> list[str]:
    return [body for found, body in BLOCKS if found == lang]


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _initialize(argv: list[str], root: Path) -> dict[str, Any]:
    """Start ``argv`` as an editor would and ask it to initialize; its answer."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]  # fmt: skip
    env = {**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])}
    done = subprocess.run(
        argv,
        input=b"".join(_frame(m) for m in messages),
        capture_output=True,
        env=env,
        cwd=root,
        timeout=60,
        check=False,
    )
    bodies = re.split(rb"Content-Length: \d+\r\n(?:[^\r\n]+\r\n)*\r\n", done.stdout)
    answers = [json.loads(b) for b in bodies if b.strip()]
    return next(a for a in answers if a.get("id") == 1)


def _check_command(argv: list[str], tmp_path: Path) -> None:
    assert argv == ["bridge-rules", "lsp"]
    answer = _initialize(argv, tmp_path)
    assert answer["result"]["serverInfo"]["name"] == "bridge-rules"
    capabilities = answer["result"]["capabilities"]
    for provider in ("hoverProvider", "definitionProvider", "codeActionProvider"):
        assert capabilities.get(provider), provider
    assert capabilities["completionProvider"]


def test_the_page_has_each_editor() -> None:
    assert len(_blocks("json")) == 2
    assert len(_blocks("lua")) == 1
    assert len(_blocks("toml")) == 1


def test_vscode_settings_are_json_for_the_real_schema_and_command(tmp_path: Path) -> None:
    schemas, command = (json.loads(body) for body in _blocks("json"))
    ((path, globs),) = schemas["yaml.schemas"].items()
    assert path.endswith(SCHEMA_NAME)
    assert "*.bridge-rules.yaml" in globs
    _check_command(command["bridge-rules.command"], tmp_path)


def test_the_vscode_extension_is_packaged_with_the_same_command(tmp_path: Path) -> None:
    folder = ROOT / "editors" / "vscode"
    package = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    assert (folder / package["main"]).is_file()
    assert "onLanguage:yaml" in package["activationEvents"]
    assert "vscode-languageclient" in package["dependencies"]
    setting = package["contributes"]["configuration"]["properties"]["bridge-rules.command"]
    source = (folder / package["main"]).read_text(encoding="utf-8")
    assert '.getConfiguration("bridge-rules")' in source
    assert '.get("command"' in source
    _check_command(setting["default"], tmp_path)


def test_the_neovim_setup_is_lua_that_starts_the_server(tmp_path: Path) -> None:
    (body,) = _blocks("lua")
    tree = ast.parse(body)  # a syntax error raises
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, astnodes.Call) and ast.to_lua_source(n.func) == "vim.lsp.start"
    ]
    assert calls, "vim.lsp.start is called"
    fields = {
        n.key.id: n.value
        for n in ast.walk(tree)
        if isinstance(n, astnodes.Field) and isinstance(n.key, astnodes.Name)
    }
    assert isinstance(fields["cmd"], astnodes.Table)
    argv = [f.value.s.decode() for f in fields["cmd"].fields]
    name = fields["name"]
    assert isinstance(name, astnodes.String)
    assert name.s.decode() == "bridge-rules"
    _check_command(argv, tmp_path)


def test_the_helix_setup_is_toml_that_starts_the_server(tmp_path: Path) -> None:
    (body,) = _blocks("toml")
    config = tomllib.loads(body)
    server = config["language-server"]["bridge-rules"]
    (language,) = config["language"]
    assert language["name"] == "yaml"
    assert "bridge-rules" in language["language-servers"]
    _check_command([server["command"], *server["args"]], tmp_path)


def test_every_top_level_key_of_the_schema_is_described() -> None:
    schema = json.loads((ROOT / "schemas" / SCHEMA_NAME).read_text(encoding="utf-8"))
    undescribed = [k for k, v in schema["properties"].items() if not v.get("description")]
    assert undescribed == []


def test_schema_path_prints_the_installed_schema() -> None:
    done = subprocess.run(
        [str(BIN / "bridge-rules"), "schema", "--path"], capture_output=True, text=True, check=True
    )
    path = Path(done.stdout.strip())
    assert path.name == SCHEMA_NAME
    assert json.loads(path.read_text(encoding="utf-8"))["title"] == "bridge-rules rule file"
    modeline = subprocess.run(
        [str(BIN / "bridge-rules"), "schema", "--modeline"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert modeline == f"# yaml-language-server: $schema={path.as_uri()}\n"


@pytest.mark.parametrize(
    "path", sorted([*(ROOT / "rules").rglob("*.yaml"), *(ROOT / "examples").rglob("*.yaml")])
)
def test_shipped_and_example_rule_files_carry_the_modeline(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    found = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert found, first
    assert (path.parent / found.group(1)).resolve() == (ROOT / "schemas" / SCHEMA_NAME)


def test_the_packaged_profiles_open_read_only() -> None:
    """The VS Code and Neovim globs match where a wheel installs the packaged rules (the
    pyproject's force-include), and not a checkout's own rules/ (which is edited)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    installed = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]["rules"]
    wheel = f"/venv/lib/python3.12/site-packages/{installed}/profiles/opencode.yaml"
    checkout = str(ROOT / "rules" / "profiles" / "opencode.yaml")
    schemas, _ = (json.loads(body) for body in _blocks("json"))
    (glob,) = [g for g, on in schemas["files.readonlyInclude"].items() if on is True]
    (lua,) = _blocks("lua")
    patterns = [
        n.value.s.decode()
        for n in ast.walk(ast.parse(lua))
        if isinstance(n, astnodes.Field)
        and isinstance(n.key, astnodes.Name)
        and n.key.id == "pattern"
        and isinstance(n.value, astnodes.String)
    ]
    (vim_pattern,) = [p for p in patterns if p != "yaml"]
    assert "vim.bo[args.buf].readonly = true" in lua
    for pattern in (glob, vim_pattern):  # both globs let * and ** cross '/', as fnmatch does
        assert fnmatch.fnmatchcase(wheel, pattern), pattern
        assert not fnmatch.fnmatchcase(checkout, pattern), pattern
