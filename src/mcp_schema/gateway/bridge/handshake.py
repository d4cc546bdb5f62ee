"""The era bridge's first direction, sans-IO: a handshake-era client's
session carried to a server that serves 2026-07-28 only (`StatelessCalls`).

The client's side is a `mcp_schema.session.ServerSession` of the handshake
era whose handler version is 2026-07-28: it answers ``initialize`` (with
what the upstream's ``server/discover`` said, `mcp_schema.gateway.probe`),
``ping`` and ``logging/setLevel`` itself, and hands every other request over
already projected into 2026-07-28, with the client's own facts (its
capabilities, info and log level) in ``_meta``. The upstream's side is a
`mcp_schema.session.ClientSession` of that client alone, driven through a
`mcp_schema.http.binding.ClientBinding` (stateless mode): each request goes
upstream self-contained, with its ``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name`` and the ``Mcp-Param-*`` headers its tool asks for (as the
upstream listed it to this client; a client calling a tool before it listed
any has the bridge list them first). Nothing is shared between clients.

`StatelessCalls` is the glue between the two, one per client session:

* `call`: a client's request, sent upstream (queued until the upstream
  session's ``server/discover`` answered).
* `answer`: the events of an upstream answer. Its result (or error) answers
  the client's request, projected back into the client's version by the
  session; progress and log notifications go to the client's request
  (`ServerSession.progress`, `ServerSession.log`: only what it asked for);
  an input-required result becomes server-to-client requests
  (`ServerSession.ask`: elicitation, sampling, roots) on the request's stream.
* `input`: the client's answers to those (`InputReceived`), sent back as
  the call's retry (``inputResponses`` and the ``requestState`` as the
  upstream gave it: `ClientSession.provide_input`); rounds go on until a
  final result.
* `cancel`: the client cancelled (or closed the request's stream): the
  upstream exchanges to cut (in 2026-07-28, closing a request's stream
  cancels it).
* `start`: the upstream session's ``server/discover``, once. (The list
  changes the server offers are heard by one listen for every session:
  `mcp_schema.gateway.bridge.shared_listen`.)
* `notified`: a client's notification with nothing to carry it to, reported.

Each returns the `Post` objects to send upstream; what to send the client
is in the server session's ``data_to_send``. What cannot be carried (an ask
the client's version has no form for, a result its version cannot hold, a
client's error answer to an ask: 2026-07-28 retries carry results only) is
refused to the client with a JSON-RPC error and kept in `findings` (one
`mcp_schema.proxy.Report` each) for the gateway's report.
Bounded: the calls in flight are the server session's (``max_pending``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_schema.base import McpModel
from mcp_schema.codec import to_wire
from mcp_schema.errors import (
    BadGatewayError,
    InternalError,
    InvalidParamsError,
    McpError,
    clip,
)
from mcp_schema.gateway.findings import UNREACHED, told_client
from mcp_schema.http.binding import ClientBinding, Post
from mcp_schema.http.sessions import StreamKey, stream_key
from mcp_schema.proxy.reports import Report, make_report
from mcp_schema.session import (
    CancelRequested,
    ClientSession,
    Event,
    InputReceived,
    InputRequested,
    Negotiated,
    NotificationReceived,
    ProtocolError,
    RequestReceived,
    ResponseReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.versions import STATELESS_VERSIONS

__all__ = ["BRIDGED_VERSION", "StatelessCalls"]

BRIDGED_VERSION = STATELESS_VERSIONS[-1]
"""The version the bridge speaks upstream (and reads requests in)."""

_MAX_FINDINGS = 64
"""Findings kept until the gateway takes them: beyond, the oldest go."""


@dataclass
class _Call:
    """A client's request being answered upstream: its first upstream id,
    and the input round the client is asked, if any."""

    request: RequestReceived
    first: int
    asking: InputRequested | None = None


class StatelessCalls:
    """One handshake-era client session (``server``, and the `Negotiated`
    event its ``initialize`` made) carried to a 2026-07-28 upstream (see the
    module). ``headers``: sent with every upstream request besides the
    binding's own."""

    def __init__(
        self,
        server: ServerSession,
        negotiated: Negotiated,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(server, ServerSession) or server.version is None:
            raise ValueError("server must be a negotiated handshake-era ServerSession")
        if not isinstance(negotiated, Negotiated):
            raise TypeError(
                f"negotiated must be a Negotiated event, not {type(negotiated).__name__}"
            )
        info: Any = {"name": "unknown", "version": "0"}  # a client that named none
        if negotiated.peer_info is not None:
            info = to_wire(negotiated.peer_info)
        capabilities: Any = {}
        if negotiated.peer_capabilities is not None:
            capabilities = to_wire(negotiated.peer_capabilities)
        self.server = server
        self.client = ClientSession(
            info=info, capabilities=capabilities, versions=(BRIDGED_VERSION,)
        )
        self.binding = ClientBinding(self.client, "stateless", dict(headers or {}))
        self.findings: list[Report] = []
        self._calls: dict[int, _Call] = {}
        """By the call's first upstream id."""
        self._posted: dict[int, _Call] = {}
        """By the id of each upstream request sent for it (its retries too)."""
        self._requests: dict[StreamKey, _Call] = {}
        self._waiting: list[RequestReceived] = []
        self._negotiated = False
        self._discovering = False
        self._listing: int | None = None
        """The id of the bridge's own ``tools/list``, sent before a call of a
        tool this client never listed (its ``Mcp-Param-*`` headers come from it)."""
        self._listed = False
        self._unlisted: list[RequestReceived] = []
        """The calls waiting for that list."""

    def start(self) -> list[Post]:
        """The upstream session's ``server/discover`` (its answer fixes the
        version and tells what the server offers this client); again after
        a failed one, at the next call."""
        if self._negotiated or self._discovering:
            return []
        self._discovering = True
        self.binding.connect()
        return [p for p in self.binding.posts() if p.request_id is not None]

    # -- the client's side ---------------------------------------------------------------

    def call(self, request: RequestReceived) -> list[Post]:
        """The client's ``request`` (a model of `BRIDGED_VERSION`), sent upstream."""
        if not self._negotiated:
            self._waiting.append(request)  # bounded: each is in flight in the server session
            return self.start()
        params = to_wire(request.message).get("params")
        if request.method == "tools/list":
            self._listed = True
        elif request.method == "tools/call" and not self._listed:
            self._unlisted.append(request)  # bounded: each is in flight in the server session
            if self._listing is not None:
                return []
            self._listing = self.binding.request("tools/list", {})
            return [p for p in self.binding.posts() if p.request_id is not None]
        try:
            # The session's projection to this version validated it: sent unread.
            first = self.binding.request(request.method, params, request.message)
        except SessionError as exc:  # an argument its tool mirrors cannot be a header
            self._refuse(request, InvalidParamsError(clip(str(exc))))
            return []
        call = _Call(request, first)
        self._calls[first] = call
        self._requests[stream_key(request.id)] = call
        return self._posts(call)

    def input(self, event: InputReceived) -> list[Post]:
        """The client answered what the upstream asked: the call's retry."""
        call = self._requests.get(stream_key(event.request.id))
        if call is None or call.asking is None:
            return []
        asking, call.asking = call.asking, None
        answers: dict[str, McpModel] = {}
        for key, answer in event.responses.items():
            if isinstance(answer, McpError):  # a 2026-07-28 retry carries results only
                self._refuse(call.request, answer, "the client refused what the server asked")
                return []
            answers[key] = answer
        try:
            self.client.provide_input(asking, answers)
        except (SessionError, ValueError) as exc:
            self._refuse(call.request, InvalidParamsError(clip(str(exc))))
            return []
        return self._posts(call)

    def cancel(self, event: CancelRequested) -> list[int]:
        """The client cancelled ``event.request``: the ids of the upstream
        requests whose exchanges to cut."""
        call = self._requests.get(stream_key(event.request.id))
        if call is None:  # not sent yet: it never will be
            self._waiting = [r for r in self._waiting if r is not event.request]
            self._unlisted = [r for r in self._unlisted if r is not event.request]
            return []
        cut = [rid for rid, found in self._posted.items() if found is call]
        self._forget(call)
        for rid in cut:
            self.client.cancel(rid)  # no longer awaited (no frame: the stream's end says it)
        self.binding.posts()  # drops the notifications/cancelled 2026-07-28 has no POST for
        return cut

    def notified(self, event: NotificationReceived) -> None:
        """A client's notification (but cancellation, which `cancel` reads):
        2026-07-28 has none to carry it to (``roots/list_changed``: roots are
        asked per request there, so the next ask gets them fresh); reported."""
        self._keep(
            make_report(
                "client",
                0,
                -32601,
                f"not carried: 2026-07-28 has no {event.method} from clients",
                None,
                None,
                event.method.encode(),
            )
        )

    def call_of(self, post: Post) -> RequestReceived | None:
        """The client's request an upstream ``post`` serves, if any."""
        call = self._posted.get(post.request_id) if post.request_id is not None else None
        return None if call is None else call.request

    def pending(self) -> int:
        """The client's requests being answered upstream (or waiting to be sent)."""
        return len(self._calls) + len(self._waiting) + len(self._unlisted)

    # -- the upstream's side -------------------------------------------------------------

    def answer(self, post: Post, events: list[Event]) -> list[Post]:
        """The events of the upstream's answer to ``post``: what to send next."""
        posts: list[Post] = []
        for event in events:
            if isinstance(event, Negotiated):
                self._negotiated, self._discovering = True, False
                waiting, self._waiting = self._waiting, []
                for request in waiting:
                    posts += self.call(request)
            elif isinstance(event, ResponseReceived):
                posts += self._answered(event)
            elif isinstance(event, InputRequested):
                self._asked(event)

            elif isinstance(event, NotificationReceived):
                self._notified(post, event)
            elif isinstance(event, ProtocolError):
                self._found(post, event.error, "the upstream's answer is refused")
        return posts

    def _answered(self, event: ResponseReceived) -> list[Post]:
        if not self._negotiated and event.method == "server/discover":
            # The upstream refused this client's discover: the calls waiting fail
            # with that, and the next call asks again.
            self._discovering = False
            waiting, self._waiting = self._waiting, []
            for request in waiting:
                self._refuse(request, _upstream(event.error))
            return []
        if event.id == self._listing:  # the tools are known now (or never will be)
            self._listing, self._listed = None, True
            unlisted, self._unlisted = self._unlisted, []
            return [post for request in unlisted for post in self.call(request)]
        call = self._calls.get(event.id) if isinstance(event.id, int) else None
        if call is None:
            return []
        self._forget(call)
        if event.error is not None:
            self._fail(call.request, told_client(event.error))
        elif event.result is not None:
            try:
                self.server.respond(call.request, event.result)
            except SessionError as exc:  # its version cannot hold the result
                self._refuse(call.request, BadGatewayError(f"Cannot carry the result: {exc}"))
        return []

    def _asked(self, event: InputRequested) -> None:
        call = self._calls.get(event.call) if isinstance(event.call, int) else None
        if call is None:
            return
        try:
            self.server.ask(call.request, event.requests)
        except SessionError as exc:  # an ask the client cannot be sent in its version
            self._forget(call)
            self._refuse(call.request, BadGatewayError(f"Cannot carry the server's ask: {exc}"))
            return
        call.asking = event

    def _notified(self, post: Post, event: NotificationReceived) -> None:
        request = self.call_of(post)
        params = to_wire(event.message).get("params") or {}
        if request is not None and event.method == "notifications/progress":
            self.server.progress(
                request,
                params.get("progress", 0),
                total=params.get("total"),
                message=params.get("message"),
            )
        elif request is not None and event.method == "notifications/message":
            self.server.log(
                params.get("level", "info"),
                params.get("data"),
                logger=params.get("logger"),
                request=request,
            )
        else:
            refused = InternalError(f"a {event.method} notification the bridge does not carry")
            self._found(post, refused, "dropped")

    # -- bookkeeping ---------------------------------------------------------------------

    def _posts(self, call: _Call) -> list[Post]:
        posts = self.binding.posts()
        for post in posts:
            if post.request_id is not None:
                self._posted[post.request_id] = call
        return posts

    def _forget(self, call: _Call) -> None:
        self._calls.pop(call.first, None)
        self._requests.pop(stream_key(call.request.id), None)
        for rid in [r for r, found in self._posted.items() if found is call]:
            del self._posted[rid]

    def _fail(self, request: RequestReceived, error: McpError) -> None:
        try:
            self.server.fail(request, error)
        except SessionError:
            pass  # answered or cancelled already

    def _refuse(self, request: RequestReceived, error: McpError, why: str | None = None) -> None:
        """Answer ``request`` with ``error`` and keep the finding."""
        self._fail(request, error)
        self._keep(
            make_report(
                "client",
                0,
                error.code,
                f"{why}: {error.message}" if why else error.message,
                error.data,
                request.id,
                request.method.encode(),
            )
        )

    def _found(self, post: Post, error: McpError, why: str) -> None:
        self._keep(
            make_report(
                "server",
                0,
                error.code,
                f"{why}: {error.message}",
                error.data,
                post.request_id,
                post.body[:200],
            )
        )

    def unreached(self, post: Post, reason: str) -> None:
        """``post`` got no answer at all (``reason``: the connection's words,
        the upstream's address in them): a finding for the operator; its
        client is told only that the exchange failed (`told_client`)."""
        self._found(post, BadGatewayError(reason), UNREACHED)

    def _keep(self, report: Report) -> None:
        self.findings.append(report)
        del self.findings[:-_MAX_FINDINGS]

    def take_findings(self) -> list[Report]:
        """The findings since the last call; emptied by the call."""
        found, self.findings = self.findings, []
        return found


def _upstream(error: McpError | None) -> McpError:
    return error if error is not None else BadGatewayError("the upstream did not answer")
