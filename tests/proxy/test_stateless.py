"""Any worker of any replica gives the same answer (issue 25).

A 20-turn pi conversation with the pi-tool-guard profile, whose bash calls get their
trailing pipelines stripped (the agent runs the rest, the proxy applies the stripped
stages to the next request's ``tool_result``), goes once through one ``serve`` process
with one worker, and once through two ``serve`` processes with ``--workers 4`` each
behind a round-robin TCP balancer, a fresh connection per request. The upstream
requests and the client's responses must be the same bytes: nothing a later turn needs
lives in a worker. The agent really runs each command it gets (``/bin/sh``), so a
filter that was stripped and then not applied shows in the upstream's bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import orjson
from test_proxy_cli import wait_healthy
from tests.balancer import Balancer
from tests.ports import free_port

BIN = Path(sys.executable).parent / "bridge-rules"
CAPTURE = Path(__file__).parent.parent / "golden" / "captures" / "pi-turn1.json"
TURNS = 20
KEY = "stateless-test-seal-key-0123456789"
# What the model asks for, turn by turn: pipelines the profile strips, and some it keeps.
COMMANDS = [
    "seq 1 40 | grep 3",
    "seq 1 30 | grep -v 1 | head -n 5",
    "printf 'b\\na\\nc\\na\\n' | sort | uniq -c",
    "seq 1 100 | tail -n 3",
    "printf 'x y z\\n1 2 3\\n' | wc -w",
    "seq 5 | sed s/1/one/",
    "printf 'k:v\\nq:w\\n' | cut -d: -f2",
    "seq 1 12 | grep -c 1",
]


def reply_for(request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The model's answer, a function of the request alone: turn n asks for one command
    (every third turn two calls at once); the last turn ends the conversation."""
    turn = sum(1 for m in request["messages"] if m.get("role") == "assistant")
    stream = request.get("stream") is True
    if turn >= TURNS:
        content: list[dict[str, Any]] = [{"type": "text", "text": "All done."}]
        return {"content": content, "stop_reason": "end_turn"}, stream
    picks = [turn] if turn % 3 else [turn, turn + 1]
    content = [
        {
            "type": "tool_use",
            "id": f"toolu_{turn:02d}_{n}",
            "name": "Bash",
            "input": {"command": COMMANDS[p % len(COMMANDS)]},
        }
        for n, p in enumerate(picks)
    ]
    return {"content": content, "stop_reason": "tool_use"}, stream


def sse(message: dict[str, Any]) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        }
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        else:
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                }
            )
            args = orjson.dumps(block["input"]).decode()
            for part in (args[:9], args[9:]):  # arguments arrive in pieces
                delta = {"type": "input_json_delta", "partial_json": part}
                events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"]}})
    events.append({"type": "message_stop"})
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )


class Model(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ModelHandler)
        self.seen: list[bytes] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ModelHandler(BaseHTTPRequestHandler):
    server: Model

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        with self.server.lock:
            self.server.seen.append(body)
        message, stream = reply_for(orjson.loads(body))
        if stream:
            data, kind = sse(message), "text/event-stream"
        else:
            whole = {"id": "msg_1", "type": "message", "role": "assistant", **message}
            data, kind = orjson.dumps(whole), "application/json"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serve(upstream: str, workers: int) -> Iterator[int]:
    port = free_port()
    env = {**os.environ, "BRIDGE_RULES_SEAL_KEY": KEY}
    argv = [str(BIN), "serve", "--rules", "pi-tool-guard", "--upstream", upstream]
    argv += ["--port", str(port), "--workers", str(workers)]
    proc = subprocess.Popen(
        argv,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        yield port
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def assembled(data: bytes, stream: bool) -> dict[str, Any]:
    """The assistant message a client builds from the answer's bytes."""
    if not stream:
        message: dict[str, Any] = orjson.loads(data)
        return message
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for raw in data.split(b"\n\n"):
        lines = [line[6:] for line in raw.split(b"\n") if line.startswith(b"data: ")]
        if not lines:
            continue
        event = orjson.loads(lines[0])
        if event["type"] == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
            partial[event["index"]] = ""
        elif event["type"] == "content_block_delta" and "partial_json" in event["delta"]:
            partial[event["index"]] += event["delta"]["partial_json"]
    for index, block in blocks.items():
        if block["type"] == "tool_use":
            block["input"] = orjson.loads(partial[index] or "{}")
    return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}


def run(command: str, cwd: Path) -> str:
    done = subprocess.run(
        ["/bin/sh", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
    )
    return done.stdout


def converse(url: str, cwd: Path) -> list[bytes]:
    """The agent's side of the conversation: every answer's bytes, as the client got them."""
    first = orjson.loads(CAPTURE.read_bytes())
    request: dict[str, Any] = {
        "model": first["model"],
        "max_tokens": 1024,
        "system": first["system"],
        "tools": first["tools"],
        "messages": [{"role": "user", "content": "Look around with bash, please."}],
    }
    answers: list[bytes] = []
    for turn in range(TURNS + 1):
        request["stream"] = turn % 2 == 1
        with httpx.Client(trust_env=False) as client:  # a fresh connection each request
            r = client.post(url + "/v1/messages", content=orjson.dumps(request), timeout=30)
        assert r.status_code == 200, r.text
        answers.append(r.content)
        message = assembled(r.content, request["stream"])
        calls = [b for b in message["content"] if b["type"] == "tool_use"]
        if not calls:
            break
        request["messages"] += [
            {"role": "assistant", "content": message["content"]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": c["id"],
                        "content": run(c["input"]["command"], cwd),
                    }
                    for c in calls
                ],
            },
        ]
    return answers


def test_two_replicas_of_four_workers_answer_as_one_worker_does(tmp_path: Path) -> None:
    with ExitStack() as stack:
        single_model = stack.enter_context(_model())
        single = stack.enter_context(serve(single_model.url, 1))
        one = converse(f"http://127.0.0.1:{single}", tmp_path)

        spread_model = stack.enter_context(_model())
        ports = [stack.enter_context(serve(spread_model.url, 4)) for _ in range(2)]
        balancer = Balancer(ports)
        url = stack.enter_context(balancer.running())
        spread = converse(url, tmp_path)

    assert len(one) == TURNS + 1
    assert spread == one  # the client got the same bytes
    assert spread_model.seen == single_model.seen  # and so did the upstream
    assert set(balancer.picked) == set(ports)
    # The conversation exercised the pipelines: a stripped stage applied by the proxy, the
    # model's own command back in history, and a stage the profile cannot apply kept.
    last = orjson.loads(single_model.seen[-1])
    history = [b for m in last["messages"] if isinstance(m["content"], list) for b in m["content"]]
    commands = [b["input"]["command"] for b in history if b["type"] == "tool_use"]
    results = {b["tool_use_id"]: b["content"] for b in history if b["type"] == "tool_result"}
    asked = [
        c["input"]["command"]
        for turn in range(TURNS)
        for c in reply_for({"messages": [{"role": "assistant"}] * turn})[0]["content"]
    ]
    assert commands == asked  # the model sees its own commands, streamed turns included
    assert results["toolu_00_0"] == run("seq 1 40 | grep 3", tmp_path)
    # ... and exactly their output, though the agent ran only what was left of each
    assert all(r == run(c, tmp_path) for c, r in zip(commands, results.values(), strict=True))
    assert all("_brs" not in b.decode() for b in single_model.seen)  # ids restored upstream


@contextmanager
def _model() -> Iterator[Model]:
    model = Model()
    threading.Thread(target=model.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield model
    finally:
        model.shutdown()
        model.server_close()
