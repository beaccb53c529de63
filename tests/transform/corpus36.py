"""Issue 36's byte-for-byte corpus: request bodies, made the same way on every run.

The captured pi and opencode bodies (compact and as captured), then seeded random requests
that reach every part of the outbound rewrite the issue's cost work touched: tools (typed,
bridged, filtered, renamed, with schemas and descriptions, repeated so a memo can serve
them), tool-use ids a target refuses, ``tool_result`` names and ``tool_reference`` blocks,
system text, ``tool_choice``, big integers, escapes and a shut gate. ``expected()`` reads
what the sources before the issue-36 changes wrote for each (``data/corpus36.json``,
made by ``python -m tests.transform.corpus36 > tests/transform/data/corpus36.json`` on
that commit), so the test's oracle is the old code, not the new one's assumptions.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RULES = {
    "default": None,
    "pi-tool-guard": "pi-tool-guard",
    "fixture": str(HERE / "data" / "cache_rules.yaml"),
}
OPEN = {"PI_ANTHROPIC_MESSAGES_FORCE_CANONICAL": "1"}
CLOSED = {"PI_ANTHROPIC_MESSAGES_DISABLE_CANONICAL": "1"}
SEEDS = 120

_NAMES = [
    "read", "bash", "edit", "write", "ls", "grep", "find", "todo", "Read", "Bash",
    "mcp__pi__read", "mcp__pi__ls", "mcp__other__bash", "web_search", "str_replace_based_edit_tool",
    "a tool with spaces", "ünïcode", "x" * 80, "",
]  # fmt: skip
_TYPED = ["web_search_20250305", "text_editor_20250728", "bash_20250124", "custom", ""]
_IDS = [
    "toolu_01ABC", "functions.Bash:0", "call_abc", "", "a" * 70, "tool use 1", "tööl", "x/y|z",
]  # fmt: skip
_WORDS = ["pi itself", "tool search", "read", "the", "file", "Tool  Search", "é", '"q"', "\\"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _tool(rng: random.Random) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": rng.choice(_NAMES)}
    if rng.random() < 0.2:
        tool["type"] = rng.choice(_TYPED)
    if rng.random() < 0.7:
        tool["description"] = _text(rng, rng.randrange(0, 12))
    if rng.random() < 0.8:
        keys = rng.sample(["path", "file_path", "todos", "command", "edits", "n"], 2)
        props = {k: {"type": rng.choice(["string", "integer", "array"])} for k in keys}
        tool["input_schema"] = {"type": "object", "properties": props, "required": list(props)[:1]}
    return tool


def _args(rng: random.Random) -> Any:
    return rng.choice([
        {"path": "a.py"}, {"file_path": "b.py", "offset": 1}, {"command": "ls -la"},
        {"todos": [{"content": "x", "status": "pending"}]},
        {"path": "a.py", "edits": [{"oldText": "1", "newText": "2"}]},
        {"n": 18446744073709551617}, {}, "not an object", [1, 2],
    ])  # fmt: skip


def _block(rng: random.Random, call: int) -> dict[str, Any]:
    kind = rng.choice(["text", "tool_use", "tool_use", "tool_result", "tool_result", "thinking"])
    ident = rng.choice(_IDS) if rng.random() < 0.3 else f"toolu_{call:04d}"
    if kind == "text":
        return {"type": "text", "text": _text(rng, 5)}
    if kind == "thinking":
        return {"type": "thinking", "thinking": _text(rng, 3), "signature": "sig"}
    if kind == "tool_use":
        block: dict[str, Any] = {"type": "tool_use", "id": ident, "name": rng.choice(_NAMES)}
        if rng.random() < 0.9:
            block["input"] = _args(rng)
        return block
    block = {"type": "tool_result", "tool_use_id": ident}
    if rng.random() < 0.2:
        block["name"] = rng.choice(_NAMES)
    if rng.random() < 0.3:
        refs = [{"type": "tool_reference", "tool_name": rng.choice(_NAMES)}]
        block["content"] = [*refs, {"type": "text", "text": _text(rng, 2)}]
    else:
        block["content"] = _text(rng, rng.randrange(1, 20))
    return block


def _request(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    pool = [_tool(rng) for _ in range(rng.randrange(0, 9))]
    if rng.random() < 0.2:
        pool.append({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
    messages = []
    for turn in range(rng.randrange(1, 8)):
        blocks = [_block(rng, turn * 10 + k) for k in range(rng.randrange(1, 4))]
        content: Any = blocks if rng.random() < 0.9 else _text(rng, 4)
        messages.append({"role": "user" if turn % 2 == 0 else "assistant", "content": content})
    payload: dict[str, Any] = {
        "model": rng.choice(["claude-sonnet-4-5", "claude-opus-4-1", "gpt-5"]),
        "max_tokens": rng.choice([1024, 32000]),
        "messages": messages,
    }
    if pool or rng.random() < 0.5:
        payload["tools"] = pool
    if rng.random() < 0.6:
        payload["system"] = (
            _text(rng, 6) if rng.random() < 0.5 else [{"type": "text", "text": _text(rng, 6)}]
        )
    if rng.random() < 0.4:
        named = rng.choice(pool)["name"] if pool else "read"
        payload["tool_choice"] = rng.choice(
            [{"type": "auto"}, {"type": "tool", "name": named}, {"type": "none"}]
        )
    if rng.random() < 0.5:  # the keys in the order pi writes them: tools after messages
        payload = {k: payload[k] for k in sorted(payload, key=lambda k: k != "messages")}
    return payload


def bodies() -> Iterator[tuple[str, bytes]]:
    """(label, body): the captures, compact and as captured, then the seeded requests."""
    captures = sorted((ROOT / "golden" / "captures").glob("*.json"))
    for path in captures:
        raw = path.read_bytes()
        yield f"{path.stem} compact", json.dumps(json.loads(raw), separators=(",", ":")).encode()
        yield f"{path.stem} as captured", raw
    opencode = json.loads((ROOT / "pins" / "data" / "opencode-1.18.33-request.json").read_bytes())
    body = opencode["body"]
    yield "opencode", (body if isinstance(body, str) else json.dumps(body)).encode()
    for seed in range(SEEDS):
        payload = _request(seed)
        yield f"seed {seed} compact", json.dumps(payload, separators=(",", ":")).encode()
        if seed % 4 == 0:
            yield f"seed {seed} spaced", json.dumps(payload, ensure_ascii=seed % 8 == 0).encode()


def cases() -> Iterator[tuple[str, str, dict[str, str], bytes]]:
    """(label, rule set, env, body) for every body under every rule set, gate open and shut."""
    for label, body in bodies():
        for rules in RULES:
            for gate, env in (("open", OPEN), ("closed", CLOSED)):
                if gate == "closed" and rules != "default":
                    continue
                yield f"{label} / {rules} / {gate}", rules, env, body


def outcome(result: Any, body: bytes, path: str = "sha256") -> dict[str, Any]:
    """What a case must come out as: the bytes (by digest, under ``path``: ``sha256`` the
    payload's, ``bytes`` what ``outbound_bytes`` sends, a shut gate's body as it came) and
    the outcome's fields."""
    return {
        path: hashlib.sha256(body).hexdigest(),
        "renames": [list(pair) for pair in result.renames.items()],
        "registered": list(result.registered),
        "dropped": list(result.dropped),
        "gate_open": result.gate_open,
        "rejected": result.rejected,
    }


def expected() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads((HERE / "data" / "corpus36.json").read_text())
    return data


def main() -> int:
    """Write every case's outcome under the sources on the path (the old ones, once)."""
    import bridge_rules
    from bridge_rules import jsonio
    from bridge_rules.transform import rewrite_outbound  # the sources on the path: old ones

    engines = {name: bridge_rules.load(spec) for name, spec in RULES.items()}
    out = {}
    for label, rules, env, body in cases():
        result = rewrite_outbound(engines[rules].runtime, jsonio.loads(body), env=env)
        out[label] = outcome(result, jsonio.dumps(result.payload))
        sent = engines[rules].outbound_bytes(body, env=env, cache=False)
        out[label]["bytes"] = outcome(sent, sent.body, "bytes")["bytes"]
    sys.stdout.write(json.dumps(out, indent=0, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
