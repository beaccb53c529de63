"""``python benchmarks/bench_lsp.py``: from a ``didChange`` to its ``publishDiagnostics``.

A 1,000-line rule file (an alias table, one entry a line, onto MCP names the pin's wildcard
accepts) is opened in a real ``bridge-rules lsp`` over stdio, then changed N times (one
entry renamed each time); each row is the time from sending the change to receiving the
file's diagnostics. The floor, measured in the same run, is ``lint``'s analysis of the same
file in this process (what the server runs per change): the difference is the protocol,
converting findings and the process boundary. Issue 41's target: ≤ 200 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

TARGET_MS = 200.0


def rule_file(lines: int, variant: int = 0) -> str:
    head = "bridge-rules: 1\npin: claude-code@2.1.330\nnames:\n  - kind: aliases\n    map:\n"
    body = "".join(
        f"      tool_{i}{'_v' + str(variant) if i == variant else ''}: mcp__bench__t{i}\n"
        for i in range(lines - 5)
    )
    return head + body


async def measure(root: Path, changes: int) -> list[float]:
    path = root / "big.bridge-rules.yaml"
    path.write_text(rule_file(1000), encoding="utf-8")
    uri = path.as_uri()
    client = LanguageClient("bench", "1")
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(params: types.PublishDiagnosticsParams) -> None:
        if params.uri == uri:
            arrived.set()

    command = [str(Path(sys.executable).parent / "bridge-rules"), "lsp"]
    await client.start_io(*command, env=dict(os.environ))
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri())
    )
    client.initialized(types.InitializedParams())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="yaml", version=1, text=path.read_text(encoding="utf-8")
            )
        )
    )
    await arrived.wait()
    times = []
    for version in range(2, changes + 2):
        arrived.clear()
        start = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangeWholeDocument(text=rule_file(1000, version))
                ],
            )
        )
        await arrived.wait()
        times.append((time.perf_counter() - start) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times


def floor(root: Path, runs: int) -> list[float]:
    """``lint``'s analysis of the same file, in process (the server's work per change)."""
    from bridge_rules.lint.analysis import analyse

    path = root / "floor.yaml"
    out = []
    for version in range(runs):
        path.write_text(rule_file(1000, version), encoding="utf-8")
        start = time.perf_counter()
        analysis = analyse(path)
        out.append((time.perf_counter() - start) * 1000)
        assert not analysis.diagnostics, [d.line() for d in analysis.diagnostics]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--changes", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        lint = floor(root, args.changes)
        served = asyncio.run(measure(root, args.changes))
    median = statistics.median(served)
    p90 = sorted(served)[int(len(served) * 0.9) - 1]
    print(f"1,000-line rule file, {args.changes} changes")
    print(f"  lint analysis in process: median {statistics.median(lint):.1f} ms")
    print(
        f"  didChange -> publishDiagnostics: median {median:.1f} ms, p90 {p90:.1f} ms, "
        f"max {max(served):.1f} ms"
    )
    verdict = "met" if p90 <= TARGET_MS else "MISSED"
    print(f"  target <= {TARGET_MS:.0f} ms (p90): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
