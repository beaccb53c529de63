"""``GET /v1/models``: the models a route offers, in the Models API's list shape.

Claude Code's gateway protocol discovers models through ``GET /v1/models``. An HTTP upstream
that has the endpoint answers it itself (the proxy forwards it, as any path). A route whose
upstream has no such endpoint (``--upstream claude-code``) is answered here: the models
that CLI version offers (its aliases resolved, :mod:`~bridge_rules.proxy.claude_code.offered`),
named and dated by the route's rules where they list the id, or, when the CLI cannot say,
the models the rules name exactly with a ``display_name`` (``models:``). Paged as the API
pages: ``limit`` (1-1000, default 20), ``after_id`` / ``before_id``, newest first;
``GET /v1/models/{id}`` answers one model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from bridge_rules import jsonio
from bridge_rules.engine import ModelTable
from bridge_rules.proxy.endpoints import BY_NAME
from bridge_rules.proxy.errors import ProxyError
from bridge_rules.proxy.reply import JSON

PATH = BY_NAME["models"].path


def is_models_path(method: str, path: str) -> bool:
    """``path`` (canonical) is the Models API's list or one of its models."""
    return method == "GET" and (path == PATH or path.startswith(PATH + "/"))


def _shown(model: Any) -> dict[str, Any]:
    """One listed model (``modelrules.ListedModel``) as the Models API shows it."""
    return {
        "type": "model",
        "id": model.id,
        "display_name": model.display_name,
        "created_at": model.created_at,
    }


EPOCH = "1970-01-01T00:00:00Z"
"""``created_at`` when the release time is unknown, as the Models API itself says it."""


@dataclass(frozen=True)
class Shown:
    id: str
    display_name: str
    created_at: str


def offered_models(table: ModelTable, offered: list[Any] | None) -> list[Shown]:
    """What a route lists: the CLI's models (``offered``, aliases resolved) named and dated
    from the rules where they list the id; without the CLI's answer, the rules' models."""
    listed = {m.id: m for m in table.listed}
    if offered is None:
        shown = [Shown(m.id, m.display_name, m.created_at) for m in listed.values()]
    else:
        shown = []
        for model in offered:
            known = listed.get(model.id)
            name = known.display_name if known else model.display_name
            shown.append(Shown(model.id, name, known.created_at if known else EPOCH))
    return sorted(shown, key=lambda m: m.created_at, reverse=True)


def listing(table: ModelTable, path: str, query: bytes, offered: list[Any] | None = None) -> bytes:
    """The answer's body; a ProxyError (404, 400) for an unknown id or a bad parameter."""
    models = offered_models(table, offered)
    if path != PATH:
        wanted = path[len(PATH) + 1 :]
        for model in models:
            if model.id == wanted:
                return jsonio.dumps(_shown(model))
        raise ProxyError(404, f"model {wanted!r} is not offered on this route")
    params = parse_qs(query.decode("latin-1"))
    limit_text = params.get("limit", ["20"])[-1]
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= 1000:
        raise ProxyError(400, "limit: an integer from 1 to 1000")
    limit = int(limit_text)
    ids = [m.id for m in models]
    start, end = 0, len(models)
    after, before = params.get("after_id", [None])[-1], params.get("before_id", [None])[-1]
    if after is not None:
        start = ids.index(after) + 1 if after in ids else len(ids)
    if before is not None:
        end = ids.index(before) if before in ids else 0
        start = max(start, end - limit)
    page = models[start:end][:limit]
    body = {
        "data": [_shown(m) for m in page],
        "has_more": start + len(page) < end if before is None else start > 0,
        "first_id": page[0].id if page else None,
        "last_id": page[-1].id if page else None,
    }
    return jsonio.dumps(body)


async def answer(ex: Any, table: ModelTable, offered: list[Any] | None = None) -> None:
    """Answer ``ex`` (a GET of ``/v1/models`` or ``/v1/models/{id}``)."""
    from bridge_rules.proxy.paths import canonical

    scope = ex.scope
    path = canonical(scope["path"])
    body = listing(table, path, scope.get("query_string", b""), offered)
    await ex.reply.full(200, [(b"content-type", JSON)], body)
