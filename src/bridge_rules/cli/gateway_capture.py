"""``pin capture --models URL`` / ``--protocol URL`` and ``drift`` between two such records.

Kept apart from the pin commands: a record is not a pin (no tools), and lives in its own
directory so ``pin list`` and the pin loader never read it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from bridge_rules.cli.app import CommandError, fail
from bridge_rules.diagnostics import EXIT_FINDINGS, EXIT_OK


def _gateway_url(flag: str, help: str) -> Any:
    """``pin capture``'s two ways to record a gateway's answer instead of running an agent."""
    return typer.Option(flag, help=help, metavar="URL")


ModelsOption = Annotated[
    Optional[str],  # noqa: UP045
    _gateway_url(
        "--models",
        "Record URL's `GET /v1/models` answer (each model's capabilities) instead "
        "of running an agent; `drift` compares two records.",
    ),
]
ProtocolOption = Annotated[
    Optional[str],  # noqa: UP045
    _gateway_url(
        "--protocol",
        "Record the gateway protocol a `claude gateway` at URL serves (`GET "
        "/protocol`) instead of running an agent.",
    ),
]


def pin_spec(spec: str) -> str:
    """``spec`` when it names a pin (NAME@VERSION); else a usage error."""
    from bridge_rules.pins import PinError, parse_spec

    try:
        parse_spec(spec)
    except PinError as exc:
        fail(str(exc))
    return spec


def capture_gateway(
    spec: str, models: str | None, protocol: str | None, out: Path | None, *, force: bool
) -> int:
    from bridge_rules.capture import gateway

    if models is not None and protocol is not None:
        fail("give --models or --protocol, not both")
    pin_spec(spec)
    url = models if models is not None else protocol
    if url is None or not url.startswith(("http://", "https://")):
        fail(f"{url}: not an http(s) URL")
    path = out if out is not None else gateway.CAPTURE_DIR / f"{spec}.json"
    if path.exists() and not force:
        fail(f"{path} exists; use --force to replace it")
    try:
        if models is not None:
            document = gateway.record("models", spec, models, gateway.fetch_models(models))
        else:
            assert protocol is not None
            document = gateway.record("protocol", spec, protocol, gateway.fetch_protocol(protocol))
    except gateway.GatewayError as exc:
        raise CommandError(
            f"bridge-rules: error: pin capture {spec}: {exc}", code=EXIT_FINDINGS
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {path}\n")
    return EXIT_OK


def drift_records(old: dict[str, Any], new: dict[str, Any], *, as_json: bool) -> int:
    """The changes between two records of one kind; exit 1 when there are any."""
    from bridge_rules.capture.gateway import changes

    if old["kind"] != new["kind"]:
        fail(f"cannot compare a {old['kind']} record with a {new['kind']} record")
    kind = old["kind"]
    found = changes(old.get(kind), new.get(kind))
    if as_json:
        rows = [{"kind": k, "path": p, "from": a, "to": b} for k, p, a, b in found]
        doc = {"from": old.get("spec"), "to": new.get("spec"), "changes": rows}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        lines = [f"{kind}: {old.get('spec')} -> {new.get('spec')}"]
        for what, path, before, after in found:
            lines.append(f"  {what} {path}: {_show(before)} -> {_show(after)}")
        lines.append(f"{len(found)} change{'s' if len(found) != 1 else ''}")
        sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_FINDINGS if found else EXIT_OK


def _show(value: Any) -> str:
    return "-" if value is None else json.dumps(value, sort_keys=True)
