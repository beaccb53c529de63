"""Data carried inside a ``tool_use`` id, authenticated, so no worker has to remember it.

A call the proxy changed on its way to the agent (today: a bash command whose trailing
pipeline was stripped, to be applied to the command's output) needs that change undone
on the next request, which may reach any worker of any replica. The agent echoes the
call's id back twice, in the ``tool_use`` block of its history and in the
``tool_result`` that answers it, so the id is where the change travels:

    <original id>_brs<flag><payload, base32><tag, base32>

* the payload is the caller's bytes, zlib-compressed when that is shorter (flag ``1``;
  ``0``: as they are);
* the tag is HMAC-SHA256 over the original id and the stored bytes (each length-prefixed,
  after a versioned domain string), under a key the deployment sets
  (:envvar:`BRIDGE_RULES_SEAL_KEY`), cut to 128 bits, so a client or an upstream cannot
  make the proxy apply a change it did not make. The caller puts whatever else the seal
  must be bound to (the tool's name) in the payload, which the tag covers;
* everything after the marker is lowercase base32 (``a-z2-7``) or a digit, with no
  ``_``, so the last ``_brs`` in an id is the marker whatever the original id holds,
  and the original id comes back byte for byte. The sealed id keeps to Anthropic's
  ``^[a-zA-Z0-9_-]+$`` when the original does.

An id that does not open (no marker, a bad tag, another key, any spelling but the one
:meth:`Sealer.seal` wrote) is not sealed and passes as it is. Opening is cheap for any
string a client can send: a length bound (:data:`MAX_SEALED_CHARS`) and the alphabet
after the marker are checked before anything is decoded or hashed, so a forged id costs
a scan of at most that many characters, and no character (non-ASCII, a lone surrogate)
can make it raise.
"""

from __future__ import annotations

import base64
import hmac
import os
import re
import zlib
from collections.abc import Mapping

ENV_KEY = "BRIDGE_RULES_SEAL_KEY"
MIN_KEY_BYTES = 16
MARK = "_brs"
_TAG_CHARS = 26  # 16 bytes in unpadded base32
_DOMAIN = b"bridge-rules seal v2\x00"
_RAW, _ZIPPED = "0", "1"
MAX_SEALED_CHARS = 64 * 1024
"""The longest id :meth:`Sealer.open` looks at. A seal holds one stripped command (at most
``repair.pipeline.MAX_COMMAND_CHARS`` characters, written twice: about 40 KiB as base32
when it does not compress) after an upstream's id; anything longer is not a seal this
proxy made and passes as it is, unread."""
_SEALED_REST = re.compile(rf"[01][a-z2-7]{{{_TAG_CHARS},}}", re.ASCII)


class SealKeyError(ValueError):
    """The configured key is unusable (too short)."""


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").rstrip("=").lower()


def _unb32(text: str) -> bytes:
    return base64.b32decode(text.upper() + "=" * (-len(text) % 8))


class Sealer:
    """Seals and opens ids under one key; immutable and safe to share."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if len(key) < MIN_KEY_BYTES:
            raise SealKeyError(
                f"the seal key must be at least {MIN_KEY_BYTES} bytes, got {len(key)}"
            )
        self._key = key

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Sealer | None:
        """The sealer of ``BRIDGE_RULES_SEAL_KEY`` (UTF-8), or None when it is unset or empty."""
        value = (os.environ if env is None else env).get(ENV_KEY, "")
        return cls(value.encode("utf-8")) if value else None

    def _tag(self, call_id: str, flag: str, data: bytes) -> str:
        ident = call_id.encode("utf-8", "surrogatepass")  # any str an upstream's JSON holds
        message = b"".join((_DOMAIN, len(ident).to_bytes(8, "big"), ident, flag.encode(), data))
        return _b32(hmac.new(self._key, message, "sha256").digest()[:16])

    def seal(self, call_id: str, payload: bytes) -> str:
        zipped = zlib.compress(payload, 9)
        flag, data = (_ZIPPED, zipped) if len(zipped) < len(payload) else (_RAW, payload)
        return f"{call_id}{MARK}{flag}{_b32(data)}{self._tag(call_id, flag, data)}"

    def open(self, sealed: object) -> tuple[str, bytes] | None:
        """(original id, payload) of a sealed id this key made; None for any other value."""
        if not isinstance(sealed, str) or len(sealed) > MAX_SEALED_CHARS:
            return None
        at = sealed.rfind(MARK)
        if at < 0:
            return None
        rest = sealed[at + len(MARK) :]
        if _SEALED_REST.fullmatch(rest) is None:
            return None
        flag, body, tag = rest[0], rest[1:-_TAG_CHARS], rest[-_TAG_CHARS:]
        try:
            data = _unb32(body)
        except ValueError:
            return None
        # One spelling per seal: base32's last character carries bits the decoder drops,
        # so without this check a seal with that character changed would open as well.
        if _b32(data) != body:
            return None
        call_id = sealed[:at]
        # The tag is checked before anything is decompressed: only this key's output is.
        if not hmac.compare_digest(tag, self._tag(call_id, flag, data)):
            return None
        return call_id, zlib.decompress(data) if flag == _ZIPPED else data


def may_be_sealed(value: object) -> bool:
    """A cheap test before :meth:`Sealer.open`: most ids hold no marker."""
    return isinstance(value, str) and len(value) <= MAX_SEALED_CHARS and MARK in value


__all__ = ["ENV_KEY", "MARK", "MAX_SEALED_CHARS", "SealKeyError", "Sealer", "may_be_sealed"]


def sealer_for(key: bytes | str | Sealer | None) -> Sealer | None:
    """The sealer for a ``seal_key`` as a library caller gives it (text is UTF-8)."""
    if key is None or isinstance(key, Sealer):
        return key
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, bytes):
        raise TypeError(f"seal_key must be bytes, str or None, not {type(key).__name__}")
    return Sealer(key)
