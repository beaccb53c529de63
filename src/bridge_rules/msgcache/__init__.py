"""A bounded, thread-safe store of rewritten conversation messages, keyed by their bytes.

Agents resend the whole conversation on every turn, and every message but the
newest was already rewritten on the previous request. This store remembers, for
each message it has seen, the exact bytes the client sent (``raw``) and the
bytes the rewrite produced (``out``), so a repeated message is copied instead of
parsed, rewritten and serialised again.

Finding messages in a request without parsing it: entries are linked in the
order they appeared, each indexed under its predecessor (``parent``) and its
first bytes. :meth:`MessageCache.match` walks a request's ``messages`` array
from its first element, at each position trying the successors of the last
entry it matched, and compares bytes (``startswith``, a ``memcmp``). Content
decides: an entry is only ever used where its exact bytes stand, so links that
turn out wrong cost a miss, never a wrong answer. What the bytes stand for (that
``start`` really is the top-level ``messages`` array) is the caller's to check.

One position can have many successors: every conversation's first message
follows the start, and a client that retries or branches leaves siblings. The
lookup stays bounded however many there are. A run shorter than ``_PREFIX``
bytes is indexed by all its bytes, looked up once per distinct short length
stored under that parent (at most ``_PREFIX``). Longer runs sharing their first
``_PREFIX`` bytes share a list, most recently matched first and at most
``_SIBLINGS`` long; the least recently matched beyond that leaves the store.

Bounded by entries and bytes, evicting the least recently used. A request
touches its entries last-to-first, so when one conversation outgrows the store
its tail goes first and its prefix, the part the next request can reuse, stays.
The store knows nothing about rules: it lives on one compiled
:class:`~bridge_rules.runtime.Runtime`, so new rules come with an empty store.

Beside the messages, :class:`ToolsMemo` keeps the last few distinct ``tools``
arrays requests sent, with what they decided: an agent sends the same tools on
every turn, and rewriting and checking a thousand of them costs more than
parsing the whole request.
"""

from bridge_rules.msgcache.runs import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_MIN_BODY,
    ENV,
    Draft,
    Entry,
    settings_from_env,
)
from bridge_rules.msgcache.store import MessageCache
from bridge_rules.msgcache.tools import TOOLS_BYTES, TOOLS_ENTRIES, ToolsEntry, ToolsMemo

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MIN_BODY",
    "ENV",
    "TOOLS_BYTES",
    "TOOLS_ENTRIES",
    "Draft",
    "Entry",
    "MessageCache",
    "ToolsEntry",
    "ToolsMemo",
    "settings_from_env",
]
