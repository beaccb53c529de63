"""Fail closed (issue 34.3) with the official JS SDK as the oracle, the one pi and opencode
use: answers the SDK reads leniently (a bad byte decoded as U+FFFD, any label parsed as a
stream) never give it a call to a tool the policy denies, and a plain answer still gives it
the agent's own call. The SDK is pi's own copy (npm, toolchain.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.hostile.http_kit import proxies, upstream
from tests.hostile.test_fail_closed import events, message

pytestmark = pytest.mark.e2e
ORACLE = Path(__file__).with_name("js_sdk_oracle.mjs")


def sse(name: str) -> bytes:
    return b"".join(
        b"event: %s\ndata: %s\n\n" % (e["type"].encode(), json.dumps(e).encode())
        for e in events(name)
    )


BASH_SSE, BASH_JSON = sse("Bash"), json.dumps(message("Bash")).encode()
CASES = [
    (BASH_JSON.replace(b'"Bash"', b'"Bash\xff"'), "application/json", False),
    (BASH_JSON.replace(b'"input_tokens": 1', b'"input_tokens": NaN'), "application/json", False),
    (BASH_JSON.decode().encode("utf-16"), "application/json", False),
    (b"\xef\xbb\xbf" + BASH_JSON, "application/json", False),
    (BASH_JSON, "text/plain", False),
    (BASH_SSE, "application/json", True),
    (BASH_SSE, "text/plain", True),
    (BASH_SSE, "application/octet-stream", True),
    (BASH_SSE, "text/html", True),
    (BASH_SSE.replace(b'"Bash"', b'"Bash\xff"'), "text/event-stream", True),
    (BASH_SSE.replace(b'"index": 0', b'"index": NaN', 1), "text/event-stream", True),
    (BASH_SSE.replace(b"event: content_block_start", b"event: ping"), "text/event-stream", True),
    (b"\xef\xbb\xbf" + BASH_SSE.replace(b"\n", b"\r\n"), "text/event-stream", True),
]


def sdk_dir(pi: Path) -> Path:
    for parent in pi.resolve().parents:
        found = parent / "node_modules" / "@anthropic-ai" / "sdk"
        if (found / "index.mjs").exists():
            return found
    pytest.fail(f"no @anthropic-ai/sdk beside {pi}")


def js_calls(sdk: Path, base: str, stream: bool) -> list[str]:
    args = ["node", str(ORACLE), str(sdk), base, "1" if stream else "0"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True)
    return list(json.loads(done.stdout))


def test_the_js_sdk_never_reads_a_denied_call(pi: Path) -> None:
    sdk = sdk_dir(pi)
    with upstream() as up, proxies() as make:
        base = make(up.url)
        up.reply.body, up.reply.content_type = [sse("Read")], "text/event-stream"
        assert js_calls(sdk, base, True) == ["read"]  # the oracle reads a plain answer
        for body, label, stream in CASES:
            up.reply.body, up.reply.content_type = [body], label
            for asked in (stream, not stream):
                calls = js_calls(sdk, base, asked)
                assert not {"Bash", "bash"} & set(calls), (label, asked, body[:80], calls)
