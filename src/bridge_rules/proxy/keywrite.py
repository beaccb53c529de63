"""``bridge-rules keys new`` and ``keys revoke``: the keys file written, never the key.

``new`` appends an entry (name and SHA-256 hash) and hands the key back to be printed once;
``revoke`` takes an entry's lines out, found by the positions the safe YAML reader gives,
so the rest of the file, comments included, stays as the operator wrote it. The file is
replaced whole (a reload never reads half of it), readable by its owner only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from bridge_rules.proxy.keyfile import NAME, KeysError, digest, new_key, read_keys


def entry_text(name: str, key: str) -> str:
    return f"  - name: {name}\n    sha256: {digest(key).hex()}\n"


def add_key(path: str, name: str) -> str:
    """A new key named ``name`` whose hash is appended to ``path`` (made when absent, mode
    0600); the key itself, which nothing keeps. ``KeysError`` when the name is taken."""
    if not NAME.fullmatch(name):
        raise KeysError([f"'{name}' is not a key name: letters, digits, '_', '.' or '-'"])
    text = ""
    if os.path.exists(path):
        if any(k.name == name for k in read_keys(path, environ={})):
            raise KeysError([f"{path}: a key is already named '{name}'; revoke it first"])
        text = Path(path).read_text(encoding="utf-8")
    key = new_key()
    text = text.replace("keys: []\n", "keys:\n")
    if text and not text.endswith("\n"):
        text += "\n"
    if not re.search(r"^keys:", text, re.MULTILINE):  # a new file, or comments only
        text += "keys:\n"
    _write(path, text + entry_text(name, key))
    return key


def revoke_key(path: str, name: str) -> None:
    """Take the entry named ``name`` out of ``path`` (its lines, comments elsewhere kept)."""
    from bridge_rules.loader import read_file

    doc, diags = read_file(Path(path))
    if doc is None:
        raise KeysError([d.line() for d in diags] or [f"{path}: cannot be read"])
    entries = doc.data.get("keys") if isinstance(doc.data, dict) else None
    if not isinstance(entries, list):
        raise KeysError([f"{path}: a keys file is a mapping with one key, 'keys:', a list"])
    index = next(
        (i for i, e in enumerate(entries) if isinstance(e, dict) and e.get("name") == name), None
    )
    if index is None:
        raise KeysError([f"{path}: no key is named '{name}'"])
    lines = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
    start = doc.source_map.value_span(("keys", index)).line - 1
    end = len(lines)
    if index + 1 < len(entries):
        end = doc.source_map.value_span(("keys", index + 1)).line - 1
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1  # the entry's own comment goes with it
    kept = lines[:start] + lines[end:]
    if len(entries) == 1:
        kept = [line for line in kept if line.strip() != "keys:"] + ["keys: []\n"]
    _write(path, "".join(kept))


def _write(path: str, text: str) -> None:
    """Replace ``path`` whole (a reload never reads half a file), readable by its owner."""
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)
