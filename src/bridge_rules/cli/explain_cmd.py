"""``bridge-rules explain <tool>``: the trace of every stage for one tool."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from bridge_rules.cli.app import RulesOption, app, load_engine, split_names


@app.command()
def explain(
    tool: Annotated[str, typer.Argument(help="The local tool name to trace, e.g. 'read'.")],
    rules: RulesOption = None,
    registered: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="Comma-separated local tool names that exist (default: every name the rules know)."
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    args: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--args",
            help="Wire-shaped arguments as JSON; shows them after each binding and repair "
            "operation.",
        ),
    ] = None,
) -> None:
    """Show why TOOL goes out under its wire name, and whether that name comes back."""
    if fmt not in ("text", "json"):
        from bridge_rules.cli.app import fail

        fail(f"unknown --format '{fmt}' (choose text or json)")
    extra: dict[str, Any] = {}
    if args is not None:
        import json

        try:
            extra["args"] = json.loads(args)
        except ValueError as exc:
            from bridge_rules.cli.app import fail

            fail(f"--args is not JSON: {exc}")
    engine = load_engine(rules)
    explanation: Any = engine.explain(tool, registered=split_names(registered), **extra)
    if fmt == "json":
        import json

        sys.stdout.write(json.dumps(explanation.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(explanation.render_text())
