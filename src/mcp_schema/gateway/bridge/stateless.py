"""The era bridge's sans-IO parts for 2026-07-28 clients in front of a server
that speaks only the handshake era (`mcp_schema.gateway.bridge.links` drives
them over stdio; another transport can drive them the same way).

Each side is spoken in its own era by the package's own sessions: the
client's requests are read by a `ServerSession` of 2026-07-28 made for each
(`HandshakeBridge.front`, with the `StateSealer`), the server is spoken to by
a `ClientSession` in the handshake era (`Upstream`), and the conversation is
carried across by `mcp_schema.projection`:

* `Upstream`: one upstream session, of one client principal and capability
  set (`upstream_key`: never one shared by clients that declare different
  capabilities, since the handshake fixes them at ``initialize``; a driver
  opens another of the same set for a call while each one's turn is taken), opened
  with that client's capabilities (`projected_capabilities`). It routes what
  the server sends to the `Call` it belongs to: a response by its id,
  progress by the gateway's own token (``gw-N``, each call's, so that two
  clients' tokens never collide), a log message and a server's request
  (elicitation, sampling, roots) to the one call that may ask
  (`Upstream.asking`: calls that may ask run one at a time on a session,
  since the handshake era does not say which call a server's request
  serves), list-changed and resource-updated notifications to the listens
  (``subscriptions/listen``) fed by it (`Upstream.listens`).
* `Call`: one 2026-07-28 request carried upstream, and `carry`, which turns
  each upstream event into what the front session sends: progress, logs (at
  the request's own level), the final result projected to 2026-07-28, or,
  for a server's request, an input-required result whose sealed
  ``requestState`` names the pending call (`PendingCalls`: bounded, each
  expiring), bound to the principal and the request. The retry's
  ``inputResponses`` answer the server's request and the same upstream call
  goes on: a call is never replayed.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from mcp_schema._codec.wire import to_wire
from mcp_schema.base import McpModel
from mcp_schema.codec import encode
from mcp_schema.errors import (
    BadGatewayError,
    InvalidParamsError,
    McpError,
    MethodNotFoundError,
)
from mcp_schema.gateway.findings import told_client
from mcp_schema.projection import ProjectionError, Session, project
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import (
    ClientSession,
    Event,
    InputRequested,
    Negotiated,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.session.input import in_version
from mcp_schema.subscriptions import NOTIFICATIONS, Listen, checked_change
from mcp_schema.tables import definition
from mcp_schema.versions import protocol

__all__ = [
    "FRONT_VERSION",
    "MAX_PENDING_CALLS",
    "MAY_ASK",
    "PENDING_SECONDS",
    "Call",
    "HandshakeBridge",
    "PendingCalls",
    "Upstream",
    "answer_of",
    "ask",
    "carry",
    "projected_capabilities",
    "upstream_key",
]

FRONT_VERSION = "2026-07-28"
"""The version the bridge speaks to its clients."""

MAY_ASK = frozenset({"tools/call", "prompts/get"})
"""Calls during which the server may ask the client (they run one at a time per session)."""
MAX_PENDING_CALLS = 1000
"""Calls waiting for a client's input at once, by default."""
PENDING_SECONDS = 300.0
"""How long a call waits for the client's retry, by default."""

_PROGRESS = "notifications/progress"
_LOG = "notifications/message"
_ASK_KEY = "input"


def sealer_from_env() -> StateSealer:
    """The sealer of ``MCP_STATE_KEY`` (as the examples read it), or of a random key
    (a ``ValueError`` naming the variable for a key too short)."""
    value = os.environ.get("MCP_STATE_KEY")
    try:
        keys = StateKeys.from_env(value) if value else StateKeys(secrets.token_bytes(32))
    except ValueError as exc:  # a key too short, or an empty one between commas
        raise ValueError(f"MCP_STATE_KEY: {exc}") from None
    return StateSealer(keys)


def projected_capabilities(
    capabilities: BaseModel | Mapping[str, Any], version: str
) -> dict[str, Any]:
    """A 2026-07-28 client's capabilities as ``version`` declares them: what that
    version's ``ClientCapabilities`` has a member for (the rest cannot be said there)."""
    wire = to_wire(capabilities) if isinstance(capabilities, BaseModel) else dict(capabilities)
    compiled = protocol(version)
    if compiled is None:
        raise ValueError(f"no models for {version!r}")
    model = compiled.load().client_capabilities
    assert model is not None  # every core version has one
    known = {field.alias or name for name, field in model.model_fields.items()}
    return {k: v for k, v in wire.items() if k in known}


def upstream_key(principal: str | None, capabilities: Mapping[str, Any]) -> str:
    """The name of the upstream session of ``principal`` declaring ``capabilities``."""
    return json.dumps([principal, capabilities], sort_keys=True, separators=(",", ":"))


class Call:
    """One 2026-07-28 request carried upstream: the front session and request
    answering it (the first, then each retry), its upstream id, and the
    server's requests waiting for the client (`asked`, then `waiting`)."""

    def __init__(self, front: ServerSession, request: RequestReceived, token: str) -> None:
        self.front, self.request = front, request
        self.token = token
        """The gateway's progress token for it upstream."""
        self.upstream_id: int | None = None
        self.asked: InputRequested | None = None
        self.waiting: deque[InputRequested] = deque()
        self.pending: str | None = None
        """Its name in `PendingCalls` while it waits for the client."""
        self.turn = False
        """Whether it holds its upstream session's turn (the calls that may ask
        run one at a time: the driver's lock)."""


Outcome = Literal["answered", "asked", "sent"]


def carry(call: Call, event: Event) -> Outcome:
    """What ``event`` (of ``call``'s upstream) becomes on the front session:
    ``answered`` (the response is queued), ``asked`` (an input-required result
    is queued: the call waits for the client; ``call.pending`` must be set
    first), or ``sent`` (a notification, or nothing)."""
    front, request = call.front, call.request
    if isinstance(event, ResponseReceived):
        if event.error is not None:
            front.fail(request, told_client(event.error))
        else:
            assert event.result is not None
            try:
                front.respond(request, event.result)  # projected to 2026-07-28 by the session
            except SessionError as exc:  # the result has no 2026-07-28 form
                front.fail(
                    request,
                    BadGatewayError(f"Bad gateway: the result cannot be carried: {exc!s:.300}"),
                )
        return "answered"
    if isinstance(event, InputRequested):
        if call.asked is not None:
            call.waiting.append(event)
            return "sent"
        return ask(call, event)
    if isinstance(event, NotificationReceived):
        params = to_wire(event.message).get("params") or {}
        if event.method == _PROGRESS:
            front.progress(
                request,
                params.get("progress", 0),
                total=params.get("total"),
                message=params.get("message"),
            )
        elif event.method == _LOG and params.get("level") is not None:
            front.log(
                params["level"], params.get("data"), logger=params.get("logger"), request=request
            )
    return "sent"


def ask(call: Call, event: InputRequested) -> Outcome:
    """Answer ``call`` with an input-required result asking what ``event`` asks."""
    assert call.pending is not None, "register the call in PendingCalls first"
    ((_, message),) = event.requests.items()  # handshake era: one request each
    try:
        asked: Any = project(message, FRONT_VERSION).message
    except (ProjectionError, TypeError):
        asked = message
    call.asked = event
    call.front.ask(call.request, {_ASK_KEY: asked}, state={"call": call.pending})
    return "asked"


def answer_of(
    call: Call, responses: Mapping[str, McpModel | McpError], version: str
) -> McpModel | McpError:
    """The client's answer to what ``call`` asked, as a model of ``version`` (or its error)."""
    answer = responses.get(_ASK_KEY)
    if answer is None:
        return InvalidParamsError("Invalid params: no answer under inputResponses.input")
    return answer if isinstance(answer, McpError) else in_version(answer, version)


class PendingCalls:
    """Calls waiting for their client's retry, by a random name: at most
    ``max_calls``, each at most ``seconds`` (``clock``: `time.monotonic`)."""

    def __init__(
        self,
        *,
        max_calls: int = MAX_PENDING_CALLS,
        seconds: float = PENDING_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_calls < 1 or not seconds > 0:
            raise ValueError("max_calls and seconds must be positive")
        self.max_calls, self.seconds, self._clock = max_calls, float(seconds), clock
        self._calls: OrderedDict[str, tuple[Call, str | None, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._calls)

    def put(self, call: Call, principal: str | None) -> str | None:
        """Name ``call`` (of ``principal``) while it waits; None when full."""
        if len(self._calls) >= self.max_calls:
            return None
        name = secrets.token_urlsafe(12)
        self._calls[name] = (call, principal, self._clock() + self.seconds)
        call.pending = name
        return name

    def take(self, name: object, principal: str | None) -> Call | None:
        """The call ``name`` names, of ``principal``, no longer waiting; None when
        there is none (unknown, expired or another principal's)."""
        found = self._calls.get(name) if isinstance(name, str) else None
        if found is None or found[1] != principal or found[2] <= self._clock():
            return None
        del self._calls[name]  # type: ignore[arg-type]
        found[0].pending = None
        return found[0]

    def expired(self) -> list[Call]:
        """The calls whose client did not come back in time, forgotten."""
        now = self._clock()
        gone = [n for n, (_, _, until) in self._calls.items() if until <= now]
        return [self._calls.pop(n)[0] for n in gone]


class Upstream:
    """One handshake-era session upstream (see the module): `opening` frames,
    `receive` the server's lines, `send` the frames the session queued."""

    def __init__(
        self,
        key: str,
        version: str,
        capabilities: Mapping[str, Any],
        server_capabilities: Mapping[str, Any],
        info: Mapping[str, Any],
    ) -> None:
        self.key, self.version = key, version
        self.client = ClientSession(info=info, capabilities=capabilities, versions=[version])
        self.listens: set[Listen] = set()
        """The listens this session's notifications feed (each of its principal and capabilities)."""
        self.server_capabilities = dict(server_capabilities)
        self.calls: dict[int, Call] = {}
        self.asking: Call | None = None
        """The call the server's requests and log messages belong to (one at a time)."""
        self.ready = False
        self.log_level: str | None = None
        self._tokens = itertools.count(1)
        self.client.initialize(version)

    def token(self) -> str:
        return f"gw-{next(self._tokens)}"

    def set_level(self, level: str | None) -> None:
        """A request's log level (None: it names none), set on this session
        (``logging/setLevel``) when it differs and the server logs."""
        if level is None or level == self.log_level or "logging" not in self.server_capabilities:
            return
        self.log_level = level
        self.client.request("logging/setLevel", {"level": level})

    def start(self, call: Call, params: dict[str, Any], checked: McpModel | None = None) -> None:
        """Send ``call`` upstream with ``params`` (its own, projected; ``checked``:
        the model its projection validated, then sent without a second check)."""
        method = call.request.method
        if checked is None:
            call.upstream_id = self.client.request(method, params)
        else:
            call.upstream_id = self.client._request_checked(method, params, checked)
        self.calls[call.upstream_id] = call

    def receive(self, frame: bytes) -> list[tuple[Call | None, Event]]:
        """The events of one frame from the server, each with the call it belongs
        to (None: the session's own, or a `ProtocolError` to report)."""
        return self.route(self.client.receive(frame))

    def route(self, events: list[Event]) -> list[tuple[Call | None, Event]]:
        """``events``, the session's (of a transport that reads the frames for
        it: `mcp_schema.http.binding.ClientBinding`), each with its call."""
        routed: list[tuple[Call | None, Event]] = []
        for event in events:
            if isinstance(event, ResponseReceived):
                call = self.calls.pop(event.id, None) if isinstance(event.id, int) else None
                routed.append((call, event))
            elif isinstance(event, InputRequested):
                routed.append((self.asking, event))
            elif isinstance(event, NotificationReceived):
                routed.append((self._notified(event), event))
            else:
                self.ready = self.ready or isinstance(event, Negotiated)
                routed.append((None, event))
        return routed

    def refuse(self, event: InputRequested) -> bytes:
        """The frame refusing a server's request no call may ask now (-32601, as
        from a client that does not declare what it needs)."""
        ((method, message),) = event.requests.items()
        error = MethodNotFoundError(
            f"Method not found: {method} outside of a call that may ask the client",
            {"method": method},
        )
        # The session holds the request as the author's to answer; it is answered
        # here, beside it: a stray request of a misbehaving server stays counted
        # there (bounded by max_pending), never answered twice.
        return encode(error.to_response(to_wire(message).get("id")))

    def _notified(self, event: NotificationReceived) -> Call | None:
        if event.method in NOTIFICATIONS:  # a list changed, a resource updated
            params = to_wire(event.message).get("params") or {}
            uri = params.get("uri")
            try:
                change = checked_change(event.method, uri if isinstance(uri, str) else None)
            except ValueError:  # a server's task status, or an update naming no resource
                return None
            for listen in [n for n in self.listens if n.filter.wants(change)]:
                listen.publish(change)
            return None
        if event.method == _PROGRESS:
            token = (to_wire(event.message).get("params") or {}).get("progressToken")
            return next((c for c in self.calls.values() if c.token == token), None)
        if event.method == _LOG:
            return self.asking
        return None


class HandshakeBridge:
    """The bridge's state for one gateway (sans-IO): the front sessions' rules
    (``info`` and ``capabilities`` of the server, as its ``initialize`` said;
    ``sealer`` for the ``requestState``), the upstream ``version``, and the
    pending calls."""

    def __init__(
        self,
        *,
        version: str,
        info: Mapping[str, Any],
        capabilities: Mapping[str, Any],
        sealer: StateSealer,
        pending: PendingCalls | None = None,
    ) -> None:
        self.version, self.info = version, dict(info)
        # What 2026-07-28 can say of the server's capabilities (``logging`` included:
        # deprecated there, still a member).
        compiled = protocol(FRONT_VERSION)
        assert compiled is not None  # a core version
        model = definition(compiled.package, "ServerCapabilities")
        known = {f.alias or n for n, f in model.model_fields.items()}
        self.capabilities = {k: v for k, v in capabilities.items() if k in known}
        self.sealer = sealer
        self.pending = PendingCalls() if pending is None else pending

    def front(self, principal: str | None) -> ServerSession:
        """The 2026-07-28 session reading one client request (of ``principal``)."""
        return ServerSession(
            info=self.info,
            capabilities=self.capabilities,
            versions=[FRONT_VERSION],
            request_state=self.sealer,
            principal=principal,
            listens=False,
        )

    def upstream_params(self, event: RequestReceived, token: str | None) -> dict[str, Any]:
        """``event``'s params as the upstream's version says them (its progress
        token, if any, replaced by ``token``); -32601 when it has no form there."""
        return self.upstream_request(event, token)[0]

    def upstream_request(
        self, event: RequestReceived, token: str | None
    ) -> tuple[dict[str, Any], McpModel]:
        """`upstream_params`, and the request's model in the upstream's version,
        which the projection validated (`Upstream.start` sends it unread: the
        token the gateway puts in its ``_meta`` is a string, as every version's is)."""
        context = event.context
        facts = Session(
            client_capabilities=to_wire(context.client_capabilities),
            client_info=None if context.client_info is None else to_wire(context.client_info),
            log_level=context.log_level,
        )
        try:
            projected = project(event.message, self.version, session=facts).message
        except (ProjectionError, TypeError):
            raise MethodNotFoundError(
                f"Method not found: {event.method} has no form in {self.version}",
                {"method": event.method},
            ) from None
        params = dict(to_wire(projected).get("params") or {})
        meta = dict(params.get("_meta") or {})
        meta.pop("progressToken", None)
        if token is not None and context.progress_token is not None:
            meta["progressToken"] = token
        if meta:
            params["_meta"] = meta
        else:
            params.pop("_meta", None)
        return params, projected
