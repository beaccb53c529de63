"""Anthropic-shaped errors, so every client SDK surfaces proxy faults the way it
surfaces the API's own (``{"type":"error","error":{"type":..., "message":...}}``)."""

from __future__ import annotations

from bridge_rules import jsonio

# HTTP status -> the error ``type`` the Anthropic API uses for it.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "invalid_request_error",
    413: "request_too_large",
    417: "invalid_request_error",
    429: "rate_limit_error",
    431: "invalid_request_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "api_error",
    529: "overloaded_error",
}


class ProxyError(Exception):
    """A fault the client is told about with an Anthropic-shaped error body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        close: bool = False,
        headers: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close  # the request was not read whole: end the connection after this
        self.headers = headers  # besides content-type: a 429's retry-after

    @property
    def error_type(self) -> str:
        return ERROR_TYPES.get(self.status, "api_error")


class UpstreamAborted(Exception):
    """The upstream failed after the response had started and the body cannot carry an
    error; the connection to the client is closed so it sees a truncated response."""


def error_body(status: int, message: str) -> bytes:
    return jsonio.dumps(
        {
            "type": "error",
            "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
        }
    )


def sse_error_event(message: str, error_type: str = "api_error") -> bytes:
    """The SSE ``error`` event the API itself sends when a stream fails mid-way."""
    data = jsonio.dumps({"type": "error", "error": {"type": error_type, "message": message}})
    return b"event: error\ndata: " + data + b"\n\n"
