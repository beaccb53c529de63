"""``bridge-rules codes [CODE]``: a diagnostic code explained, with failing and passing examples."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from bridge_rules.cli.app import app, fail
from bridge_rules.diagnostics import EXIT_OK


@app.command()
def codes(
    code: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Argument(help="A code such as BR301; without it every code is listed."),
    ] = None,
) -> int:
    """Explain a diagnostic code (or list them all)."""
    import difflib
    import textwrap

    from bridge_rules.codes import CODES

    if code is None:
        for doc in CODES.values():
            sys.stdout.write(f"{doc.code}  {doc.severity:<7}  {doc.title}\n")
        return EXIT_OK
    found = CODES.get(code.upper())
    if found is None:
        near = difflib.get_close_matches(code.upper(), list(CODES), n=1)
        hint = f"; did you mean {near[0]}?" if near else "; `bridge-rules codes` lists them"
        fail(f"unknown code '{code}'{hint}")
    doc = found
    body = "\n".join(textwrap.wrap(doc.summary, width=88))
    sys.stdout.write(
        f"{doc.code} ({doc.severity}): {doc.title}\n\n{body}\n\n"
        f"Fails:\n{textwrap.indent(doc.bad, '    ')}\n"
        f"Passes:\n{textwrap.indent(doc.good, '    ')}"
    )
    return EXIT_OK
