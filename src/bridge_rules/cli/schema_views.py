"""The schema views of ``explain --schema``; each returns its exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bridge_rules.cli.app import warn
from bridge_rules.cli.style import paint
from bridge_rules.diagnostics import EXIT_USAGE


def explain_schema(engine: Any, tool: str, schema_file: str | None, as_json: bool) -> int:
    """0 shown; 2 no schema for ``tool`` (or an unreadable ``--schema-file``)."""
    from bridge_rules.schema_view import known_schema, schema_view

    rt = engine.runtime
    if schema_file is not None:
        try:
            found: tuple[Any, str] | None = (
                json.loads(Path(schema_file).read_text(encoding="utf-8")),
                schema_file,
            )
        except (OSError, ValueError) as exc:
            warn(f"--schema-file {schema_file}: {exc}")
            return EXIT_USAGE
    else:
        found = known_schema(rt, tool)
    if found is None:
        warn(
            f"no schema known for '{tool}': the rules' pins do not have it; pass --schema-file PATH"
        )
        return EXIT_USAGE
    view = schema_view(rt, tool, *found)
    if as_json:
        sys.stdout.write(json.dumps(view.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(paint(view.render_text(), sys.stdout))
    return 0
