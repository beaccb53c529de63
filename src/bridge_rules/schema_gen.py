"""Generate ``schemas/bridge-rules.schema.json`` (the rule format) from :mod:`bridge_rules.model`.

Editors validate and autocomplete rule files through the
``# yaml-language-server: $schema=`` modeline; generating the schema from the
pydantic models keeps it from drifting from what the loader accepts. A test
fails when the checked-in file is stale.

``python -m bridge_rules.schema_gen`` rewrites it; ``--check`` exits 1 when it
is stale (and writes nothing).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bridge_rules.model import RuleFile
from bridge_rules.resources import schemas_dir

SCHEMA_NAME = "bridge-rules.schema.json"
SCHEMA_ID = "https://github.com/bridge-rules/bridge-rules/schemas/bridge-rules.schema.json"


def rule_format_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one rule file, keys spelled as in YAML."""
    body = RuleFile.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **body,
        "title": "bridge-rules rule file",
    }


def render() -> str:
    """The file's exact text: stable key order, two-space indent, trailing newline."""
    return json.dumps(rule_format_schema(), indent=2, ensure_ascii=False) + "\n"


def schema_path() -> Path:
    return schemas_dir() / SCHEMA_NAME


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = schema_path()
    text = render()
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if "--check" in args:
        if current != text:
            sys.stderr.write(
                f"{path} is stale; regenerate it with `python -m bridge_rules.schema_gen`\n"
            )
            return 1
        return 0
    if current != text:
        path.write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
