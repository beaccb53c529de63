"""What the Claude Code CLI (2.1.332) does to a client's image before the model sees it,
as docs/claude-code-upstream.md states it: measured on the bytes the fake endpoint
received, the images made here with zlib and their sizes read from their own headers."""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from typing import Any

import httpx
import pytest
from scripted import ScriptedEndpoint, done, serving

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("claude-code")]


def png(width: int, height: int, noise: bool) -> bytes:
    """An RGB PNG: flat grey (compresses to a few KB) or noise (about 3 bytes a pixel)."""
    raw = b"".join(
        b"\x00" + (os.urandom(width * 3) if noise else b"\x80" * (width * 3)) for _ in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def kind_and_size(data: bytes) -> tuple[str, tuple[int, int]]:
    if data.startswith(b"\x89PNG"):
        width, height = struct.unpack(">II", data[16:24])
        return "png", (width, height)
    at = 2
    while at + 9 < len(data):  # JPEG: the first start-of-frame segment
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2 : at + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return "jpeg", (width, height)
        at += 2 + length
    return "unknown", (0, 0)


# (width, height, noise) -> what reaches the model: kind, size, unchanged bytes, added text
CASES: dict[str, tuple[tuple[int, int, bool], tuple[str, tuple[int, int], bool, str | None]]] = {
    "small": ((1000, 800, False), ("png", (1000, 800), True, None)),
    "2000 px wide": ((2000, 1333, False), ("png", (2000, 1333), True, None)),
    "2001 px wide": ((2001, 1000, False), ("png", (2000, 1000), False, "original 2001x1000")),
    "3000x2000": ((3000, 2000, False), ("png", (2000, 1333), False, "original 3000x2000")),
    "509,867 bytes": ((412, 412, True), ("png", (412, 412), True, None)),
    "514,825 bytes": ((414, 414, True), ("jpeg", (414, 414), False, None)),
}


@pytest.mark.parametrize("case", CASES)
def test_what_the_cli_does_to_an_image(monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    (width, height, noise), (kind, size, same, note) = CASES[case]
    data = png(width, height, noise)
    source = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(data).decode()}
    content = [{"type": "image", "source": source}, {"type": "text", "text": "what is it"}]
    ask = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": content}],
    }
    endpoint = ScriptedEndpoint([done("x")])
    with endpoint, serving(endpoint, monkeypatch) as proxy:
        assert httpx.post(f"{proxy}/v1/messages", json=ask, timeout=120).status_code == 200
    sent = json.loads(endpoint.requests[-1].body)  # no tools: a request turns() skips
    blocks: list[dict[str, Any]] = sent["messages"][-1]["content"]
    images = [b for b in blocks if b["type"] == "image"]
    texts = [
        b["text"] for b in blocks if b["type"] == "text" and "system-reminder" not in b["text"]
    ]
    assert len(images) == 1
    got = base64.b64decode(images[0]["source"]["data"])
    assert images[0]["source"]["media_type"] == f"image/{kind}"
    assert kind_and_size(got) == (kind, size)
    assert (got == data) is same
    if note is None:
        assert texts == ["what is it"]
    else:  # the client's text gets a newline, and a block of the CLI's own follows
        assert texts[0] == "what is it\n"
        assert texts[1].startswith(f"[Image: {note}, displayed at {size[0]}x{size[1]}.")
        assert len(texts) == 2
