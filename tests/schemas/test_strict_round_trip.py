"""Issue 35.2: every call a converted schema allows reaches the agent as a call its own
schema allows, through ``serve``, ``Engine.turn`` and ``transform inbound``.

The oracles share nothing with the converter: the calls are drawn by
``hypothesis-jsonschema`` from the schemas the loopback upstream really received (nulls,
nested arrays of objects, unions, enums of integers written as strings), and each call the
agent gets is validated by ``jsonschema`` against the agent's own schema from the corpus
(115 real tool schemas, each naming its package and version). Calls drawn from the agent's
schema itself must come back byte for byte.

What the validator is allowed to relax is only what docs/schemas.md states as a loss,
written here from that text (``relaxed``): a keyword a target refuses and cannot say
another way (``maxLength`` under OpenAI strict, ``format``, ``uniqueItems``...), a
look-around pattern, the values of an object of any keys (sent as JSON text), and a
keyword that two parts of an ``allOf`` give differently.

One ``serve`` process answers every target, one route each; the upstream answers each
request with the calls drawn for it, every tool of the corpus in one answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic
import httpx
import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tests.ports import free_port
from tests.schemas.generate import calls
from tests.schemas.instances import as_json_schema
from tests.schemas.test_target_requests import _looks_around

import bridge_rules
from bridge_rules import jsonio
from bridge_rules.schemas import TARGETS

BIN = Path(sys.executable).parent / "bridge-rules"
CORPUS = json.loads((Path(__file__).parent / "corpus.json").read_text(encoding="utf-8"))["schemas"]
NAMES = [f"t{i:03d}" for i in range(len(CORPUS))]
ORIGINAL = {
    n: {k: v for k, v in e["schema"].items() if k != "$schema"}
    for n, e in zip(NAMES, CORPUS, strict=True)
}
CHUNK = 10
"""Tools per answer: Hypothesis draws one answer's calls as one example, and an example
holds only so many choices; every chunk of the corpus gets its own examples."""
SETTINGS = settings(
    max_examples=2,  # per chunk: 12 chunks x 4 targets, 20 calls an answer
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.generate),  # each step is a request: report, do not shrink
)

# ------------------------------------------------------------------ the documented losses
_WORDS_ONLY = {  # docs/schemas.md: refused, said in the description, no exact equivalent
    "openai-strict": {"maxLength", "uniqueItems", "minProperties", "maxProperties", "contains",
                      "minContains", "maxContains", "not", "if", "then", "else", "format",
                      "dependentRequired", "dependentSchemas", "unevaluatedItems",
                      "unevaluatedProperties"},
    "gemini": {"uniqueItems", "multipleOf", "format", "not", "if", "then", "else", "contains",
               "minContains", "maxContains", "dependentRequired", "dependentSchemas",
               "unevaluatedItems", "unevaluatedProperties"},
}  # fmt: skip


def relaxed(schema: Any, target: str) -> Any:
    """The agent's schema less what docs/schemas.md says ``target`` loses."""
    if isinstance(schema, list):
        return [relaxed(s, target) for s in schema]
    if not isinstance(schema, dict) or target not in _WORDS_ONLY:
        return schema
    out = {k: relaxed(v, target) for k, v in schema.items() if k not in _WORDS_ONLY[target]}
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            out[key] = {n: relaxed(v, target) for n, v in schema[key].items()}
    pattern = out.get("pattern")
    if isinstance(pattern, str) and _looks_around(pattern):
        del out["pattern"]
    if target == "openai-strict" and "pattern" in out:
        out.pop("minLength", None)  # only one pattern: a length beside one goes in words
    if target == "gemini" and out.get("type") != "integer":
        out.pop("exclusiveMinimum", None)
        out.pop("exclusiveMaximum", None)
    if out.get("type") == "object" and not out.get("properties"):  # a map: JSON text
        out.pop("additionalProperties", None)
        out.pop("propertyNames", None)
    if isinstance(out.get("allOf"), list):
        seen: dict[str, Any] = {}
        for part in out["allOf"]:
            for key in [k for k in part if k in seen and seen[k] != part[k]]:
                del part[key]
            seen.update(part)
    return out


_REQUIRE_ALL = {"openai-strict"}
"""docs/schemas.md, ``require-all``: every property required, an optional one nullable; "an
explicit ``null`` in an optional field whose own schema accepts ``null`` comes back as an
absent field: the wire cannot tell the two apart"."""


def as_documented(value: Any, schema: Any, target: str, root: Any = None) -> Any:
    """A call valid in the agent's schema as it comes back through ``target``: itself, less
    each ``null`` in an optional property where the target requires every property."""
    root = schema if root is None else root
    if target not in _REQUIRE_ALL or not isinstance(schema, dict):
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~"), {})
        return as_documented(value, node, target, root)
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or []:
            if jsonschema.Draft202012Validator(dict(branch, **_defs(root))).is_valid(value):
                return as_documented(value, branch, target, root)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props, required = schema["properties"], set(schema.get("required") or [])
        return {
            k: as_documented(v, props[k], target, root) if k in props else v
            for k, v in value.items()
            if not (v is None and k in props and k not in required)
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [as_documented(v, schema["items"], target, root) for v in value]
    return value


def _defs(root: Any) -> dict[str, Any]:
    return {k: root[k] for k in ("$defs", "definitions") if isinstance(root, dict) and k in root}


def small(schema: Any) -> Any:
    """``schema`` with arrays of at most 3 items (when it allows that many): a subset of the
    calls it allows, small enough that one example holds a chunk of them."""
    if isinstance(schema, list):
        return [small(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: small(v) if k not in ("properties", "$defs", "definitions") else v
           for k, v in schema.items()}  # fmt: skip
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            out[key] = {n: small(v) for n, v in schema[key].items()}
    if (out.get("type") == "array" or "items" in out) and "maxItems" not in out:
        low = out.get("minItems", 0)
        if isinstance(low, int) and low <= 3:
            out["maxItems"] = 3
    return out


# ------------------------------------------------------------------ the loopback model
class Model(ThreadingHTTPServer):
    """Answers each request with ``self.calls`` (tool name -> input), in that order."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.calls: list[tuple[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
        self.heads: list[int] = []
        """Each request's length, noted as soon as its headers arrive (before its body)."""
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def message(blocks: list[tuple[str, Any]]) -> dict[str, Any]:
    content = [
        {"type": "tool_use", "id": f"toolu_{i:04d}", "name": name, "input": args}
        for i, (name, args) in enumerate(blocks)
    ]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": content, "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip


def sse(whole: dict[str, Any]) -> bytes:
    start = {**whole, "content": [], "stop_reason": None}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(whole["content"]):
        head = {**block, "input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": head})
        text = jsonio.dumps(block["input"]).decode()
        for part in (text[:7], text[7:]):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                   "usage": {"output_tokens": 1}})  # fmt: skip
    events.append({"type": "message_stop"})
    return b"".join(
        b"event: %s\ndata: %s\n\n" % (e["type"].encode(), jsonio.dumps(e)) for e in events
    )


class _Handler(BaseHTTPRequestHandler):
    server: Model

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers["content-length"])
        with self.server.lock:
            self.server.heads.append(length)
        request = jsonio.loads(self.rfile.read(length))
        with self.server.lock:
            self.server.seen.append(request)
            whole = message(self.server.calls)
        stream = request.get("stream") is True
        data = sse(whole) if stream else jsonio.dumps(whole)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if stream else "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _healthy(url: str, proc: subprocess.Popen[str]) -> None:
    """``/healthz`` answers (``tests/proxy/test_proxy_cli.py`` has the same wait, in a module
    this package cannot import)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("serve never became healthy")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Model]]:
    """One ``serve`` for every target (a route each), in front of one loopback model."""
    model = Model()
    threading.Thread(target=model.serve_forever, daemon=True).start()
    home = tmp_path_factory.mktemp("serve")
    (home / "rules.yaml").write_text("bridge-rules: 1\n", encoding="utf-8")
    routes = "".join(f"  - name: {t}\n    target: {t}\n" for t in TARGETS)
    config = f"upstream: {model.url}\nrules: [{home / 'rules.yaml'}]\nroutes:\n{routes}"
    (home / "serve.yaml").write_text(config, encoding="utf-8")
    port = free_port()
    argv = [str(BIN), "serve", "--config", str(home / "serve.yaml"), "--port", str(port)]
    proc = subprocess.Popen([*argv, "--upstream", model.url], stderr=subprocess.PIPE, text=True)
    try:
        _healthy(f"http://127.0.0.1:{port}", proc)
        yield f"http://127.0.0.1:{port}", model
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
        model.shutdown()


def request(stream: bool = False, names: list[str] = NAMES) -> dict[str, Any]:
    tools = [{"name": n, "description": "A tool.", "input_schema": ORIGINAL[n]} for n in names]
    return {"model": "claude-x", "max_tokens": 16, "stream": stream,
            "messages": [{"role": "user", "content": "go"}], "tools": tools}  # fmt: skip


def _rules(tmp: Path, target: str, pin: str = "") -> str:
    path = tmp / f"{target}{'-pin' if pin else ''}.yaml"
    path.write_text(f"bridge-rules: 1\nschemas: {{target: {target}}}\n{pin}", encoding="utf-8")
    return str(path)


class Check:
    """The agent's schemas as validators, relaxed as documented for one target."""

    def __init__(self, target: str) -> None:
        self.target = target
        cls = jsonschema.Draft202012Validator
        self.strict = {n: cls(s) for n, s in ORIGINAL.items()}
        self.loose = {n: cls(relaxed(s, target)) for n, s in ORIGINAL.items()}
        self.exact = 0  # calls valid against the unrelaxed schema too

    def agent_gets(self, name: str, args: Any) -> None:
        errors = list(self.loose[name].iter_errors(args))
        assert not errors, (self.target, name, args, errors[0].message, list(errors[0].path))
        self.exact += self.strict[name].is_valid(args)


def _returned(
    client: anthropic.Anthropic, target: str, stream: bool, names: list[str]
) -> tuple[list[Any], list[str]]:
    """(inputs the agent gets, their JSON text as it came) through the proxy's route."""
    body = request(stream, names)
    headers = {"x-bridge-rules-route": target}
    if not stream:
        raw = client.messages.with_raw_response.create(**body, extra_headers=headers)
        got = jsonio.loads(raw.http_response.content)["content"]
        return [b["input"] for b in got], [jsonio.dumps(b["input"]).decode() for b in got]
    texts: dict[int, str] = {}
    inputs: dict[int, Any] = {}
    with client.messages.create(**body, extra_headers=headers) as events:
        for event in events:
            if event.type == "content_block_start" and event.content_block.type == "tool_use":
                texts[event.index] = ""
                inputs[event.index] = event.content_block.input
            elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                texts[event.index] += event.delta.partial_json
    order = sorted(texts)
    got = [jsonio.loads(texts[i]) if texts[i] else inputs[i] for i in order]
    return got, [texts[i] for i in order]


PARTS = 4
"""Each target's corpus is checked in this many parts (every PARTS-th chunk), so that the
workers share a target's generation rather than one worker carrying it alone."""


@pytest.mark.parametrize("part", range(PARTS))
@pytest.mark.parametrize("target", TARGETS)
def test_calls_the_wire_allows_reach_the_agent_as_its_schema_allows(
    proxy: tuple[str, Model], target: str, part: int, tmp_path: Path
) -> None:
    base, model = proxy
    client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0, timeout=30)
    with model.lock:
        model.calls = []
    client.messages.create(**request(), extra_headers={"x-bridge-rules-route": target})
    wire = {t["name"]: t["input_schema"] for t in model.seen[-1]["tools"]}
    assert sorted(wire) == NAMES
    from_wire = {n: calls(small(as_json_schema(wire[n]))) for n in NAMES}
    from_agent = {n: calls(small(ORIGINAL[n])) for n in NAMES}
    engine = bridge_rules.load([_rules(tmp_path, target)])
    check = Check(target)
    answers: list[dict[str, Any]] = []

    def chunk(names: list[str]) -> None:
        @SETTINGS
        @given(data=st.data(), stream=st.booleans())
        def run(data: st.DataObject, stream: bool) -> None:
            drawn = [(n, data.draw(from_wire[n], label=n)) for n in names]
            valid = [(n, data.draw(from_agent[n], label=f"{n} (agent)")) for n in names]
            with model.lock:
                model.calls = drawn + valid
            got, texts = _returned(client, target, stream, names)
            turn = engine.turn(jsonio.dumps(request(names=names)))
            by_turn = turn.message(message(drawn + valid))["content"]
            assert len(got) == len(by_turn) == 2 * len(names)
            for i, (name, sent) in enumerate(drawn + valid):
                for args in (got[i], by_turn[i]["input"]):
                    check.agent_gets(name, args)
                if i >= len(drawn):  # valid in the agent's schema: as the model wrote it
                    back = as_documented(sent, ORIGINAL[name], target)
                    assert texts[i] == jsonio.dumps(back).decode(), (target, name)
                    assert jsonio.dumps(by_turn[i]["input"]) == jsonio.dumps(back)
            answers.append(message(drawn + valid))

        run()

    for start in range(part * CHUNK, len(NAMES), PARTS * CHUNK):
        chunk(NAMES[start : start + CHUNK])
    _through_transform_inbound(target, answers, check, tmp_path)
    print(f"{target}: {check.exact} calls valid against the agent's schema as written")


def _pin(tmp: Path) -> dict[str, str]:
    pins = tmp / "pins"
    pins.mkdir(exist_ok=True)
    tools = {n: {"input_schema": ORIGINAL[n]} for n in NAMES}
    (pins / "corpus@1.0.0.json").write_text(json.dumps({"tools": tools}), encoding="utf-8")
    return {**os.environ, "BRIDGE_RULES_PINS": str(pins)}


def _through_transform_inbound(
    target: str, answers: list[dict[str, Any]], check: Check, tmp: Path
) -> None:
    """Every answer, at once, through the CLI: schemas from --request, then from the pin."""
    blocks = [b for a in answers for b in a["content"]]
    whole = {**answers[0], "content": blocks}
    (tmp / "answer.json").write_bytes(jsonio.dumps(whole))
    (tmp / "request.json").write_text(json.dumps(request()), encoding="utf-8")
    env = _pin(tmp)
    ways = {
        "request": (["--rules", _rules(tmp, target), "--request", str(tmp / "request.json")],
                    f"schemas: from the request {tmp / 'request.json'}"),
        "pin": (["--rules", _rules(tmp, target, "local_pin: corpus@1.0.0\n")],
                "schemas: from the local pin corpus@1.0.0"),
    }  # fmt: skip
    for argv, said in ways.values():
        done = subprocess.run(
            [str(BIN), "transform", "inbound", str(tmp / "answer.json"), *argv],
            capture_output=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert said in done.stderr.decode()
        back = jsonio.loads(done.stdout)["content"]
        assert len(back) == len(blocks)
        for block, sent in zip(back, blocks, strict=True):
            check.agent_gets(sent["name"], block["input"])
