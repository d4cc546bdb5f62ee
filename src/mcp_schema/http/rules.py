"""The HTTP-level rules of the MCP endpoint, checked before any body is read:
the request's ``Host`` and ``Origin`` (DNS-rebinding protection), ``Accept``,
``Content-Type`` and ``Content-Length``. Each is a small pure function of
header text; `refusal` builds the response that says what is wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import TypeVar
from urllib.parse import urlsplit

from mcp_schema._memo import kept
from mcp_schema.codec import encode
from mcp_schema.errors import (
    InvalidRequestError,
    McpError,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
)
from mcp_schema.http.stream import Response
from mcp_schema.http_headers import Received
from mcp_schema.shares import ShareExceededError

__all__ = [
    "LOOPBACK_HOSTS",
    "admits",
    "allowed_host",
    "allowed_origin",
    "answer_status",
    "failure",
    "host_refusal",
    "is_json",
    "mirrored_headers",
    "refusal",
    "status_of",
    "too_many",
]

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
"""Hosts whose origins are allowed by default: a page there runs on this machine."""

_MAX_RANGES = 64  # media ranges of an Accept header looked at: more is not a browser's
_MAX_ORIGIN = 2048


def _ranges(accept: str) -> list[tuple[str, float]]:
    ranges: list[tuple[str, float]] = []
    for part in accept.split(",")[:_MAX_RANGES]:
        media, *params = part.split(";")
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = 0.0
                if not 0.0 <= weight <= 1.0:  # also NaN
                    weight = 0.0
        ranges.append((media.strip().lower(), weight))
    return ranges


def admits(accept: str | None, media: str) -> bool:
    """Whether an ``Accept`` header admits ``media`` (``type/subtype``): its
    most specific matching range has a weight above zero (RFC 9110 12.5.1).
    No header, or an empty one, admits everything."""
    if accept is None or not accept.strip():
        return True
    kind = media.partition("/")[0]
    ranks = {media: 3, f"{kind}/*": 2, "*/*": 1}
    best, weight = 0, 0.0
    for found, q in _ranges(accept):
        rank = ranks.get(found, 0)
        if rank > best:
            best, weight = rank, q
    return weight > 0.0


_CACHED_TEXT = 512
_CACHED_VALUES = 32
_UNKNOWN = object()
R = TypeVar("R")
T = TypeVar("T", str, "str | None")


def _remembered(read: Callable[[T], R]) -> Callable[[T], R]:
    """``read`` of a header's text (or of its absence, None), its answer
    remembered for the last few values: a client sends the same ``Accept``,
    ``Host`` and ``Content-Type`` with every request, read once so. Only
    values of at most 512 characters are kept, so what a peer makes the
    cache hold stays small. A memo (`mcp_schema._memo`), not an LRU cache: a hit is one
    look-up (an LRU cache's call costs a third of the whole read)."""
    memo: dict[T, R] = {}

    def remembering(text: T) -> R:
        found = memo.get(text, _UNKNOWN)
        if found is not _UNKNOWN:
            return found  # type: ignore[return-value]
        return kept(memo, text, read(text), limit=_CACHED_VALUES, longest=_CACHED_TEXT)

    return functools.wraps(read)(remembering)


@_remembered
def is_json(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` is ``application/json`` (a charset, if
    given, must be UTF-8: JSON-RPC messages are UTF-8)."""
    if content_type is None:
        return False
    media, *params = content_type.split(";")
    if media.strip().lower() != "application/json":
        return False
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() != "utf-8":
            return False
    return True


def allowed_origin(origin: str, allowed: Collection[str], loopback: bool) -> bool:
    """Whether a request's ``Origin`` may call the endpoint: one of
    ``allowed`` (exact, as browsers send it: ``https://app.example.com``), or,
    with ``loopback``, an http(s) origin on a `LOOPBACK_HOSTS` host."""
    if len(origin) > _MAX_ORIGIN:
        return False
    if origin in allowed:
        return True
    if not loopback:
        return False
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - a malformed port raises ValueError here
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.hostname in LOOPBACK_HOSTS


def allowed_host(host: str | None, allowed: Collection[str]) -> bool:
    """Whether a request's ``Host`` names one of the ``allowed`` host names
    (lower-case, IPv6 without brackets: ``::1``), whatever its port. A page
    that rebinds its own name to this machine sends that name: refused. No
    ``Host`` at all cannot be checked: refused too."""
    if host is None or len(host) > _MAX_ORIGIN:
        return False
    name = _host_name(host)
    return name is not None and name in allowed


@_remembered
def _host_name(host: str) -> str | None:
    """The host name a ``Host`` names, None unless it is only a host and a port."""
    try:
        parts = urlsplit(f"//{host}")
        parts.port  # noqa: B018 - a malformed port raises ValueError here
    except ValueError:
        return None
    # Only a host and a port: no user, path, query or fragment smuggled in.
    return parts.hostname if "@" not in host and parts.netloc == host else None


def host_refusal() -> Response:
    """The refusal of a ``Host`` the endpoint does not serve: 421 Misdirected
    Request (RFC 9110 15.5.20), as for a name this server is not authoritative for."""
    return refusal(421, "Misdirected Request: the request's Host is not allowed")


def mirrored_headers(headers: Mapping[str, str], *, opening: bool = False) -> dict[str, str]:
    """The headers a POST's body is read with (lower-case names): the MCP ones
    (all named ``Mcp-*``: the codec ignores the others), but for ``initialize``
    (``opening``) ``MCP-Protocol-Version``, which predates the session's version."""
    mirrored = {k: v for k, v in headers.items() if k.startswith("mcp-")}
    if opening:
        mirrored.pop("mcp-protocol-version", None)
    # Names and values as `received_headers` gave them, if ``headers`` are its:
    # the codec's reader takes them back unchecked.
    return Received(mirrored) if type(headers) is Received else mirrored


def status_of(error: McpError) -> int:
    """The HTTP status of a refused message: 404 for an unknown method
    (-32601, so a client tells it from a server without the endpoint), else
    400."""
    return 404 if error.code == MethodNotFoundError.code else 400


_ANSWER_STATUS = {MethodNotFoundError.code: 404, MissingRequiredClientCapabilityError.code: 400}


def answer_status(error: object) -> int:
    """The HTTP status of a stateless-era request answered with the JSON-RPC
    ``error`` alone (None for a result): those the specification gives one
    (-32601 404, -32021 400), 200 for any other."""
    code = error.get("code") if isinstance(error, dict) else None
    return code_status(code) if isinstance(code, int) else 200


def code_status(code: int | None, asked: int | None = None, *, session: bool = False) -> int:
    """The HTTP status of a request answered alone, in one JSON body, by its
    error's ``code`` (None: a result). The status its error ``asked`` for
    (`mcp_schema.errors.McpError.http_status`), in either era: 503 when a
    shared piece the server needs failed (an `mcp_schema.errors.UnavailableError`,
    a broker or a task store that failed or did not answer in time: the
    request was not served and may be sent again, as for a refusal of
    `mcp_schema.http.forward`), 502 when the server a gateway carries the
    request to failed it (`mcp_schema.errors.BadGatewayError`). Else 200 in
    a handshake-era ``session``, whose errors are members of the body, and
    `answer_status` outside one."""
    if asked is not None:
        return asked
    return 200 if code is None or session else _ANSWER_STATUS.get(code, 200)


def refusal(
    status: int,
    error: McpError | str,
    request_id: str | int | None = None,
    headers: list[tuple[str, str]] | None = None,
) -> Response:
    """A refusal: ``status`` and a JSON-RPC error response naming ``request_id``
    (null when the request's id is unknown). A ``str`` is an invalid-request error's message."""
    err = InvalidRequestError(error) if isinstance(error, str) else error
    body = encode(err.to_response(request_id))
    return Response(status, [("content-type", "application/json"), *(headers or [])], body)


def failure(
    error: McpError,
    request_id: str | int | None = None,
    headers: list[tuple[str, str]] | None = None,
) -> Response:
    """The refusal of a request a shared piece failed (``error``: an error
    whose type names its status, `mcp_schema.errors.McpError.http_status`,
    as an `UnavailableError`'s 503), naming ``request_id``."""
    return refusal(error.http_status or 500, error, request_id, headers)


def too_many(error: ShareExceededError, request_id: str | int | None = None) -> Response:
    """The refusal of a request past its caller's share of a table
    (`mcp_schema.shares`): 429, ``Retry-After``, and the JSON-RPC error
    naming ``request_id``."""
    return refusal(429, error, request_id, [("retry-after", str(error.retry_after))])
