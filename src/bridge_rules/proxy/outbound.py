"""The rewrite step of a request: the rules' turn, taken in the proxy's terms (client errors
for what the rules refuse or cannot read, the outcome on the access line)."""

from __future__ import annotations

import logging

from bridge_rules import jsonio
from bridge_rules.debuglog import DebugLog
from bridge_rules.engine import Engine, PolicyError
from bridge_rules.gcpause import paused_for
from bridge_rules.proxy.body import parse_payload, unreadable
from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.forward import Exchange
from bridge_rules.proxy.routes import POLICY_HEADER, requested_switches

log = logging.getLogger("bridge_rules.proxy")


def rewrite_request(ex: Exchange, engine: Engine, debug: DebugLog | None, cache_on: bool) -> None:
    """The request's rewrite: one :meth:`Engine.turn` over ``ex.body``, its faults as the
    client's errors, its outcome on the access record and, with ``--debug-log``, in it."""
    body = ex.body
    with paused_for(len(body)):
        if body.lstrip()[:1] != b"{":
            parse_payload(body)  # the precise 400: empty, not JSON, or not an object
        record = ex.reply.record
        try:
            policy = (*ex.switches, *requested_switches(ex.scope["headers"]))
            turn = engine.turn(body, policy=policy)
        except jsonio.JSONDecodeError as exc:
            raise unreadable(exc) from None
        except PolicyError as exc:
            raise ProxyError(400, f"{POLICY_HEADER}: {exc}") from None
        except RecursionError:
            raise ProxyError(
                400, "request body is nested too deeply for bridge-rules to rewrite"
            ) from None
        except Exception as exc:
            log.error("the rewrite failed on the request: %s: %s", type(exc).__name__, exc)
            raise ProxyError(
                500, f"bridge-rules could not rewrite the request ({type(exc).__name__})"
            ) from None
        result = turn.outcome
        if result.rejected:
            raise ProxyError(400, result.rejected)
        model = result.fields.get("model")
        record.model = model if isinstance(model, str) else None
        record.stream = result.fields.get("stream") is True
        record.gate = result.gate_open
        record.renames = dict(result.renames)
        if result.gate_open and cache_on:
            record.cache = (result.reused, result.stored, result.tools_reused)
        if debug is not None:
            ex.debug["request_body"] = debug.body(jsonio.loads(body))
            if result.gate_open or result.policed:
                ex.debug["upstream_body"] = debug.body(jsonio.loads(result.body))
        ex.rewritten(turn)
