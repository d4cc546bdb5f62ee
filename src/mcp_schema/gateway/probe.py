"""What an upstream MCP server serves, asked once at the gateway's start-up
(sans-IO): `Probe` builds its ``server/discover`` request (2026-07-28
``_meta``) and reads the answer, or the error, into `Served`.

The rules are those of the 2026-07-28 pages on
[versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions)
and on the
[Streamable HTTP transport](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#backward-compatibility):

* A discover answer lists ``supportedVersions``: those of the stateless era
  are served per request, and any of the handshake era means ``initialize``
  sessions are served too. Its capabilities, ``serverInfo`` and
  ``instructions`` are what the bridge answers a handshake-era client's
  ``initialize`` with.
* -32022 (``UnsupportedProtocolVersion``) lists what the server serves
  instead.
* A discover answer listing no handshake-era version is followed by an
  ``initialize`` (then the DELETE of the session it opened): a server of
  both eras may list only the versions it serves per request.
* Any other refusal (an HTTP 400, 404 or 405, -32601, -32602: a
  handshake-era server does not know ``server/discover`` and lacks the
  headers and ``_meta`` it reads) is a server of the handshake era only.
* No answer at all (the connection failed) or a 5xx is `ProbeError`: the
  gateway cannot tell, and does not start.

`Served.extensions` is what the discover answer's capabilities declare
(``capabilities.extensions``, by id; None when it did not discover): an
`mcp_schema.gateway.ExchangeValidator` given it (`ExchangeValidator.learn`)
reads the answers of the extensions the upstream serves (the Tasks
extension's among them) without being told.

`Probe` drives a `mcp_schema.session.ClientSession` through a
`mcp_schema.http.binding.ClientBinding` (stateless mode): the same request
and the same reading as every client of the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_schema.errors import McpError, UnsupportedProtocolVersionError
from mcp_schema.http.binding import ClientBinding, Post, Reply, TransportError
from mcp_schema.http_headers import Headers
from mcp_schema.session import ClientSession, Event, Negotiated, ProtocolError, ResponseReceived
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

__all__ = ["GATEWAY_INFO", "Probe", "ProbeError", "Served", "declared_extensions"]

GATEWAY_INFO: Mapping[str, str] = {"name": "mcp-schema-gateway", "version": "1"}
"""The ``clientInfo`` the probe names itself with."""


class ProbeError(Exception):
    """The upstream gave no answer that tells what it serves."""


@dataclass(frozen=True)
class Served:
    """What the upstream serves, as its probe found."""

    stateless: tuple[str, ...]
    """The versions it serves per request (2026-07-28 ``_meta``), oldest first."""
    handshake: bool
    """Whether it serves ``initialize`` sessions (the handshake era)."""
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    """Its ``capabilities`` (2026-07-28 wire form; empty when it did not discover)."""
    server_info: Mapping[str, Any] | None = None
    instructions: str | None = None
    discovered: bool = False
    """Whether a ``server/discover`` answer told all this (else ``capabilities``
    are not known: a refusal, or a server of the handshake era alone)."""

    @property
    def extensions(self) -> frozenset[str] | None:
        """The extensions its discover answer declares (``capabilities.extensions``),
        by id; None when it did not discover."""
        return declared_extensions(self.capabilities) if self.discovered else None

    def serves(self, version: str | None) -> bool:
        """Whether a request of ``version`` (None: of a handshake-era session) is served."""
        return self.handshake if version is None else version in self.stateless


class Probe:
    """The probe of one upstream: send each of `posts`, read each answer with
    `reply` (then `read` its events); `served` is set once it is known, and
    `closing` is then the DELETE ending the session the probe opened, if
    any. A post that got no answer at all is `ProbeError` (the caller's to
    raise, or to retry with a new probe)."""

    def __init__(
        self, *, info: Mapping[str, Any] = GATEWAY_INFO, headers: Mapping[str, str] | None = None
    ) -> None:
        self.info, self.headers = info, dict(headers or {})
        self.session = ClientSession(info=info, versions=STATELESS_VERSIONS)
        self.binding = ClientBinding(self.session, "stateless", self.headers)
        self.binding.connect()
        self.served: Served | None = None
        self.closing: Post | None = None
        self._found: Served | None = None
        """What discover found, while ``initialize`` tells the handshake era."""

    def posts(self) -> list[Post]:
        """What to send now: the discover request, its next try (a version a
        -32022 listed), or the ``initialize`` that tells whether a server
        whose discover lists no handshake-era version serves sessions too
        (a server of both eras may list only what it serves per request)."""
        if self.served is not None:
            return []
        posts = self.binding.posts()
        return [p for p in posts if p.request_id is not None]  # not notifications/initialized

    def reply(self, post: Post, status: int, headers: Headers) -> Reply:
        """The reader of the answer to ``post``: feed it, and `read` what it gives."""
        return self.binding.reply(post, status, headers)

    def read(self, events: list[Event]) -> Served | None:
        """What the events of an answer tell: `Served`, or None (more to read,
        or another try queued in `posts`). `ProbeError` when they tell nothing."""
        for event in events:
            if isinstance(event, Negotiated) and self._found is not None:
                self._settle(replace(self._found, handshake=True))
            elif isinstance(event, Negotiated):
                session = self.session
                listed = session.server_versions or (event.version,)
                found = Served(
                    tuple(v for v in STATELESS_VERSIONS if v in listed),
                    any(v in HANDSHAKE_VERSIONS for v in listed),
                    dict(session.server_capabilities or {}),
                    session.server_info,
                    session.server_instructions,
                    discovered=True,
                )
                if found.handshake:
                    self._settle(found)
                else:
                    self._found = found
                    self.session = ClientSession(info=self.info, versions=HANDSHAKE_VERSIONS)
                    self.binding = ClientBinding(self.session, "handshake", self.headers)
                    self.binding.connect()
            elif isinstance(event, ResponseReceived) and event.error is not None:
                if self._found is not None:  # initialize refused: per request only
                    self._settle(self._found)
                else:
                    self._settle(_refused(event.error))
            elif isinstance(event, ProtocolError):
                raise ProbeError(f"the upstream's answer to the probe: {event.error.message}")
        return self.served

    def _settle(self, served: Served) -> None:
        self.served = served
        self.closing = self.binding.close()


def declared_extensions(capabilities: object) -> frozenset[str]:
    """The extension ids ``capabilities`` (a server's or a client's, wire form)
    declare under ``extensions``; none when that is not an object."""
    if not isinstance(capabilities, Mapping):
        return frozenset()
    declared = capabilities.get("extensions")
    if not isinstance(declared, Mapping):
        return frozenset()
    return frozenset(k for k, v in declared.items() if isinstance(k, str) and v is not None)


def _refused(error: McpError) -> Served:
    """What a refused discover request tells (see the module)."""
    if isinstance(error, TransportError) and (error.status is None or error.status >= 500):
        raise ProbeError(f"the upstream's answer to server/discover: {error.message}")
    if isinstance(error, UnsupportedProtocolVersionError) and isinstance(error.data, dict):
        listed = error.data.get("supported")
        if isinstance(listed, list):
            stateless = tuple(v for v in STATELESS_VERSIONS if v in listed)
            return Served(stateless, any(v in HANDSHAKE_VERSIONS for v in listed))
    return Served((), True)
