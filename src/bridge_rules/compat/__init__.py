"""Python counterparts of the peers' exported APIs, built from loaded rules.

A peer's constants and functions (pi-anthropic-messages' ``CC_CANONICAL_NAMES``,
``resolveOutboundName``, ``buildReverseMap``, ...) are answered here from an
:class:`~bridge_rules.engine.Engine` that loaded the peer's profile, never from a
second hand-written table, so the profile stays the one place that says what the
peer does. ``tables`` is the generic part (any rule set), ``debuglog`` opens the
debug log a profile's ``debug_log: {env: ...}`` names, and ``pi_anthropic_messages``
is the seed's API under its own names (docs/python-api.md).
"""
