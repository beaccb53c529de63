"""httpx's one-shot calls (``get``, ``post``, ...) for talking to test servers on loopback.

``httpx.post()`` and the like build a client per call, and each client loads the CA
bundle into a new TLS context: ~50 ms of CPU per call, several seconds over the suite,
for servers that only speak plain HTTP. These wrappers pass one TLS context, made
once; each call still gets a client of its own, so no connection, cookie or header
carries over from one call to the next.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

_TLS = ssl.create_default_context()


def request(method: str, url: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, url, verify=_TLS, **kwargs)


def get(url: str, **kwargs: Any) -> httpx.Response:
    return request("GET", url, **kwargs)


def head(url: str, **kwargs: Any) -> httpx.Response:
    return request("HEAD", url, **kwargs)


def post(url: str, **kwargs: Any) -> httpx.Response:
    return request("POST", url, **kwargs)


@contextmanager
def stream(method: str, url: str, **kwargs: Any) -> Iterator[httpx.Response]:
    with httpx.stream(method, url, verify=_TLS, **kwargs) as response:
        yield response


def scrape(base: str, until: str, seconds: float = 5.0) -> str:
    """``GET base/metrics`` until the text holds ``until`` (metrics are counted as the access
    line is written, just after the response has gone), or ``seconds`` pass; the last text."""
    deadline = time.monotonic() + seconds
    while True:
        text = get(base + "/metrics").text
        if until in text or time.monotonic() > deadline:
            return text
        time.sleep(0.01)
