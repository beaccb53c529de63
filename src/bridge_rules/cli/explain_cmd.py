"""``bridge-rules explain <tool>``: the trace of every stage for one tool."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from bridge_rules.cli.app import (
    RulesOption,
    app,
    fail,
    load_engine,
    split_names,
    warn,
)
from bridge_rules.cli.style import TextOrJson, paint
from bridge_rules.diagnostics import EXIT_FINDINGS, EXIT_OK
from bridge_rules.source import escape


@app.command()
def explain(  # noqa: PLR0917 - one parameter per CLI option
    tool: Annotated[
        Optional[str],  # noqa: UP045
        typer.Argument(help="The local tool name to trace, e.g. 'read'.", metavar="TOOL"),
    ] = None,
    rules: RulesOption = None,
    registered: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            help="Comma-separated local tool names that exist (default: every name the rules "
            "know).",
            metavar="NAME,...",
        ),
    ] = None,
    fmt: Annotated[TextOrJson, typer.Option("--format", "-f", help="Output.")] = TextOrJson.text,
    args: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--args",
            help="Wire-shaped arguments as JSON; shows them after each binding and repair "
            "operation.",
            metavar="JSON",
        ),
    ] = None,
    any_name: Annotated[
        bool,
        typer.Option(
            "--any",
            help="Trace TOOL even when it is not a local name the rules know (or --registered "
            "lists), without the warning and exit status 1.",
        ),
    ] = False,
    schema: Annotated[
        bool,
        typer.Option(
            "--schema",
            help="Show TOOL's input schema before and after the rules' `schemas:` conversion, "
            "and the rule behind each change (the schema from the pins, or --schema-file).",
        ),
    ] = False,
    schema_file: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--schema-file", help="A JSON file holding TOOL's input schema.", metavar="PATH"
        ),
    ] = None,
    model: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--model",
            help="Show every model-level decision (`models:`) for this model id, with the "
            "rule and place that made it (TOOL is then optional).",
            metavar="ID",
        ),
    ] = None,
) -> int:
    """Show why TOOL goes out under its wire name, and whether that name comes back.

    Exit status: 0 traced, 1 TOOL is not a local name the rules know (the trace is still
    printed; --any allows it), 2 usage error or rules that do not load.
    """
    extra: dict[str, Any] = {}
    if args is not None:
        import json

        try:
            extra["args"] = json.loads(args)
        except ValueError as exc:
            fail(f"--args is not JSON: {exc}")
    if tool is None and model is None:
        fail("give TOOL, or --model ID")
    engine = load_engine(rules)
    if model is not None:
        _explain_model(engine, model, fmt is TextOrJson.json)
        if tool is None:
            return EXIT_OK
    assert tool is not None
    if schema or schema_file is not None:
        from bridge_rules.cli.schema_views import explain_schema

        return explain_schema(engine, tool, schema_file, fmt is TextOrJson.json)
    names = split_names(registered)
    explanation: Any = engine.explain(tool, registered=names, **extra)
    if fmt is TextOrJson.json:
        import json

        sys.stdout.write(json.dumps(explanation.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(paint(explanation.render_text(), sys.stdout))
    known = [*engine.known_locals(), *(names or ())]
    if not any_name and tool not in known:
        warn(escape(_unknown(tool, known, engine)))
        return EXIT_FINDINGS
    return EXIT_OK


def _unknown(tool: str, known: list[str], engine: Any) -> str:
    """Why ``tool`` is not a known local name, and what the user may have meant."""
    from bridge_rules.diagnostics import did_you_mean

    message = f"'{tool}' is not a local tool name the rules know"
    local = engine.inbound_name(tool)
    if local is not None and local != tool:
        return f"{message}; '{tool}' is the wire name of '{local}': try `explain {local}`"
    near = did_you_mean(tool, known)
    hint = near or "pass --registered NAME,... to name the client's tools"
    return f"{message}; {hint} (--any traces it anyway)"


def _explain_model(engine: Any, model: str, as_json: bool) -> None:
    """Every ``models:`` decision for ``model``, with the entry and line that made it."""
    decisions = engine.runtime.rules.models.decide(model)
    rows = [
        {
            "field": d.field,
            "value": d.value,
            "glob": d.setting.glob if d.setting else None,
            "where": str(d.setting.span) if d.setting else None,
        }
        for d in decisions.values()
    ]
    if as_json:
        import json

        sys.stdout.write(json.dumps({"model": model, "decisions": rows}, indent=2) + "\n")
        return
    lines = [f"model {escape(model)}"]
    for d in decisions.values():
        value = d.value if isinstance(d.value, str) else json_text(d.value)
        lines.append(f"  {d.field}: {escape(value)}  <- {escape(d.where)}")
    sys.stdout.write("\n".join(lines) + "\n")


def json_text(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)
