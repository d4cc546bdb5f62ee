"""What an upstream MCP server serves, asked once at the gateway's start-up,
over HTTP or stdio alike: `Probe` (sans-IO) builds its ``server/discover``
request (2026-07-28 ``_meta``), then, where the answer leaves the handshake
era open, its ``initialize``, and reads the answers into `Served`, the one
result every part of the gateway learns from (the exchange validator, the
era bridges, the stdio front). `probe_upstream` drives it over httpx,
`probe_command` over a child process.

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
  headers and ``_meta`` it reads) is a server of the handshake era only;
  its ``initialize`` answer gives the version both speak (`Served.version`),
  its capabilities and ``serverInfo``: what the bridge for 2026-07-28
  clients speaks to it with.
* No answer at all (the connection failed) or a 5xx is `ProbeError`: the
  gateway cannot tell, and does not start.

`Served.extensions` is what the discover answer's capabilities declare
(``capabilities.extensions``, by id; None when it did not discover): an
`mcp_schema.gateway.ExchangeValidator` given it (`ExchangeValidator.learn`)
reads the answers of the extensions the upstream serves (the Tasks
extension's among them) without being told.

`Probe` drives a `mcp_schema.session.ClientSession`, over HTTP through a
`mcp_schema.http.binding.ClientBinding`: the same requests and the same
reading as every client of the package. Over stdio a server that answers
``server/discover`` is served as it is (its child handed on running), so
no ``initialize`` follows there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from mcp_schema.errors import McpError, UnsupportedProtocolVersionError, clip
from mcp_schema.gateway.child import Child
from mcp_schema.http.binding import ClientBinding, Post, Reply, TransportError
from mcp_schema.http_headers import Headers
from mcp_schema.proxy.lines import Line, OverlongLine
from mcp_schema.session import ClientSession, Event, Negotiated, ProtocolError, ResponseReceived
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ANSWER_SECONDS",
    "GATEWAY_INFO",
    "Probe",
    "ProbeError",
    "Served",
    "declared_extensions",
    "exchanged",
    "probe_command",
    "probe_upstream",
]

GATEWAY_INFO: Mapping[str, str] = {"name": "mcp-schema-gateway", "version": "1"}
"""The ``clientInfo`` the probe names itself with."""

ANSWER_SECONDS = 10.0
"""How long the server gets to answer the probe (and each upstream ``initialize``)."""


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
    """Its ``capabilities``: its discover answer's (2026-07-28 wire form), else
    its ``initialize`` answer's (handshake-era form); empty when neither told."""
    server_info: Mapping[str, Any] | None = None
    instructions: str | None = None
    discovered: bool = False
    """Whether a ``server/discover`` answer told all this (else an ``initialize``
    answer did, when `version` is set, or nothing did: a refusal)."""
    version: str | None = None
    """The newest handshake-era version both sides speak, when the probe initialized."""

    @property
    def extensions(self) -> frozenset[str] | None:
        """The extensions its discover answer declares (``capabilities.extensions``),
        by id; None when it did not discover."""
        return declared_extensions(self.capabilities) if self.discovered else None

    def serves(self, version: str | None) -> bool:
        """Whether a request of ``version`` (None: of a handshake-era session) is served."""
        return self.handshake if version is None else version in self.stateless


class Probe:
    """The probe of one upstream. Over HTTP: send each of `posts`, read each
    answer with `reply` (then `read` its events); `closing` is then the
    DELETE ending the session the probe opened, if any. Over stdio
    (``transport="stdio"``): write each of `frames`, hand each line read to
    `receive`. `served` is set once it is known. A post that got no answer
    at all is `ProbeError` (the caller's to raise, or to retry with a new probe)."""

    def __init__(
        self,
        *,
        info: Mapping[str, Any] = GATEWAY_INFO,
        headers: Mapping[str, str] | None = None,
        transport: Literal["http", "stdio"] = "http",
    ) -> None:
        self.info, self.headers, self.transport = info, dict(headers or {}), transport
        self.served: Served | None = None
        self.closing: Post | None = None
        self._found: Served | None = None
        """What the discover answer (or its refusal) told, while ``initialize`` tells the rest."""
        self.session, self.binding = self._begin(STATELESS_VERSIONS)

    def _begin(self, versions: tuple[str, ...]) -> tuple[ClientSession, ClientBinding | None]:
        """A session negotiating in ``versions``' era (discover, or initialize), its request queued."""
        session = ClientSession(info=self.info, versions=versions)
        stateless = versions is STATELESS_VERSIONS
        if self.transport == "stdio":
            if stateless:
                session.discover()
            else:
                session.initialize()
            return session, None
        binding = ClientBinding(session, "stateless" if stateless else "handshake", self.headers)
        binding.connect()
        return session, binding

    def posts(self) -> list[Post]:
        """What to send now (over HTTP): the discover request, its next try (a
        version a -32022 listed), or the ``initialize`` that tells the rest."""
        if self.served is not None or self.binding is None:
            return []
        posts = self.binding.posts()
        return [p for p in posts if p.request_id is not None]  # not notifications/initialized

    def frames(self) -> list[bytes]:
        """What to write now (over stdio)."""
        return [] if self.served is not None else self.session.data_to_send()

    def reply(self, post: Post, status: int, headers: Headers) -> Reply:
        """The reader of the answer to ``post``: feed it, and `read` what it gives."""
        assert self.binding is not None, "a stdio probe reads lines"
        return self.binding.reply(post, status, headers)

    def receive(self, line: bytes) -> Served | None:
        """A line the server wrote (over stdio): `read` its events."""
        return self.read(self.session.receive(line))

    def read(self, events: list[Event]) -> Served | None:
        """What the events of an answer tell: `Served`, or None (more to read,
        or another try queued). `ProbeError` when they tell nothing."""
        for event in events:
            if self.served is not None:
                break
            if isinstance(event, Negotiated) and event.version in HANDSHAKE_VERSIONS:
                self._initialized(event.version)
            elif isinstance(event, Negotiated):
                self._discovered(event.version)
            elif isinstance(event, ResponseReceived) and event.error is not None:
                if self._found is not None:  # initialize refused: what discover told
                    self._settle(self._found)
                else:
                    self._refused(event.error)
            elif isinstance(event, ProtocolError):
                raise ProbeError(f"the upstream's answer to the probe: {event.error.message}")
        return self.served

    def _discovered(self, version: str) -> None:
        session = self.session
        listed = session.server_versions or (version,)
        found = Served(
            tuple(v for v in STATELESS_VERSIONS if v in listed),
            any(v in HANDSHAKE_VERSIONS for v in listed),
            dict(session.server_capabilities or {}),
            session.server_info,
            session.server_instructions,
            discovered=True,
        )
        if found.handshake or self.transport == "stdio":
            self._settle(found)
        else:  # a server of both eras may list only what it serves per request
            self._found = found
            self.session, self.binding = self._begin(HANDSHAKE_VERSIONS)

    def _initialized(self, version: str) -> None:
        session, found = self.session, self._found
        if found is not None and found.discovered:
            return self._settle(replace(found, handshake=True, version=version))
        told = Served(
            () if found is None else found.stateless,
            True,
            dict(session.server_capabilities or {}),
            session.server_info,
            session.server_instructions,
            version=version,
        )
        self._settle(told)

    def _refused(self, error: McpError) -> None:
        """What a refused discover request tells (see the module): the handshake
        era, asked next, or what a -32022 listed."""
        if isinstance(error, TransportError) and (error.status is None or error.status >= 500):
            raise ProbeError(f"the upstream's answer to server/discover: {error.message}")
        self._found = Served((), True)
        if isinstance(error, UnsupportedProtocolVersionError) and isinstance(error.data, dict):
            listed = error.data.get("supported")
            if isinstance(listed, list):
                stateless = tuple(v for v in STATELESS_VERSIONS if v in listed)
                self._found = Served(stateless, any(v in HANDSHAKE_VERSIONS for v in listed))
        if not self._found.handshake:
            return self._settle(self._found)
        self.session, self.binding = self._begin(HANDSHAKE_VERSIONS)

    def _settle(self, served: Served) -> None:
        self.served = served
        if self.binding is not None:
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


# -- over HTTP ------------------------------------------------------------------------------


async def probe_upstream(
    url: str,
    http: httpx.AsyncClient,
    *,
    timeout: float = ANSWER_SECONDS,
    headers: Mapping[str, str] | None = None,
) -> Served:
    """What the upstream at ``url`` serves (`Probe`, over ``http``, with
    ``headers`` besides its own, each answer read as it comes and no further
    than the binding's bound); `ProbeError` when it gives no answer that tells."""
    import httpx  # the http extra, which the caller's client is of

    probe = Probe(headers=headers)
    while posts := probe.posts():
        for post in posts:
            try:
                reply = _replier(probe, post)
                await exchanged(http, url, post, reply, probe.read, httpx.Timeout(timeout))
            except httpx.HTTPError as exc:
                raise ProbeError(
                    f"the upstream cannot be reached: {clip(str(exc)) or type(exc).__name__}"
                ) from None
    if probe.served is None:
        raise ProbeError("the upstream's answers to the probe told nothing")
    if probe.closing is not None:
        try:
            closing = probe.closing
            await http.request(closing.method, url, headers=list(closing.headers), timeout=timeout)
        except httpx.HTTPError:
            pass  # the probe's session ends with the server's own expiry instead
    return probe.served


def _replier(probe: Probe, post: Post) -> Callable[[int, list[tuple[str, str]]], Reply]:
    return lambda status, headers: probe.reply(post, status, headers)


async def exchanged(
    http: httpx.AsyncClient,
    url: str,
    post: Post,
    reply_to: Callable[[int, list[tuple[str, str]]], Reply],
    read: Callable[[list[Event]], object],
    timeout: httpx.Timeout,
) -> None:
    """``post`` sent to ``url``, its answer read as it comes by the `Reply`
    ``reply_to`` makes of its status and headers, each chunk's events to
    ``read``, until the answer came or the body ended (httpx's errors raised)."""
    async with http.stream(
        post.method, url, headers=list(post.headers), content=post.body, timeout=timeout
    ) as response:
        reply = reply_to(response.status_code, response.headers.multi_items())
        async for chunk in response.aiter_bytes():
            read(reply.feed(chunk))
            if reply.done:
                break
        read(reply.end())


# -- over stdio -----------------------------------------------------------------------------


async def probe_command(command: list[str], max_line_bytes: int) -> tuple[Served, Child | None]:
    """Start ``command`` and probe it (`Probe` over its standard input and
    output): what it serves, and, for a server that answered
    ``server/discover``, its child still running (handed on: the probe
    changed nothing there; any other child is ended). `ProbeError` when it
    answers neither in `ANSWER_SECONDS`; `mcp_schema.gateway.child.ChildError`
    when it cannot be started."""
    probe = Probe(transport="stdio")
    lines: asyncio.Queue[Line | None] = asyncio.Queue()
    child: Child | None = Child(
        command, lines.put_nowait, lambda: lines.put_nowait(None), max_line_bytes=max_line_bytes
    )
    assert child is not None
    await child.start()
    try:
        answered = _answered(probe, child, lines, max_line_bytes)
        served = await asyncio.wait_for(answered, ANSWER_SECONDS)
        if served.discovered:  # its child is handed on, running
            return served, child
        return served, None
    except asyncio.TimeoutError:
        raise ProbeError(f"the server did not answer the probe in {ANSWER_SECONDS:g} s") from None
    finally:
        if probe.served is None or not probe.served.discovered:
            await child.close()


async def _answered(
    probe: Probe, child: Child, lines: asyncio.Queue[Line | None], max_line_bytes: int
) -> Served:
    while True:
        for frame in probe.frames():
            child.send(frame)
        line = await lines.get()
        if line is None:
            raise ProbeError("the server exited before it answered the probe")
        if isinstance(line, OverlongLine):
            raise ProbeError(
                f"the server answered the probe with a line of {line.size:,} bytes, "
                f"longer than the limit of {max_line_bytes:,}"
            )
        served = probe.receive(line)
        if served is not None:
            if served.version is None and not served.discovered:
                raise ProbeError("the server answered neither server/discover nor initialize")
            return served
