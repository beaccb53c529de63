"""``serve --keys FILE``: the client keys, as written and checked.

A keys file is YAML (read with the rule files' safe, size-limited reader), a mapping with
one key, ``keys:``, a list of entries::

    keys:
      - name: ci
        sha256: 5f1c...           # written by `bridge-rules keys new ci`
        routes: [read-only]       # the routes it may use (none: every route)
        policy: [no_web]          # switches always on for it (they only narrow)
        route_choice: false       # the route header and model routing ignored
        admin: false              # /metrics and the detail of /readyz
        upstream_key: {env: TEAM_CI_ANTHROPIC_KEY}   # or {file: /run/secrets/ci}
        limits: {concurrent: 4, per_minute: 60, sessions: 1}

Only a hash is stored: SHA-256 of a generated key of 256 random bits. A slow KDF (argon2,
scrypt) protects secrets a person chose, which are guessable; a generated key is not, so a
fast hash loses nothing to a stolen file and costs a microsecond per request, where scrypt
at its recommended cost costs tens of milliseconds on every request. The upstream
credential a key stands for is named here, never written here: it comes from the
environment or its own file, so the keys file can be shared with whoever reviews access.

Standard library only until a file is read, as :mod:`bridge_rules.proxy.config`.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge_rules.proxy.routespec import names_of

PREFIX = "brk_"
"""Generated keys start with this, so a leaked one is recognisable (secret scanners)."""
KEY_BYTES = 32
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_HEX = re.compile(r"[0-9a-f]{64}")
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYS = ("name", "sha256", "routes", "policy", "route_choice", "admin", "upstream_key", "limits")
LIMITS = ("concurrent", "per_minute", "sessions")
EMPTY = "BR005"
"""The YAML reader's code for a file with nothing in it (comments at most)."""
MAX_KEYS = 1024
"""More keys than this is refused: each needs a slot in the shared counters (proxy.limits)."""


@dataclass(frozen=True)
class Limits:
    """Per key, 0 meaning none: requests at once, requests per minute (a token bucket of
    that size, refilled evenly over the minute), Claude Code sessions at once."""

    concurrent: int = 0
    per_minute: int = 0
    sessions: int = 0


@dataclass(frozen=True)
class KeySpec:
    """One entry of the keys file; ``credential`` is the upstream key it names, read."""

    name: str
    digest: bytes
    routes: tuple[str, ...] = ()
    policy: tuple[str, ...] = ()
    route_choice: bool = True
    admin: bool = False
    limits: Limits = field(default_factory=Limits)
    credential: str | None = field(default=None, repr=False)


class KeysError(Exception):
    """The keys file cannot be used; ``lines`` say where and why, one problem each."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(KEY_BYTES)


def digest(key: str | bytes) -> bytes:
    raw = key.encode("utf-8") if isinstance(key, str) else key
    return hashlib.sha256(raw).digest()


def read_keys(path: str, environ: Mapping[str, str] | None = None) -> tuple[KeySpec, ...]:
    """The keys of ``path``, each with its upstream credential read; :class:`KeysError`
    with every located problem otherwise. A problem never quotes a credential."""
    from bridge_rules.loader import read_file

    env = os.environ if environ is None else environ
    if not os.path.isfile(path):
        raise KeysError([f"{path}: no such file (bridge-rules keys new NAME --file {path})"])
    doc, diags = read_file(Path(path))
    if doc is None and any(d.code == EMPTY for d in diags):
        return ()  # every key revoked, or none made yet: nothing is let in
    if doc is None:
        raise KeysError([d.line() for d in diags] or [f"{path}: cannot be read"])
    smap = doc.source_map
    data = doc.data
    if not isinstance(data, dict) or set(data) != {"keys"}:
        raise KeysError([f"{path}: a keys file is a mapping with one key, 'keys:', a list"])
    if data["keys"] is None:
        return ()
    if not isinstance(data["keys"], list):
        raise KeysError([f"{path}: 'keys' takes a list of keys"])
    problems: list[str] = []
    found: list[KeySpec] = []
    for index, raw in enumerate(data["keys"]):
        at = str(smap.value_span(("keys", index)))
        spec = _entry(raw, at, env, problems)
        if spec is None:
            continue
        if any(k.name == spec.name for k in found):
            problems.append(f"{at}: two keys are named '{spec.name}'")
        elif any(k.digest == spec.digest for k in found):
            problems.append(f"{at}: key '{spec.name}' has the same hash as another key")
        found.append(spec)
    if len(found) > MAX_KEYS:
        problems.append(f"{path}: more than {MAX_KEYS} keys")
    if problems:
        raise KeysError(problems)
    return tuple(found)


def _entry(raw: Any, at: str, env: Mapping[str, str], problems: list[str]) -> KeySpec | None:
    if not isinstance(raw, dict):
        problems.append(f"{at}: each key is a mapping (name: ..., sha256: ...)")
        return None
    before = len(problems)
    unknown = [k for k in raw if k not in _KEYS]
    if unknown:
        problems.append(f"{at}: unknown key setting '{unknown[0]}' (known: {', '.join(_KEYS)})")
    name = raw.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        problems.append(f"{at}: a key needs a name of letters, digits, '_', '.' or '-'")
        name = "?"
    sha = raw.get("sha256")
    if not isinstance(sha, str) or not _HEX.fullmatch(sha):
        problems.append(f"{at}: key '{name}' needs sha256: 64 lowercase hex digits")
    lists = {k: names_of(raw.get(k, [])) for k in ("routes", "policy")}
    for key, got in lists.items():
        if got is None:
            problems.append(f"{at}: key setting '{key}' takes a name or a list of names")
    flags = {k: raw.get(k, d) for k, d in (("route_choice", True), ("admin", False))}
    for key, value in flags.items():
        if not isinstance(value, bool):
            problems.append(f"{at}: key setting '{key}' takes true or false")
    limits = _limits(raw.get("limits", {}), at, problems)
    credential = _credential(raw.get("upstream_key"), at, name, env, problems)
    if len(problems) > before:
        return None
    return KeySpec(
        name=name,
        digest=bytes.fromhex(str(sha)),
        routes=lists["routes"] or (),
        policy=lists["policy"] or (),
        route_choice=flags["route_choice"],
        admin=flags["admin"],
        limits=limits,
        credential=credential,
    )


def _limits(raw: Any, at: str, problems: list[str]) -> Limits:
    if not isinstance(raw, dict) or any(k not in LIMITS for k in raw):
        problems.append(f"{at}: 'limits' takes a mapping of {', '.join(LIMITS)}")
        return Limits()
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problems.append(f"{at}: limit '{key}' takes a whole number, 0 (none) or more")
            return Limits()
    return Limits(**raw)


def _credential(
    raw: Any, at: str, name: str, env: Mapping[str, str], problems: list[str]
) -> str | None:
    """The upstream key a client key stands for, from the environment or a file; the
    keys file only names where it is (so the file itself holds no secret)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or len(raw) != 1 or not set(raw) <= {"env", "file"}:
        problems.append(f"{at}: 'upstream_key' takes {{env: NAME}} or {{file: PATH}}")
        return None
    (kind, where), = raw.items()  # fmt: skip
    if not isinstance(where, str) or not where:
        problems.append(f"{at}: 'upstream_key' {kind} takes a name")
        return None
    if kind == "env":
        if not _ENV.fullmatch(where):
            problems.append(f"{at}: 'upstream_key' env takes a variable name")
            return None
        value = env.get(where, "").strip()
        if not value:
            problems.append(f"{at}: key '{name}': the environment variable {where} is not set")
        return value or None
    try:
        value = Path(where).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError) as exc:
        problems.append(f"{at}: key '{name}': cannot read {where}: {type(exc).__name__}")
        return None
    if not value:
        problems.append(f"{at}: key '{name}': {where} is empty")
    return value or None


def loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def keys_problems(keys: str | None, cli: bool, host: str) -> list[str]:
    """Why ``--keys`` cannot be used, or why ``serve`` must not start without it: the
    Claude Code upstream (``cli``) answers with its owner's login, so on an address others can
    reach it needs client keys (docs/security.md)."""
    if keys:
        try:
            read_keys(keys)
        except KeysError as exc:
            return [f"--keys {line}" for line in exc.lines]
        return []
    if cli and not loopback(host):
        return [
            f"--host {host} lets others reach the claude-code upstream, which answers with "
            "this machine's Claude login: give --keys FILE (bridge-rules keys new NAME), or "
            "listen on 127.0.0.1 (docs/security.md)"
        ]
    return []
