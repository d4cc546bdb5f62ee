"""What a session hands its author: events (one per thing the peer did), and
the exceptions it raises for the author's own mistakes.

Events are small frozen classes. A message in an event is a model of the
version the session reads in: the negotiated one, or the author's handler
version (see `ServerSession`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Union

from mcp_schema.base import McpModel
from mcp_schema.capabilities import ASKED_CAPABILITY, askable
from mcp_schema.context import RequestContext
from mcp_schema.errors import McpError, MissingRequiredClientCapabilityError

__all__ = [
    "CancelRequested",
    "CapabilityError",
    "Event",
    "InputReceived",
    "InputRequested",
    "InvalidOutgoingError",
    "MissingCapabilityError",
    "Negotiated",
    "NotificationReceived",
    "ProtocolError",
    "RequestReceived",
    "ResponseReceived",
    "SessionError",
    "SessionStateError",
    "TaskChanged",
    "UnknownRequestError",
]


@dataclass(frozen=True, eq=False, init=False)
class RequestReceived:
    """The peer sent a request. Answer it through the session
    (``respond``/``fail``), once; the session fills in the id."""

    id: str | int
    method: str
    message: McpModel
    """The request, a model of the session's reading version."""
    context: RequestContext
    """Who asks and how: the client's capabilities and info, its log level,
    the progress token (from ``params._meta`` or the session's ``initialize``)."""
    version: str
    """The version on the wire (the negotiated one)."""

    def __init__(
        self, id: str | int, method: str, message: McpModel, context: RequestContext, version: str
    ) -> None:
        # One per request: written at once (see `RequestContext.__init__`).
        fields = self.__dict__
        fields["id"] = id
        fields["method"] = method
        fields["message"] = message
        fields["context"] = context
        fields["version"] = version

    def can_ask(self, method: str) -> bool:
        """Whether the client declared what ``method`` (``elicitation/create``,
        ``sampling/createMessage``, ``roots/list``) needs, so
        ``session.ask(...)`` may send it for this request."""
        capability = ASKED_CAPABILITY.get(method)
        if capability is None:
            return False
        declared = getattr(self.context.client_capabilities, capability, None)
        return declared is not None and askable(self.version, method)


@dataclass(frozen=True, eq=False)
class NotificationReceived:
    method: str
    message: McpModel
    version: str


@dataclass(frozen=True, eq=False)
class CancelRequested:
    """The peer cancelled ``request`` (still unanswered): an answer to it is
    now dropped by the session, and ``session.cancelled(request)`` is true."""

    request: RequestReceived
    reason: str | None


@dataclass(frozen=True, eq=False)
class InputReceived:
    """The client answered what a handler asked with ``session.ask``.

    ``request`` is the request to answer now: in the handshake era the
    original call, in the stateless era its retry (a new request carrying the
    answers). ``responses`` are keyed as asked: each a result model, or the
    `McpError` the client answered with.
    """

    request: RequestReceived
    responses: Mapping[str, McpModel | McpError]
    state: object = None
    """What the handler passed to ``ask`` (kept by the session, never sent)."""
    claimer: Callable[[], Awaitable[None]] | None = None
    """How `claim` records the round as used (a sealed round's), or None."""

    async def claim(self) -> None:
        """Make this answer single-use, before acting on it (a one-time
        redemption): a sealed round is recorded as used in its sealer's
        ``claims`` (the broker's, so on every replica), once; its replay is an
        `InvalidParamsError` (-32602, ``already used``), a store that cannot
        be reached a `mcp_schema.broker.BrokerError` (-32603): either way the
        handler must not go on (letting the error propagate fails the call).
        A round kept in the session is closed by its answer, so its claim
        always succeeds."""
        if self.claimer is not None:
            await self.claimer()


@dataclass(frozen=True, eq=False)
class InputRequested:
    """(Client side.) The server asks for input: in the handshake era it sent a
    request (elicitation, sampling, roots); in the stateless era it answered
    a call with an input-required result. Answer with ``provide_input``."""

    requests: Mapping[str, McpModel]
    """What is asked, keyed as the answers must be: models of the input
    requests (``ElicitRequest``, ``CreateMessageRequest``, ``ListRootsRequest``)."""
    call: str | int | None
    """The id of the call this input serves (stateless era), else None."""


@dataclass(frozen=True, eq=False)
class ResponseReceived:
    """The peer answered a request the author sent."""

    id: str | int
    method: str
    result: McpModel | None
    error: McpError | None


@dataclass(frozen=True, eq=False)
class TaskChanged:
    """(Client side.) The server answered the call ``call`` with a task, or a
    poll of it (``ClientSession.poll``) found it: ``task`` is the
    ``CreateTaskResult`` or the detailed task (its ``status``,
    ``status_message``, ``poll_interval_ms``). Its input requests come as an
    `InputRequested`, its end as the call's `ResponseReceived` (a cancelled
    task ends with this event alone)."""

    call: str | int
    task: McpModel


@dataclass(frozen=True, eq=False, init=False)
class Negotiated:
    """The session's version is fixed: after ``initialize`` (handshake era),
    or by the first request naming a version (stateless era) or the
    ``server/discover`` answer a client accepted."""

    version: str
    peer_info: McpModel | None
    """The peer's ``Implementation`` (clientInfo or serverInfo), when it gave one."""
    peer_capabilities: McpModel | None

    def __init__(
        self, version: str, peer_info: McpModel | None, peer_capabilities: McpModel | None
    ) -> None:
        # A stateless-era session is opened by each request: written at once
        # (see `RequestContext.__init__`).
        fields = self.__dict__
        fields["version"] = version
        fields["peer_info"] = peer_info
        fields["peer_capabilities"] = peer_capabilities


@dataclass(frozen=True, eq=False)
class ProtocolError:
    """The peer sent what the session refused; ``answered`` tells whether an
    error frame was queued (JSON-RPC answers neither notifications nor
    responses)."""

    error: McpError
    answered: bool


Event = Union[
    RequestReceived,
    NotificationReceived,
    CancelRequested,
    InputReceived,
    InputRequested,
    ResponseReceived,
    TaskChanged,
    Negotiated,
    ProtocolError,
]


class SessionError(Exception):
    """The author asked the session for something it cannot do: a mistake in
    the calling program, raised at once (peer input never raises)."""


class UnknownRequestError(SessionError):
    """An answer to a request that is not in flight: answered already, or never received."""


class InvalidOutgoingError(SessionError, ValueError):
    """What the author sends is not valid in the session's version (a wrong
    model, a method the version lacks, params its schema refuses)."""


class CapabilityError(SessionError):
    """The peer did not declare what this needs (an elicitation to a client
    without ``elicitation``, a log before the client asked for logging)."""


class MissingCapabilityError(CapabilityError, MissingRequiredClientCapabilityError):
    """A stateless-era request asks for what its client did not declare on
    it (``session.ask`` of an elicitation without ``elicitation``): a
    `CapabilityError` to its author, and the -32021 the request is answered
    with when the handler lets it through (the HTTP endpoint answers a
    handler's `McpError`; ``session.fail(request, err)`` sends it too)."""


class SessionStateError(SessionError):
    """Not possible in the session's state (no version negotiated yet, too
    many requests in flight)."""
