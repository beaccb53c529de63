"""What a gateway says about itself, recorded so ``drift`` can report a change.

Two answers are worth a record: the Models API's ``GET /v1/models`` (each model's
``capabilities``, as the SDK types ``ModelInfo.capabilities``: thinking types, effort
levels, structured outputs, image and PDF input, server tools), and the machine-readable
gateway contract a ``claude gateway`` serves at ``GET /protocol``. A record is a small JSON
document (``kind: models`` or ``kind: protocol``) beside the pins, under
``.bridge-rules/captures/NAME@VERSION.json``; ``bridge-rules drift`` compares two of them
path by path.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bridge_rules.capture.document import now

KINDS = ("models", "protocol")
CAPTURE_DIR = Path(".bridge-rules") / "captures"
_PAGES = 50
_LIMIT = 8 * 1024 * 1024  # an answer larger than this is not a model list
_HEADING = re.compile(r"(#{1,6})\s+(.*)")


class GatewayError(Exception):
    """The endpoint could not be read (unreachable, not 200, not JSON, not the shape)."""


def _get(url: str, text: bool = False) -> Any:
    """The JSON answer of ``GET url``; with ``text``, a ``text/*`` answer (markdown) as a
    string."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise GatewayError(f"{url}: not an http(s) URL")
    accept = "application/json, text/markdown;q=0.9" if text else "application/json"
    headers = {"anthropic-version": "2023-06-01", "accept": accept}
    key = os.environ.get("ANTHROPIC_API_KEY")
    if key:
        headers["x-api-key"] = key
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            data = response.read(_LIMIT + 1)
            kind = response.headers.get_content_type()
            charset = response.headers.get_content_charset() or "utf-8"
    except urllib.error.HTTPError as exc:
        raise GatewayError(f"GET {url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise GatewayError(f"GET {url}: {exc}") from None
    if len(data) > _LIMIT:
        raise GatewayError(f"GET {url}: the answer is larger than {_LIMIT} bytes")
    if text and kind.startswith("text/") and kind != "text/html":
        try:
            return data.decode(charset)
        except (LookupError, UnicodeDecodeError):
            raise GatewayError(f"GET {url}: the answer is not {charset} text") from None
    try:
        return json.loads(data)
    except ValueError:
        wanted = "JSON or markdown" if text else "JSON"
        raise GatewayError(f"GET {url}: the answer is not {wanted}") from None


def fetch_models(base: str) -> dict[str, Any]:
    """Every page of ``GET {base}/v1/models``, as ``{id: model}``."""
    models: dict[str, Any] = {}
    after: str | None = None
    for _ in range(_PAGES):
        query = {"limit": "1000", **({"after_id": after} if after else {})}
        page = _get(f"{base.rstrip('/')}/v1/models?{urllib.parse.urlencode(query)}")
        data = page.get("data") if isinstance(page, dict) else None
        if not isinstance(data, list):
            raise GatewayError(f"{base}/v1/models: no `data` list in the answer")
        for model in data:
            if isinstance(model, dict) and isinstance(model.get("id"), str):
                models[model["id"]] = {k: v for k, v in model.items() if k != "id"}
        after = page.get("last_id")
        if not page.get("has_more") or not isinstance(after, str):
            return models
    raise GatewayError(f"{base}/v1/models: more than {_PAGES} pages")


def fetch_protocol(base: str) -> Any:
    """``GET {base}/protocol``. ``claude gateway`` 2.1.330 serves its contract as
    ``text/markdown``: it is recorded as :func:`markdown_sections`, so that ``drift`` names
    the section and the line that changed. A JSON answer is recorded as it is."""
    answer = _get(f"{base.rstrip('/')}/protocol", text=True)
    return markdown_sections(answer) if isinstance(answer, str) else answer


def markdown_sections(text: str) -> dict[str, Any]:
    """A markdown document as data ``changes`` can compare: each heading (its chain, as
    ``Title > Section``) -> its lines, each stripped line with how often it occurs (wrapped
    prose changes a line or two, never the whole section). Fenced code keeps its lines."""
    sections: dict[str, dict[str, int]] = {}
    chain: list[tuple[int, str]] = []
    here = sections.setdefault("", {})
    fenced = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fenced = not fenced
        heading = _HEADING.match(line) if not fenced else None
        if heading is not None:
            level = len(heading[1])
            chain = [(n, t) for n, t in chain if n < level] + [(level, heading[2].strip())]
            here = sections.setdefault(" > ".join(t for _, t in chain), {})
        elif line:
            here[line] = here.get(line, 0) + 1
    if not sections[""]:
        del sections[""]
    return {"format": "markdown", "sections": sections}


def record(kind: str, spec: str, base: str, answer: Any) -> dict[str, Any]:
    return {"kind": kind, "spec": spec, "source": base, "date": now(), kind: answer}


def load_record(ref: str) -> dict[str, Any] | None:
    """A record by path or by ``NAME@VERSION`` under the captures directory; None when
    ``ref`` names no record (it may be a pin)."""
    for path in (Path(ref), CAPTURE_DIR / f"{ref}.json"):
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            if isinstance(data, dict) and data.get("kind") in KINDS:
                return data
    return None


def changes(old: Any, new: Any, at: str = "") -> list[tuple[str, str, Any, Any]]:
    """``(kind, path, before, after)`` for every value added, removed or changed."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, str, Any, Any]] = []
        for key in sorted(old.keys() | new.keys(), key=str):
            path = f"{at}.{key}" if at else str(key)
            if key not in new:
                out.append(("removed", path, old[key], None))
            elif key not in old:
                out.append(("added", path, None, new[key]))
            else:
                out += changes(old[key], new[key], path)
        return out
    return [] if old == new else [("changed", at, old, new)]
