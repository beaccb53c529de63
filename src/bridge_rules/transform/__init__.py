"""Whole-payload rewriting: requests out, responses and SSE streams back.

The functions here take an :class:`~bridge_rules.engine.Engine` and translate
single calls only through its call seam (``outbound_call``, ``inbound_call``,
``wire_schema``, ``adapts_arguments``), so argument bindings live in one place.
Use them through the engine: ``eng.outbound``, ``eng.inbound``,
``eng.inbound_stream`` and ``eng.inbound_stream_async``.
"""

from bridge_rules.transform.inbound import rewrite_message
from bridge_rules.transform.outbound import OutboundResult, rewrite_outbound
from bridge_rules.transform.sse import StreamRewriter, rewrite_stream, rewrite_stream_async

__all__ = [
    "OutboundResult",
    "StreamRewriter",
    "rewrite_message",
    "rewrite_outbound",
    "rewrite_stream",
    "rewrite_stream_async",
]
