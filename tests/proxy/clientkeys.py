"""Helpers for the client-key tests: keys made by the real ``bridge-rules keys new``, and
the leak check every refused response goes through.

A refusal may say that a key is missing, unknown or not allowed; it must never carry key
material (any key's text or hash, whole or in part), any key's name, or an upstream
credential. The check looks for each secret and for its first 12 characters, in the body
and every header, case-insensitively.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from tests.proxy.test_proxy_cli import BIN


@dataclass
class Keys:
    """A keys file and the keys ``keys new`` printed for it, by name."""

    path: Path
    made: dict[str, str] = field(default_factory=dict)
    credentials: list[str] = field(default_factory=list)

    def new(self, name: str, extra: str = "") -> str:
        done = subprocess.run(
            [str(BIN), "keys", "new", name, "--file", str(self.path)],
            capture_output=True,
            text=True,
            check=True,
        )
        key = done.stdout.strip()
        assert done.stdout == key + "\n"  # the key, once, and nothing else on stdout
        assert key not in done.stderr
        if extra:
            with self.path.open("a", encoding="utf-8") as out:
                out.write("".join(f"    {line}\n" for line in extra.splitlines()))
        self.made[name] = key
        return key

    def revoke(self, name: str) -> None:
        subprocess.run(
            [str(BIN), "keys", "revoke", name, "--file", str(self.path)],
            capture_output=True,
            check=True,
        )

    def secrets(self) -> list[str]:
        """Everything a refused client must not learn."""
        found = [*self.credentials, *self.made]
        for key in self.made.values():
            found += [key, hashlib.sha256(key.encode()).hexdigest()]
        return found


def assert_no_leak(reply: httpx.Response, keys: Keys, allowed_names: tuple[str, ...] = ()) -> None:
    """``reply`` (a refusal) says nothing of any key, key name or upstream credential."""
    text = reply.content.decode("latin-1").lower()
    headers = " ".join(f"{k}: {v}" for k, v in reply.headers.items()).lower()
    for secret in keys.secrets():
        if secret in allowed_names:
            continue
        for piece in {secret, secret[:12]}:
            sought = piece if len(piece) >= 4 else f"'{piece}'"  # a short name: as a word
            assert sought.lower() not in text, (sought, reply.text)
            assert sought.lower() not in headers, (sought, headers)


def anthropic_error(reply: httpx.Response, status: int, kind: str) -> None:
    assert reply.status_code == status, reply.text
    assert reply.json() == {
        "type": "error",
        "error": {"type": kind, "message": reply.json()["error"]["message"]},
    }
