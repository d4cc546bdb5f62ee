"""`Precheck`: the rules every HTTP front door applies to a request before
it reads the body, in one place (hand-written runtime module). The
`Endpoint`, the gateway's apps, the bridges and `ClusterApp` (on the replica
a client reached, before it forwards) all ask one `Precheck`, so no door
keeps a rule of its own or misses one.

In order, each a refusal with a JSON-RPC error (but the 404):

1. the path: 404, empty;
2. ``Host`` (DNS-rebinding protection): 421 when it names no host served.
   The hosts served are ``allowed_hosts`` when given; else, on a loopback
   address (the ASGI ``server``), the loopback names alone: a page whose
   name an attacker rebinds to 127.0.0.1 reaches a local server with its
   own name as ``Host``. Else anything;
3. ``Origin``: 403 when present and not allowed (``allowed_origins``, and
   the loopback ones unless ``loopback_origins`` is off). A request without
   ``Origin`` is no browser's and is not checked;
4. a CORS preflight from an allowed origin (``OPTIONS``, when ``cors``) is
   answered here (`mcp_schema.http.cors`);
5. the method: POST, and GET and DELETE where sessions are served (405);
6. for a POST: ``Content-Type`` (415 unless JSON), ``Accept`` (406 when it
   admits neither JSON nor an event stream), ``Content-Length`` (400 when
   malformed, 413 beyond ``max_body``); for GET and DELETE: an
   ``Mcp-Session-Id`` (405 without), and for GET an ``Accept`` admitting an
   event stream (406).

These rules are the HTTP layer's: a gateway's monitor and enforce modes
govern what it does with schema findings, never these.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Collection, Mapping

from mcp_schema._args import check, strings
from mcp_schema.http.cors import cors_headers, preflight
from mcp_schema.http.rules import (
    LOOPBACK_HOSTS,
    _remembered,
    admits,
    allowed_host,
    allowed_origin,
    host_refusal,
    is_json,
    refusal,
)
from mcp_schema.http.stream import Media, Response

__all__ = ["JSON", "MAX_BODY", "SSE", "Precheck", "answer_media", "loopback_server"]

MAX_BODY = 4 << 20
"""Bytes of a POST body read by default; a longer one is refused with 413."""

JSON: Media = "application/json"
SSE: Media = "text/event-stream"


def answer_media(accept: str | None) -> Media | None:
    """What a POST's answer may be, by its ``Accept``: an event stream when
    it admits one (a handler may send notifications first), else JSON; None
    when it admits neither (406)."""
    return SSE if accept is None else _media_of(accept)


@_remembered
def _media_of(accept: str) -> Media | None:
    if admits(accept, SSE):
        return SSE
    return JSON if admits(accept, JSON) else None


@functools.lru_cache(maxsize=16)
def _loopback_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def loopback_server(server: object) -> bool:
    """Whether an ASGI ``server`` (host, port) is a loopback address."""
    return isinstance(server, (tuple, list)) and bool(server) and _loopback_address(str(server[0]))


class Precheck:
    """The rules of a front door serving ``path`` (see the module).

    * ``allowed_hosts``: host names a request's ``Host`` may name (any port;
      lower-case, IPv6 without brackets); None: the loopback names on a
      loopback address, else any.
    * ``allowed_origins``: origins allowed besides the loopback ones
      (``loopback_origins=False`` refuses those too).
    * ``cors``: answer preflights and add CORS headers for the
      ``allowed_origins`` (by default, when there are any).
    * ``max_body``: bytes of a POST body.
    * ``sessions``: whether GET and DELETE (of a handshake-era session) are served.
    """

    __slots__ = (
        "allow",
        "allowed_hosts",
        "allowed_origins",
        "cors",
        "loopback_origins",
        "max_body",
        "path",
        "sessions",
    )

    def __init__(
        self,
        *,
        path: str = "/mcp",
        allowed_hosts: Collection[str] | None = None,
        allowed_origins: Collection[str] = (),
        loopback_origins: bool = True,
        cors: bool | None = None,
        max_body: int = MAX_BODY,
        sessions: bool = True,
    ) -> None:
        check(path, str, "path")
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', not {path!r:.80}")
        check(loopback_origins, bool, "loopback_origins")
        check(cors, bool, "cors", none=True)
        check(max_body, int, "max_body")
        if max_body < 1:
            raise ValueError(f"max_body must be positive, not {max_body}")
        self.path, self.loopback_origins, self.max_body = path, loopback_origins, max_body
        self.allowed_origins = frozenset(strings(allowed_origins, "allowed_origins") or ())
        hosts = strings(allowed_hosts, "allowed_hosts", none=True)
        self.allowed_hosts = None if hosts is None else frozenset(h.lower() for h in hosts)
        self.cors = bool(self.allowed_origins) if cors is None else cors
        self.sessions = bool(sessions)
        self.allow = "POST, GET, DELETE" if self.sessions else "POST"
        """The methods served, as ``Allow`` names them."""

    def check(
        self, method: str, path: str, received: Mapping[str, str], server: object = None
    ) -> Response | None:
        """The refusal of a request (``received``: its headers by lower-case
        name), or None when it passes; ``server`` is the ASGI scope's (None:
        not known, so no loopback default)."""
        return self.with_cors(received, self._check(method, path, received, server))

    def _check(
        self, method: str, path: str, received: Mapping[str, str], server: object
    ) -> Response | None:
        if path != self.path:
            return Response(404)
        hosts = self.allowed_hosts
        if hosts is None and loopback_server(server):
            hosts = LOOPBACK_HOSTS
        if hosts is not None and not allowed_host(received.get("host"), hosts):
            return host_refusal()
        origin = received.get("origin")
        if origin is not None and not allowed_origin(
            origin, self.allowed_origins, self.loopback_origins
        ):
            return refusal(403, "Forbidden: the request's Origin is not allowed")
        if method == "OPTIONS" and self.cors and origin in self.allowed_origins:
            return preflight(received, self.allow)  # `with_cors` adds the origin's headers
        accept = received.get("accept")
        if method == "POST":
            if not is_json(received.get("content-type")):
                return refusal(415, "Unsupported Media Type: the body must be application/json")
            if answer_media(accept) is None:
                return refusal(406, f"Not Acceptable: the answer is {JSON} or {SSE}")
            length = received.get("content-length")
            if length is not None:
                if not (length.isascii() and length.isdigit()):
                    return refusal(400, "Bad Request: Content-Length is not a number")
                digits = length.lstrip("0")  # int() refuses more than 4,300 digits
                if len(digits) > len(str(self.max_body)) or int(digits or "0") > self.max_body:
                    return refusal(413, f"Payload Too Large: at most {self.max_body:,} bytes")
            return None
        if method in ("GET", "DELETE") and self.sessions:
            if received.get("mcp-session-id") is None:
                return self.not_allowed("no session named")
            if method == "GET" and not admits(accept, SSE):
                return refusal(406, f"Not Acceptable: the GET stream is {SSE}")
            return None
        return self.not_allowed("POST, or GET and DELETE in a session")

    def bounded(self, max_body: int) -> Precheck:
        """These rules with ``max_body`` as the body size (a door that must
        read a body whole, behind one that streams it on)."""
        return Precheck(
            path=self.path,
            allowed_hosts=self.allowed_hosts,
            allowed_origins=self.allowed_origins,
            loopback_origins=self.loopback_origins,
            cors=self.cors,
            max_body=max_body,
            sessions=self.sessions,
        )

    def not_allowed(self, why: str) -> Response:
        """405, naming the methods served."""
        return refusal(405, f"Method Not Allowed: {why}", None, [("allow", self.allow)])

    def with_cors(self, received: Mapping[str, str], response: Response | None) -> Response | None:
        """``response`` with the CORS headers of the request's origin, when it
        gets them (in place)."""
        origin = received.get("origin")
        if response is not None and self.cors and origin in self.allowed_origins:
            assert origin is not None
            response.headers += cors_headers(origin)
        return response
