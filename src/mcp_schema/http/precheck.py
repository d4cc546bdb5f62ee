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

Then `Precheck.admit`, the door every front door awaits instead (it adds
what needs the connection or waiting):

0. first of all, with ``auth``, a request for the protected resource
   metadata (RFC 9728, at both well-known paths, with CORS) is answered,
   and needs no token;
7. with ``auth`` (a `mcp_schema.auth.ResourceServer`), the bearer token is
   checked: 401 with a challenge without one or with one refused, 403
   when it lacks the scopes every request needs (the preflight of step 4
   needs none). Nothing reaches a handler or an upstream before;
8. the request's `Caller`, built once: its principal the verified token's
   (`Principal.name`), else what the ``principal`` hook names from the
   headers; its address the connection's, or, from a ``trusted_proxies``
   peer, the one its forwarding headers name (`TrustedProxies`).

These rules are the HTTP layer's: a gateway's monitor and enforce modes
govern what it does with schema findings, never these.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from mcp_schema._args import check, strings
from mcp_schema.http.caller import Caller
from mcp_schema.http.cors import cors_headers, preflight
from mcp_schema.http.gate import VERIFIED
from mcp_schema.http.proxies import TrustedProxies
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

if TYPE_CHECKING:
    from mcp_schema.auth.server import ResourceServer

__all__ = [
    "JSON",
    "MAX_BODY",
    "SSE",
    "Precheck",
    "PrincipalHook",
    "answer_media",
    "loopback_server",
]

PrincipalHook = Callable[[Mapping[str, str]], "str | None"]
"""Who a request comes from, by its headers (lower-case names), where no
token is checked here (a proxy in front authenticated it): None for nobody."""

MAX_BODY = 4 << 20
"""Bytes of a POST body read by default; a longer one is refused with 413."""

JSON: Media = "application/json"
SSE: Media = "text/event-stream"


@_remembered
def answer_media(accept: str | None) -> Media | None:
    """What a POST's answer may be, by its ``Accept``: an event stream when
    it admits one (a handler may send notifications first), else JSON; None
    when it admits neither (406)."""
    if accept is None or admits(accept, SSE):
        return SSE
    return JSON if admits(accept, JSON) else None


@_remembered
def _loopback_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@functools.lru_cache(maxsize=256)
def _anonymous(address: str | None) -> Caller:
    """The `Caller` of no principal at ``address``: a frozen value, built once
    per address, not once per request."""
    return Caller(None, address)


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
    * ``auth``: the `mcp_schema.auth.ResourceServer` that checks each
      request's token (`admit`); None: no token asked.
    * ``principal``: the `PrincipalHook`, where there is no ``auth``.
    * ``trusted_proxies``: the peers whose ``Forwarded`` and
      ``X-Forwarded-For`` name the client's address (`TrustedProxies`).
    """

    __slots__ = (
        "allow",
        "allowed_hosts",
        "allowed_origins",
        "auth",
        "cors",
        "loopback_origins",
        "max_body",
        "path",
        "principal",
        "proxies",
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
        auth: ResourceServer | None = None,
        principal: PrincipalHook | None = None,
        trusted_proxies: Collection[str] | TrustedProxies = (),
    ) -> None:
        check(path, str, "path")
        if auth is not None and not callable(getattr(auth, "authenticate", None)):
            raise TypeError(f"auth must be a ResourceServer, not {type(auth).__name__}")
        if principal is not None and not callable(principal):
            raise TypeError("principal must be callable or None")
        if auth is not None and principal is not None:
            raise ValueError(
                "give auth or a principal hook, not both: the token names the principal"
            )
        self.auth, self.principal = auth, principal
        self.proxies = (
            trusted_proxies
            if isinstance(trusted_proxies, TrustedProxies)
            else TrustedProxies(trusted_proxies)
        )
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
        refused = self.caller(received, server)
        if refused is not None:
            return refused
        if method == "OPTIONS" and self.cors and received.get("origin") in self.allowed_origins:
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

    async def admit(
        self, method: str, path: str, received: Mapping[str, str], scope: Mapping[str, Any]
    ) -> Caller | Response:
        """The request's `Caller` when it passes every rule (`check`, then the
        token with ``auth``), else the refusal to send: see the module.
        ``scope``: the request's ASGI scope (its ``server`` and ``client``)."""
        auth = self.auth
        if auth is None:
            return self._admit_now(method, path, received, scope)
        metadata = auth.metadata_response(method, path, received)
        if metadata is not None:
            return metadata
        refused = self.check(method, path, received, scope.get("server"))
        if refused is not None:
            return refused
        address = self.proxies.address(scope.get("client"), received)
        # Its refusal names no request (id null), by design. The id is in the
        # body alone (2026-07-28's headers name the method and the item, never
        # the id), and the token is checked before anything is processed
        # (basic/authorization: "before processing the request"), so the body
        # of an unauthenticated client is never read: a read of up to
        # max_body bytes for anyone, and the parse of it, to name an id no
        # client needs (it acts on the status and WWW-Authenticate). JSON-RPC
        # 2.0 answers null where the id could not be read, and the transport
        # page lets an HTTP refusal carry "a JSON-RPC error response that has
        # no id" (as for Origin, 403).
        verified = await auth.authenticate(received)
        if isinstance(verified, Response):
            self.with_cors(received, verified)  # in place
            return verified
        return Caller(verified.name, address, verified)

    def _admit_now(
        self, method: str, path: str, received: Mapping[str, str], scope: Mapping[str, Any]
    ) -> Caller | Response:
        """`admit` of a door without ``auth``: no token to wait for, so a door
        that knows it has none calls this, and no coroutine is made for it."""
        refused = self._check(method, path, received, scope.get("server"))
        if refused is not None:
            self.with_cors(received, refused)  # in place: `check`'s, for a refusal alone
            return refused
        return self.caller_of(received, scope.get("client"))

    def caller_of(self, received: Mapping[str, str], client: object = None) -> Caller:
        """The `Caller` of a request whose token is not checked here (no
        ``auth``), with the address of ``client`` (an ASGI scope's): the
        principal a front door outside verified (a framework's middleware
        setting `mcp_schema.http.gate.VERIFIED`), else the ``principal`` hook's."""
        address = self.proxies.address(client, received)
        verified = VERIFIED.get()
        if verified is not None:
            return Caller(verified.name, address, verified)
        hook = self.principal
        return _anonymous(address) if hook is None else Caller(hook(received), address)

    def caller(self, received: Mapping[str, str], server: object) -> Response | None:
        """Steps 2 and 3 alone, ``Host`` (421) and ``Origin`` (403): the
        refusal of a request to any route of the door (a health check beside
        the endpoint), or None."""
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
        return None

    def bounded(self, max_body: int) -> Precheck:
        """These rules with ``max_body`` as the body size (a door that must
        read a body whole, behind one that streams it on)."""
        return Precheck(**{**self.endpoint_options(), "max_body": max_body}, sessions=self.sessions)

    def endpoint_options(self) -> dict[str, Any]:
        """These rules as `mcp_schema.http.Endpoint`'s arguments (it rebuilds
        them, ``sessions`` by the eras it serves): what a front door behind
        this one's gives its endpoint, so that a request it lets through is
        not refused there by other rules."""
        return {
            "path": self.path,
            "allowed_hosts": self.allowed_hosts,
            "allowed_origins": self.allowed_origins,
            "loopback_origins": self.loopback_origins,
            "cors": self.cors,
            "max_body": self.max_body,
            "auth": self.auth,
            "principal": self.principal,
            "trusted_proxies": self.proxies,
        }

    def not_allowed(self, why: str) -> Response:
        """405, naming the methods served."""
        return refusal(405, f"Method Not Allowed: {why}", None, [("allow", self.allow)])

    def with_cors(self, received: Mapping[str, str], response: Response | None) -> Response | None:
        """``response`` with the CORS headers of the request's origin, when it
        gets them (in place)."""
        if response is None or not self.cors:  # most doors: no CORS, no header read
            return response
        origin = received.get("origin")
        if origin is not None and origin in self.allowed_origins:
            response.headers += cors_headers(origin)
        return response
