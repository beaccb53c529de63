"""``bridge-rules drift``: tools and fields that changed between two Claude Code pins."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from bridge_rules.cli.app import app, fail, load_engine
from bridge_rules.cli.style import TextOrJson
from bridge_rules.diagnostics import EXIT_FINDINGS, EXIT_OK


@app.command()
def drift(
    from_pin: Annotated[
        str, typer.Option("--from", help="The older pin, e.g. claude-code@2.1.0.", metavar="PIN")
    ],
    to_pin: Annotated[
        str, typer.Option("--to", help="The newer pin, e.g. claude-code@2.1.330.", metavar="PIN")
    ],
    rules: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--rules",
            "-r",
            help="Rules to check each change against (file, directory or profile; repeat to "
            "layer).",
            metavar="PATH|PROFILE",
        ),
    ] = None,
    fmt: Annotated[TextOrJson, typer.Option("--format", "-f", help="Output.")] = TextOrJson.text,
    exit_code: Annotated[
        bool,
        typer.Option(
            "--exit-code",
            help="Exit 1 when a change touches a tool the --rules bind or pass through (for CI).",
        ),
    ] = False,
) -> int:
    """Tools and fields added, removed or renamed between two pins, and the rules each touches.

    Given two `pin capture --models` or `--protocol` records instead, every capability or
    protocol value that changed (exit 1 when any did).
    """
    from bridge_rules.capture.gateway import load_record
    from bridge_rules.drift import drift as compare
    from bridge_rules.pins import PinError, load_pin

    records = load_record(from_pin), load_record(to_pin)
    if records[0] is not None and records[1] is not None:
        from bridge_rules.cli.gateway_capture import drift_records

        return drift_records(records[0], records[1], as_json=fmt is TextOrJson.json)

    try:
        old, new = load_pin(from_pin), load_pin(to_pin)
    except PinError as exc:
        fail(exc.describe())
    if old.product != new.product:
        fail(f"cannot compare {old.spec} with {new.spec}: different products")
    engine = load_engine(rules) if rules else None
    compiled = engine.rules if engine is not None else None
    report = compare(old, new, compiled, engine.outbound_name if engine is not None else None)
    if fmt is TextOrJson.json:
        import json

        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(report.render_text())
    return drift_exit(report, exit_code=exit_code, with_rules=engine is not None)


def drift_exit(report: Any, *, exit_code: bool, with_rules: bool) -> int:
    """1 when ``--exit-code`` asks and a change touches the rules; else 0."""
    if exit_code and not with_rules:
        sys.stderr.write("bridge-rules: warning: --exit-code needs --rules to know what is used\n")
    return EXIT_FINDINGS if exit_code and report.touched else EXIT_OK
