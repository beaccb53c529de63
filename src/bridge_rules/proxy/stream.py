"""A response stream on its way to the client, framed once.

The upstream's bytes go through one :class:`~bridge_rules.transform.framing.Framer`
(:func:`relay`): a rewritten stream's rewriter gets complete events (capped: an event
past ``--max-sse-event-bytes`` stops the stream before anything buffers it whole); an
untouched stream passes on as it arrives, framed only to watch it (an oversized event
is skimmed, never kept). Either way :class:`StreamWatch` sees
the events, so the proxy knows whether the stream already ended properly
(``message_stop``) or already carries the upstream's own ``error`` event; in either
case it adds no error event of its own. The rewriter emits both as soon as they arrive.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from bridge_rules.transform.framing import Event, EventTooLarge, Framed, Framer, split

__all__ = ["EventTooLarge", "StreamWatch", "relay", "too_large"]


class StreamWatch:
    def __init__(self) -> None:
        self.stopped = False  # a message_stop went out
        self.upstream_error = False  # the upstream's own error event went out

    def saw(self, run: Framed) -> None:
        found = (bytes.find(run, b"message_stop"), bytes.find(run, b"error"))
        if found == (-1, -1):
            return
        if run.cr or bytes.find(run, b"\\u") >= 0:  # CR ends, or a \\u escape
            for raw in split(run, run.cr):
                self._event(Event(raw))
            return
        # Only an event holding one of the two words can be of either kind (a JSON string
        # spells a letter otherwise only as itself, an event name always): just those
        # are cut out, where ``split`` would cut them, and read. Not ``run.events()``:
        # a run split there reaches the rewriter split, which then reads every event
        # instead of cutting out the few that concern it.
        for word, first in zip((b"message_stop", b"error"), found, strict=True):
            at = first
            while at >= 0:
                begin = run.after(run.rfind(b"\n\n", 0, at), 0)
                end = run.find(b"\n\n", at) + 2
                self._event(Event(run[begin:end]))
                at = run.find(word, end)

    def saw_tail(self, tail: bytes) -> None:
        """The stream's last bytes, an event without its blank line: a client may still read
        it (as the proxy always passed it on)."""
        if tail:
            self._event(Event(tail))

    def _event(self, event: Event) -> None:
        kind = event.kind
        if kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            self.upstream_error = True

    @property
    def finished(self) -> bool:
        return self.stopped or self.upstream_error


def too_large(exc: EventTooLarge) -> str:
    """What the client's error event says."""
    return (
        f"an SSE event from the upstream exceeded {exc.cap} bytes "
        "(bridge-rules serve --max-sse-event-bytes); the stream was closed"
    )


async def relay(
    chunks: AsyncIterator[bytes], cap: int, watch: StreamWatch, *, untouched: bool = False
) -> AsyncIterator[bytes]:
    """The upstream's SSE bytes, their events seen by ``watch``.

    For a rewriter: complete events as they arrive (:class:`Framed` runs, which it takes
    as they are), then the incomplete tail; raises :class:`EventTooLarge` past ``cap``.
    ``untouched``: ``chunks`` unchanged and at once, an event past ``cap`` skimmed."""
    framer = Framer(cap, skim=untouched)
    async for chunk in chunks:
        run = framer.feed(chunk)
        if run is not None:
            watch.saw(run)
        if untouched:
            yield chunk
        elif run is not None:
            yield run
    last, tail = framer.close()
    if last is not None:
        watch.saw(last)
    watch.saw_tail(tail)
    if not untouched:
        for rest in (last, tail):
            if rest:
                yield rest
