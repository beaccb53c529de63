"""Opening, editing and waiting for diagnostics, as an editor does."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

WAIT = 60.0
"""Seconds to wait for a publish before failing the test: a bound on a hang on a loaded
machine (two cores shared by many processes), not a latency check (bench_lsp.py measures it)."""


async def published(client: LanguageClient, uri: str) -> Sequence[types.Diagnostic]:
    """The next diagnostics published for ``uri`` (those before were dropped by the caller);
    the test fails, naming what was published instead, if none come within :data:`WAIT`."""

    async def arrival() -> None:
        while uri not in client.diagnostics:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    try:
        await asyncio.wait_for(arrival(), WAIT)
    except asyncio.TimeoutError:
        raise AssertionError(
            f"no diagnostics published for {uri} within {WAIT:.0f} s; "
            f"published for: {sorted(client.diagnostics) or 'nothing'}"
        ) from None
    return client.diagnostics[uri]


async def open_file(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="yaml",
                version=1,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )
    await published(client, uri)
    return uri


async def replace(
    client: LanguageClient, uri: str, text: str, version: int, wait: Sequence[str] = ()
) -> Sequence[types.Diagnostic]:
    """Replace a buffer's whole text (unsaved); the diagnostics then published for it."""
    for other in (uri, *wait):
        client.diagnostics.pop(other, None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    for other in wait:
        await published(client, other)
    return await published(client, uri)


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)
