"""Fail closed: with a tool policy on, an answer is read as a client would, or not passed on.

A denied call is taken out of an answer only if the proxy can read the answer. What it
cannot read, a client may still read (a JS SDK decodes a bad byte as U+FFFD, the Python
SDK's ``json`` takes ``NaN``, both parse a stream whatever its label), so under a policy
(the rules' own, a route's, or ``x-bridge-rules-policy``) such an answer becomes a 502
before anything is sent, or, once a stream has started, an SSE ``error`` event that ends
it. Without a policy nothing here runs, and such answers go back as they came.

Read, as the specifications allow: a JSON text (RFC 8259) with an optional UTF-8 byte
order mark and lone surrogate escapes; an SSE stream (the HTML standard's
``text/event-stream``) with an optional leading BOM, CR, LF or CRLF line ends, ``data:``
with or without its space, comments, several data lines and no ``event:`` line.

Refused: a redirect; a content coding the proxy cannot undo; a label other than ``application/json``
and ``text/event-stream`` (none at all: what the request asked for); bytes that are not
UTF-8 (UTF-16 included: JSON between systems is UTF-8, RFC 8259 8.1); ``NaN`` and other
non-JSON; an event whose data is not a JSON object with a ``type``, or whose ``event:``
name is not that type (the SDKs dispatch on the name and build from the data).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from bridge_rules import jsonio
from bridge_rules.proxy.coding import decodable
from bridge_rules.transform.framing import NOT_JSON, Event, Framed

BOM = b"\xef\xbb\xbf"
_LINES = msgspec.json.Decoder().decode_lines
"""jsonio's reader (msgspec) of values one after another: a run of events is parsed in one
call (it does not keep a value to its line: :data:`_DATA_LINES` does)."""
_EVENT_LINES = re.compile(r"event: [^\n]*(?:\nevent: [^\n]*)*")
_DATA_LINES = re.compile(r"data: \{[^\n]*\}(?:\ndata: \{[^\n]*\})*")
"""Each line ``{...}``: :data:`_LINES` reads values whatever the line ends, so a line may
hold two (``{..}{..}``), a value may run on to the next line, and a blank line holds none.
A line ending ``}`` and the next beginning ``{`` cannot be inside one value (in JSON a
``}`` is followed by ``,``, ``}``, ``]`` or the end), so with every line holding one or
more values, N values for N lines is one value a line, as each event reads its own."""
JSON_TYPES = frozenset({"application/json"})
_WHY = "; with a tool policy on, bridge-rules passes on only answers it can read"


class Unreadable(Exception):
    """An answer, or a stream's event, the proxy cannot read as what was asked."""


def media_type(content_type: str | None) -> str | None:
    if content_type is None:
        return None
    return content_type.split(";", 1)[0].strip().lower()


def refusal(status: int, applied: list[str], content_type: str | None, is_sse: bool) -> str | None:
    """Why an answer's head already says it cannot be read (a 502), or None. A redirect is
    refused too: a client following it would read an answer bridge-rules never saw."""
    if 300 <= status < 400:
        return f"the upstream answered with a redirect ({status}), which a client would " \
               f"follow past bridge-rules{_WHY}"  # fmt: skip
    if not decodable(applied):
        return f"the upstream encoded its answer with {', '.join(applied)}, which bridge-rules " \
               f"cannot decode{_WHY}"  # fmt: skip
    kind = media_type(content_type)
    if not is_sse and kind is not None and kind not in JSON_TYPES:
        return f"the upstream labelled its answer {kind!r}, neither application/json nor " \
               f"text/event-stream{_WHY}"  # fmt: skip
    return None


def read_message(data: bytes) -> dict[str, Any]:
    """A JSON answer as a client reads it (a leading BOM allowed); :class:`Unreadable`
    when it is not a JSON object in UTF-8."""
    try:
        message = jsonio.loads_answer(data[3:] if data.startswith(BOM) else data)
    except (jsonio.JSONDecodeError, RecursionError) as exc:
        why = f"not JSON: {exc}"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            why = "not UTF-8"
        raise Unreadable(f"the upstream's answer is {why}{_WHY}") from None
    if not isinstance(message, dict):
        raise Unreadable(f"the upstream's answer is not a JSON object{_WHY}")
    return message


def event_problem(event: Event) -> str | None:
    """Why a client could read ``event`` otherwise than the proxy does, or None. An event
    without data is dispatched by no client, and passes."""
    if event.data is None:
        return None
    try:
        event.raw.decode("utf-8")
    except UnicodeDecodeError:
        return "an SSE event from the upstream is not UTF-8"
    data = event.json()
    if data is NOT_JSON:
        return "an SSE event's data from the upstream is not JSON"
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str):
        return "an SSE event's data from the upstream is not an object with a type"
    if event.name is not None and event.name != kind:
        return f"an SSE event named {event.name!r} carries data of type {kind!r}"
    return None


async def without_bom(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` without the one byte order mark a stream may begin with (the SSE
    decoder drops it), however the first bytes are cut."""
    head = b""
    started = False
    async for chunk in chunks:
        if started:
            yield chunk
            continue
        head += chunk
        if len(head) < len(BOM) and BOM.startswith(head):
            continue
        started = True
        rest = head[len(BOM) :] if head.startswith(BOM) else head
        if rest:
            yield rest
    if not started and head:
        yield head


def _plainly_read(run: Framed) -> bool:
    """Whether every event of ``run`` has the shape every Anthropic endpoint sends (``event:
    NAME``, one ``data:`` line, LF ends) and data that is a JSON object of type ``NAME``,
    checked with a few passes over the whole run in C (a fifth of the time event by event
    takes). False says only that :func:`event_problem` must look, event by event."""
    if run.cr:
        return False
    try:
        lines = run.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return False
    if lines.pop() != "" or len(lines) % 3 or any(lines[2::3]):  # event, data, blank
        return False
    events, data = "\n".join(lines[0::3]), "\n".join(lines[1::3])
    if not (_EVENT_LINES.fullmatch(events) and _DATA_LINES.fullmatch(data)):
        return False
    try:
        values = _LINES(data[6:].replace("\ndata: ", "\n"))
        types = [v["type"] for v in values]
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, TypeError, KeyError):
        return False
    return types == events[7:].replace("\nevent: ", "\n").split("\n")


async def checked(runs: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The framed runs of :func:`~bridge_rules.proxy.stream.relay`, each event checked
    (:func:`event_problem`) before any of the run goes on; :class:`Unreadable` for the
    first that fails. The stream's unfinished tail is checked as an event too."""
    async for run in runs:
        if isinstance(run, Framed) and _plainly_read(run):
            yield run
            continue
        events = run.events() if isinstance(run, Framed) else [Event(run)]
        for event in events:
            problem = event_problem(event)
            if problem is not None:
                raise Unreadable(problem + _WHY)
        yield run
