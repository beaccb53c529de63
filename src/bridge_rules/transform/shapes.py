"""A streamed tool call's events in the shape Anthropic's endpoints write, read and written
as bytes.

Every Anthropic endpoint writes a ``tool_use`` block's events the same way: an
``event:`` line, one ``data:`` line of compact JSON with its keys in one order, LF line
ends. Gateways that re-serialise the stream (LiteLLM-style, Python's ``json.dumps``) keep
that order and add spaces after ``:`` and ``,``. :class:`~bridge_rules.transform.sse.CallPass`
reads events in that shape, with any spaces and tabs JSON allows between tokens, with the
patterns here instead of parsing them, and writes a renamed start and the one adapted
delta as rebuilding the parsed event writes them (compact); any other shape is parsed.

What makes that exact: the strings matched hold no escape a parser and orjson would write
differently back (no ``\\u``, so pieces of input also join as their decoded text joins),
and the pass checks their bytes are UTF-8 when they are not ASCII. So the fields read are
what parsing the event gives, and an event built around them is what writing the parsed
event gives (``tests/transform/test_sse_shapes.py`` holds the pass to its parsing path).
"""

from __future__ import annotations

import re
from typing import Any

from bridge_rules import jsonio
from bridge_rules.calls import ToolCall
from bridge_rules.transform.framing import Event

BLOCK_KEY = b'"content_block"'
"""What runs are searched for: every block start that names a block has this key, and no
other event does (a delta's type, ``"content_block_delta"``, has no quote after
``block``); ``bytes.find`` skips through text faster on it than on the event's name."""

ESCAPE = b"\\u"
"""What makes an event's bytes say nothing: a JSON ``\\u`` escape can spell any key, type or
name (``"\\u0069ndex"``, ``"tool\\u005fuse"``, ``"B\\u0061sh"``), so an event or a run
holding one is parsed, as the agent will read it, before any pass looks for a word in its
bytes or lets it go by them. The Anthropic API writes none outside text it streams."""

INDEX = rb"(0|[1-9][0-9]{0,8})"
"""An event's ``index`` as JSON writes it (no sign, no leading zero), captured."""
_PLAIN = rb'[^"\\\x00-\x1f]*'
_ESCAPED = _PLAIN + rb'(?:\\["\\/bfnrt]' + _PLAIN + rb")*"


def spaced_json(pattern: bytes) -> bytes:
    """``pattern`` with the whitespace JSON allows in one line (spaces, tabs) wherever a
    ``~`` stands: around every ``{ } : ,`` and the value as a whole. The Anthropic API
    writes none, gateways that re-serialise with Python's ``json.dumps`` a space after
    each ``:`` and ``,``; both are read here."""
    return pattern.replace(b"~", rb"[ \t]*")


_START = spaced_json(
    rb'event: content_block_start\ndata: ~\{~"type"~:~"content_block_start"~,~"index"~:~%s~,~'
    rb'"content_block"~:~\{~"type"~:~"tool_use"~,~"id"~:~"(%s)"~,~"name"~:~"(%s)"~,~'
    rb'"input"~:~\{~\}~\}~\}~\n\n'
)
_DELTA = spaced_json(
    rb'event: content_block_delta\ndata: ~\{~"type"~:~"content_block_delta"~,~"index"~:~%s~,~'
    rb'"delta"~:~\{~"type"~:~"input_json_delta"~,~"partial_json"~:~"%s"~\}~\}~\n\n'
)
_STOP = spaced_json(
    rb'event: content_block_stop\ndata: ~\{~"type"~:~"content_block_stop"~,~"index"~:~%s~\}~\n\n'
)

TOOL_START = re.compile(_START % (INDEX, _PLAIN, _PLAIN))
"""A ``tool_use`` start whose input streams after it: index, id, name."""
ARGS_DELTA = re.compile(_DELTA % (INDEX, rb"(" + _ESCAPED + rb")"))
"""An ``input_json_delta``: index, the bytes between the quotes of ``partial_json``."""
STOP = re.compile(_STOP % INDEX)
"""A ``content_block_stop``: index."""
WHOLE_CALL = re.compile(
    _START % (INDEX, _PLAIN, _PLAIN)
    + rb"((?:" + _DELTA % (rb"\1", _ESCAPED) + rb")*)"
    + _STOP % rb"\1"
).match  # fmt: skip
"""A whole call in one run: index, id, name, then the span of its argument deltas (all
of the same index, like its stop)."""
PIECES = re.compile(spaced_json(rb'"partial_json"~:~"(%s)"~\}~\}~\n\n') % _ESCAPED).findall
"""The pieces of input in a span of argument deltas, as bytes between quotes."""
_STARTED = (
    b'event: content_block_start\ndata: {"type":"content_block_start","index":%d,'
    b'"content_block":{"type":"tool_use","id":"%s","name":"%s","input":{}}}\n\n'
)
_ARGS = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
    b'"delta":{"type":"input_json_delta","partial_json":%s}}\n\n'
)


def tool_start(index: int, ident: bytes, name: bytes) -> bytes:
    """A tool block's start with ``name`` (as written in JSON) for the one it had, written
    as rebuilding the parsed event writes it: compact whatever spacing it came with."""
    return _STARTED % (index, ident, name)


def is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def string_text(inner: bytes) -> str:
    """The text a JSON string holds, from the bytes between its quotes."""
    return jsonio.loads(b'"%s"' % inner)  # type: ignore[no-any-return]


def delta_data(index: int, call: ToolCall) -> dict[str, Any]:
    """The data of the one delta that carries a call's adapted input."""
    partial = jsonio.dumps(call.arguments).decode()
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": partial},
    }


def args_delta(index: int, call: ToolCall) -> Event:
    """That delta in the common shape, written around its one string as writing the whole
    event would write it."""
    data = delta_data(index, call)
    return Event(_ARGS % (index, jsonio.dumps(data["delta"]["partial_json"])), data)
