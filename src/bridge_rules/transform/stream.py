"""Stream entry points: the passes an SSE answer needs, over one framing.

:func:`open_rewriter` picks them: :class:`~bridge_rules.transform.sse.CallPass` (names,
arguments and call ids) always, and :class:`~bridge_rules.transform.second.SecondPass`
(``<tool_call>`` recovery, ``inbound.unmapped``, the tool policy) only when the rules ask
for one of those. :func:`rewrite_stream` and :func:`rewrite_stream_async` feed it chunks
in any cut.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from functools import partial

from bridge_rules.transform.chunks import ChunkRewriter, drive, drive_async
from bridge_rules.transform.framing import EventStream, Pass
from bridge_rules.transform.scope import CallScope
from bridge_rules.transform.second import SecondPass
from bridge_rules.transform.sse import CallPass


def open_rewriter(scope: CallScope) -> ChunkRewriter:
    """The passes a stream needs over one framing: the calls mapped back, then, only for
    ``<tool_call>`` recovery, an ``inbound.unmapped`` policy or a tool policy,
    :class:`SecondPass`. With the gate shut, the policy's part of :class:`SecondPass` alone."""
    rt = scope.rt
    if not scope.mapping:  # the gate is shut: names stay, only the policy judges the calls
        return EventStream([SecondPass(scope)] if rt.policy.active else [])
    passes: list[Pass] = [CallPass(scope)]
    if rt.plan.recover_tool_calls or rt.rules.unmapped != "pass" or rt.policy.active:
        passes.append(SecondPass(scope))
    return EventStream(passes)


def rewrite_stream(scope: CallScope, chunks: Iterable[bytes]) -> Iterator[bytes]:
    """An SSE response rewritten chunk by chunk, as ``scope`` says; any chunking works."""
    return drive(partial(open_rewriter, scope), chunks)


def rewrite_stream_async(scope: CallScope, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    """:func:`rewrite_stream` over an async iterable (an ASGI or aiohttp body)."""
    return drive_async(partial(open_rewriter, scope), chunks)
