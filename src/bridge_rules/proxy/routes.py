"""What a request chooses of the rules by its headers: policy switches that narrow them.

``x-bridge-rules-policy: read_only, no_web`` turns capability switches on for one request,
besides the rules' own (docs/policy.md). The switches travel with the request into its
:class:`~bridge_rules.transform.turn.Turn` (``Engine.turn(body, policy=...)``), never into
a worker's state, and can only take tools away.
"""

from __future__ import annotations

from collections.abc import Iterable

from bridge_rules.policy import parse_switches

POLICY_HEADER = "x-bridge-rules-policy"
_POLICY_KEY = POLICY_HEADER.encode()


def requested_switches(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, ...]:
    """The switches every ``x-bridge-rules-policy`` header names, in order (ASGI headers:
    lowercased names)."""
    found: tuple[str, ...] = ()
    for key, value in headers:
        if key == _POLICY_KEY:
            found += parse_switches(value.decode("latin-1"))
    return found
