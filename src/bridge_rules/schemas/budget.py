"""How much a conversion may inline: a budget of nodes and bytes per schema.

Inlining ``$ref``s is the one step of a conversion whose output can outgrow its input:
references that fan out (each definition pointing twice at the next) double the schema
at every step, so 2 KB would inline to gigabytes and hold a worker for seconds. Past the
budget each further ``$ref`` goes as JSON text, as a recursion past ``ref_depth`` does, so
a conversion's work stays in proportion to the schema it was given. docs/schemas.md
states the numbers; docs/security.md the promise.
"""

from __future__ import annotations

MAX_INLINED_NODES = 2_000
"""Schema nodes a conversion may add by inlining ``$ref``s, at most; past its budget, each
further ``$ref`` goes as JSON text, as a recursion past ``ref_depth`` does. References that
fan out (each definition pointing twice at the next) double the inlined schema at every
step: a 2 KB schema would inline to gigabytes. Real tool schemas inline a few dozen nodes."""
MAX_INLINED_BYTES = 256 * 1024
"""Bytes of referenced schemas a conversion may inline, at most (the same cut, by size)."""
BUDGET_BASE_NODES, BUDGET_NODES_PER_BYTE = 128, 1 / 16
BUDGET_BASE_BYTES, BUDGET_BYTES_PER_BYTE = 16 * 1024, 8
"""A schema's own budget grows with its size (a node per 16 bytes, 8 inlined bytes per
byte) up to the caps above: the work of converting a request stays in proportion to its
size, whatever its references do."""


def budget(size: int) -> tuple[int, int]:
    """(inlined nodes, inlined bytes) a schema of ``size`` JSON bytes may add."""
    nodes = BUDGET_BASE_NODES + int(size * BUDGET_NODES_PER_BYTE)
    return (
        min(MAX_INLINED_NODES, nodes),
        min(MAX_INLINED_BYTES, BUDGET_BASE_BYTES + size * BUDGET_BYTES_PER_BYTE),
    )


BUDGET_NOTE = " (the conversion's budget for inlined references is spent)"
