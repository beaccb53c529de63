"""``bridge-rules lsp`` (the language server, from the ``lsp`` extra) and ``bridge-rules
schema`` (where the rule files' JSON Schema is, for an editor's YAML support)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from bridge_rules.cli.app import app, fail
from bridge_rules.diagnostics import EXIT_OK

LSP_PACKAGES = frozenset({"pygls", "lsprotocol", "cattrs", "attrs"})
"""What the ``lsp`` extra brings (pygls's own dependencies too)."""
MISSING_LSP = "bridge-rules lsp needs pygls and lsprotocol: pip install 'bridge-rules[lsp]'"


@app.command()
def lsp(
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Speak over stdin/stdout (the default and only way).")
    ] = True,
) -> int:
    """Run the language server over stdio, for an editor to start (docs/editors.md).

    Diagnostics are `lint`'s as you type; hover shows `explain`; go to definition leads to
    the deciding rule. Exit status: 0 when the editor ends it, 2 without the `lsp` extra.
    """
    try:
        from bridge_rules.lsp.server import main
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in LSP_PACKAGES:
            raise
        fail(MISSING_LSP)

    main()
    return EXIT_OK


@app.command()
def schema(
    path: Annotated[
        bool, typer.Option("--path", help="Print only the file's path (the default).")
    ] = True,
    modeline: Annotated[
        bool,
        typer.Option("--modeline", help="Print the yaml-language-server modeline that uses it."),
    ] = False,
) -> int:
    """Where the rule files' JSON Schema is installed: for an editor's YAML support (a
    `# yaml-language-server: $schema=` modeline, or VS Code's `yaml.schemas`)."""
    from bridge_rules.schema_gen import schema_path

    found = schema_path().resolve()
    if modeline:
        sys.stdout.write(f"# yaml-language-server: $schema={found.as_uri()}\n")
    else:
        sys.stdout.write(f"{found}\n")
    return EXIT_OK
