"""What `mcp_schema.gateway.monitor.asgi.GatewayApp` carries besides the messages:
the header fields of a request and of its answer, end to end (RFC 9110
7.6.1: `mcp_schema.http.adapter.end_to_end`), with the ``Host`` and the
CORS fields it decides; and a request body read here only in part, passed
on as it comes."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Collection

from mcp_schema._args import check
from mcp_schema.http.adapter import Receive, end_to_end
from mcp_schema.http.cors import cors_headers
from mcp_schema.http.stream import Response

__all__ = ["Upward", "answered", "rest", "with_cors"]

Fields = list[tuple[bytes, bytes]]

_DROPPED = frozenset([b"content-length", b"accept-encoding", b"expect"])
"""Besides the hop-by-hop fields, what is not forwarded as it came (the client writes the
length; the encoding asked for is ``identity``; an ``Expect`` was the gateway's to meet)."""
_SERVERS_OWN = frozenset([b"date", b"server"])
"""Of an answer, what the server the gateway runs in writes itself (uvicorn
always does both): the upstream's are not forwarded, or the client would get
two of each (RFC 9110 6.6.1: one ``Date``), as nginx hides them."""
_CORS = frozenset([b"access-control-allow-origin", b"access-control-expose-headers"])
_LENGTH = (b"content-length",)  # what the app drops of an answer whose length it writes
_HIDDEN_WITH_LENGTH = _SERVERS_OWN | set(_LENGTH)  # both made once, not per answer
_HOST = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=%:\[\]-]{1,1000}")  # RFC 3986 host [":" port]


class Upward:
    """The fields a request goes upstream with: its own end to end, the
    client's ``Host`` included (as nginx's ``$http_host``: the upstream's own
    ``Host`` check sees the name the client used), but ``host`` instead of it
    when given (``host`` or ``host:port``); ``Accept-Encoding: identity``;
    never the fields ``dropped`` (the client's credentials)."""

    __slots__ = ("_added", "_dropped")

    def __init__(self, host: str | None = None, dropped: Collection[bytes] = ()) -> None:
        check(host, str, "upstream_host", none=True)
        if host is not None and not _HOST.fullmatch(host):
            raise ValueError(f"upstream_host must be a host[:port], not {host!r:.80}")
        self._dropped = _DROPPED.union(dropped) if host is None else _DROPPED | {b"host", *dropped}
        self._added = [(b"accept-encoding", b"identity")]
        if host is not None:
            self._added.append((b"host", host.encode("ascii")))

    def fields(self, headers: Fields) -> Fields:
        """The fields of a request of ``headers`` (lower-case names, as ASGI gives them)."""
        forwarded = end_to_end(headers, self._dropped)
        forwarded += self._added
        return forwarded


def answered(headers: Fields, dropped: Collection[bytes], origin: str | None) -> Fields:
    """The upstream's answer fields as the client gets them: end to end, but
    ``dropped`` and the server's own (``Date``, ``Server``); to an allowed
    ``origin``, with the gateway's CORS fields instead of the upstream's."""
    if not dropped:
        hidden = _SERVERS_OWN
    else:
        hidden = _HIDDEN_WITH_LENGTH if dropped == _LENGTH else _SERVERS_OWN.union(dropped)
    if origin is None:
        return end_to_end(headers, hidden)
    kept = end_to_end(headers, _CORS | hidden)
    return kept + [(k.encode("latin-1"), v.encode("latin-1")) for k, v in cors_headers(origin)]


def with_cors(response: Response, origin: str | None) -> Response:
    """A refusal of the gateway's own, with the CORS fields of an allowed ``origin``."""
    if origin is not None:
        response.headers += cors_headers(origin)
    return response


async def rest(head: bytes, receive: Receive) -> AsyncIterator[bytes]:
    """A body too long to be read: its first bytes, then the rest as it comes."""
    yield head
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return
