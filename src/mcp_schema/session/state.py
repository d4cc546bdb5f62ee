"""What a connection adds to reading one message: every transition of its
state, in the spirit of h11's ``_state``, in one place.

* the phase: `IDLE` (no version yet), `OPEN` (a version fixed, never to
  change again);
* the peer's requests in flight and this side's awaiting answers (one
  `Pending` table each way, the Correlator's);
* cancellation, a fact of the request (the event), not of its id: an id
  may be used again once its request left the table, and the cancelled
  request stays cancelled;
* the input rounds: a server's open `Round`s (handshake era: by the call
  they serve; stateless era: in a round store, `MemoryRounds` in the session
  or `SealedRounds` in the ``requestState`` itself), a client's input
  requests not provided yet.

A stateless request served with no connection needs none of this: the
per-request path (`mcp_schema.negotiation`, the codec) takes what it knows
as arguments, and this module is what a connection adds.
"""

from __future__ import annotations

import enum
import functools
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_schema._codec.pending import Pending
from mcp_schema._codec.route import IdKey
from mcp_schema._codec.wire import wire_value
from mcp_schema.errors import InternalError, InvalidParamsError, McpError, error_list, quote
from mcp_schema.request_state import STATE_PATH, OpenedState, SingleUse, StateSealer
from mcp_schema.rounds import INPUT_RESULTS, answered_inputs, same_call
from mcp_schema.session.events import (
    InputRequested,
    InvalidOutgoingError,
    RequestReceived,
    SessionStateError,
    UnknownRequestError,
)
from mcp_schema.versions import protocol

if TYPE_CHECKING:
    from mcp_schema.base import McpModel
    from mcp_schema.session.events import Event

MAX_PENDING = 1000
"""Requests in flight each way by default: a peer's request beyond it is
refused (-32600), the author's own is a `SessionStateError`."""
MAX_CANCELLED = 1000
"""Cancelled requests remembered (so a late answer is dropped, not an error)."""
MAX_OPEN_ROUNDS = 1000
"""Stateless-era rounds awaiting their retry; past this the oldest is forgotten
(its retry is then refused with -32602, as any unknown ``requestState``)."""


class Phase(enum.Enum):
    IDLE = "idle"
    """No version yet: ``initialize``, a ``server/discover`` answer or a first
    accepted stateless-era request fixes it."""
    OPEN = "open"
    """The version is fixed."""


# The members as the connection reads them, once each stateless-era request:
# a member looked up on its enum's class calls the metaclass's __getattr__
# hook (Python 3.11), hundreds of instructions each.
_IDLE, _OPEN = Phase.IDLE, Phase.OPEN


Answered = Callable[["Outgoing", "McpModel | None", "McpError | None", "list[Event]"], None]


@dataclass
class Outgoing:
    """A request this side sent, awaiting its answer."""

    id: int
    method: str
    version: str
    message: McpModel
    on_answer: Answered
    """Called with the result or the error (what answered the request)."""


@dataclass
class Round:
    """One ``ask``: the call it serves, the questions, the answers so far."""

    request: RequestReceived
    """The call (stateless era, a sealed round: its latest retry, the same call)."""
    questions: dict[str, tuple[str, dict[str, Any]]]
    """key -> (method, params as wire JSON)."""
    state: object
    answers: dict[str, McpModel | McpError] = field(default_factory=dict)
    outgoing: list[int] = field(default_factory=list)
    """Handshake era: the ids of the requests still unanswered."""
    claimer: Callable[[], Awaitable[None]] | None = None
    """A sealed round's claim (`mcp_schema.session.events.InputReceived.claim`)."""


class Connection:
    """The state of one connection; every change to it is a method here."""

    def __init__(self, max_pending: int) -> None:
        self.phase = _IDLE
        self.version: str | None = None
        self.theirs: Pending[RequestReceived] = Pending(max_pending)
        self.asking: dict[IdKey, Round] = {}
        """Handshake era: open rounds by the id of the call they serve."""
        self._max_pending = max_pending

    # The parts a connection may never use (a stateless-era request has a
    # connection of its own, which uses none of them): built at their first use.

    @functools.cached_property
    def mine(self) -> Pending[Outgoing]:
        """This side's requests awaiting the peer's answer."""
        return Pending(self._max_pending)

    @functools.cached_property
    def _cancelled(self) -> OrderedDict[RequestReceived, None]:
        return OrderedDict()

    @functools.cached_property
    def rounds(self) -> MemoryRounds | SealedRounds:
        """Stateless era: where open rounds wait for their retry."""
        return MemoryRounds()

    @functools.cached_property
    def _requested(self) -> OrderedDict[InputRequested, object]:
        """Client side: what answers each input request not provided yet."""
        return OrderedDict()

    # -- the phase --------------------------------------------------------------------

    def open(self, version: str) -> None:
        """IDLE -> OPEN in ``version``; the only transition of the phase."""
        if self.phase is _OPEN:
            raise SessionStateError(f"the session speaks {self.version} already")
        self.phase, self.version = _OPEN, version

    def negotiated(self) -> str:
        """The version; `SessionStateError` before there is one."""
        if self.version is None:
            raise SessionStateError("no protocol version is negotiated yet")
        return self.version

    # -- the peer's requests ----------------------------------------------------------

    def admissible(self, rid: str | int) -> None:
        """-32600 unless a request ``rid`` of the peer's may be in flight."""
        self.theirs.check(rid)

    def accept(self, event: RequestReceived) -> None:
        """``event`` is in flight; -32600 when its id is, or the table is full."""
        self.theirs.admit(event.id, event)

    def answerable(self, request: RequestReceived) -> bool:
        """True while ``request`` is in flight, False once the peer cancelled it
        (an answer is then dropped); `UnknownRequestError` otherwise."""
        if not isinstance(request, RequestReceived):
            raise TypeError(f"expected a RequestReceived event, not {type(request).__name__}")
        if self.theirs.get(request.id) is request:
            return True
        if request in self._cancelled:
            return False
        raise UnknownRequestError(
            f"request {quote(request.id)} ({request.method}) is not in flight: answered already?"
        )

    def release(self, request: RequestReceived) -> None:
        """``request`` (in flight: `answerable` said so) is answered."""
        self.theirs.pop(request.id)

    def cancel(self, rid: str | int) -> RequestReceived | None:
        """The peer cancelled its request ``rid``: the request, or None when none is in flight."""
        request = self.theirs.pop(rid)
        if request is not None:
            self._cancelled[request] = None
            while len(self._cancelled) > MAX_CANCELLED:
                self._cancelled.popitem(last=False)
        return request

    def cancelled(self, request: RequestReceived) -> bool:
        return request in self._cancelled

    # -- this side's requests ---------------------------------------------------------

    def send(self, outgoing: Outgoing) -> None:
        if self.mine.full:
            raise SessionStateError(f"{len(self.mine):,} requests already await an answer")
        self.mine.admit(outgoing.id, outgoing)

    def answered(self, rid: str | int) -> Outgoing | None:
        """The request of this side that ``rid`` answers, out of the table; None if none."""
        return self.mine.pop(rid)

    # -- input rounds -----------------------------------------------------------------

    def requested(self, event: InputRequested, answers: object) -> None:
        """(Client side.) ``event`` asks for input; ``answers`` is what its input answers."""
        self._requested[event] = answers
        while len(self._requested) > MAX_OPEN_ROUNDS:
            self._requested.popitem(last=False)

    def answering(self, event: InputRequested) -> Any:
        """What ``event``'s input answers; None once `provided`."""
        return self._requested.get(event)

    def provided(self, event: InputRequested) -> None:
        del self._requested[event]


# -- stateless-era round stores ------------------------------------------------------
# A store gives a round its ``requestState`` (`token`, changing nothing), holds
# it until its retry (`keep`, `close`), and finds it again from the retry
# (`find`: -32602 for a state it does not know or a retry of another call).
# The checks of the answers themselves are the session's, the same for both.


def _refused(reason: str, path: str = STATE_PATH) -> InvalidParamsError:
    return InvalidParamsError(
        f"Invalid params: {path}: {reason}", error_list([{"path": path, "reason": reason}])
    )


class MemoryRounds:
    """Rounds kept in the session, under a random token, for a connection
    whose retries come back to it (stdio): at most `MAX_OPEN_ROUNDS`, the
    oldest forgotten past that."""

    def __init__(self) -> None:
        self._open: OrderedDict[str, Round] = OrderedDict()

    def token(self, round_: Round) -> str:
        return secrets.token_urlsafe(16)

    def keep(self, token: str, round_: Round) -> None:
        self._open[token] = round_
        while len(self._open) > MAX_OPEN_ROUNDS:
            self._open.popitem(last=False)

    def close(self, token: str) -> None:
        self._open.pop(token, None)

    def find(self, token: object, retry: RequestReceived) -> Round:
        found = self._open.get(token) if isinstance(token, str) else None
        if found is None or found.request.method != retry.method:
            raise _refused("unknown or expired")
        if not same_call(found.request.message, retry.message):
            raise _refused("not the call the input was asked for", "$.params")
        return found


class SealedRounds:
    """Rounds carried by the client: the questions, the handler's state and
    the answers so far sealed into the ``requestState`` by ``sealer``, bound
    to the call and to ``principal`` (`mcp_schema.request_state`), so any
    session holding the same keys serves the retry and nothing is kept."""

    def __init__(self, sealer: StateSealer, principal: str | None) -> None:
        self._sealer, self._principal = sealer, principal

    def token(self, round_: Round) -> str:
        asked = {k: {"method": m, "params": p} for k, (m, p) in round_.questions.items()}
        answers = {k: wire_value(a, "answer") for k, a in round_.answers.items()}
        data = {"state": round_.state, "answers": answers}
        try:
            return self._sealer.seal(
                round_.request.message, principal=self._principal, asked=asked, data=data
            )
        except (TypeError, ValueError) as exc:
            if round_.answers:  # asked again: what grew is the client's answers
                where = "$.params.inputResponses"
                raise _refused("too large to carry to the next round", where) from None
            raise InvalidOutgoingError(f"ask: state must be a small JSON value: {exc}") from None

    def keep(self, token: str, round_: Round) -> None:
        """Nothing to keep: the client holds the round."""

    def close(self, token: str) -> None:
        """Nothing to close: the state is valid until it expires."""

    def find(self, token: object, retry: RequestReceived) -> Round:
        opened = self._sealer.open(retry.message, principal=self._principal)
        assert opened is not None  # the retry carries ``token``
        asked = opened.asked
        questions = {key: q for key, ask in asked.items() if (q := _question(ask)) is not None}
        data = opened.data if isinstance(opened.data, dict) else {}
        carried = data.get("answers")
        if not questions or len(questions) < len(asked) or not isinstance(carried, dict):
            # Sealed with these keys, but not by a session's ``ask`` (the application's own).
            raise _refused("not a request state of this server's input rounds")
        round_ = Round(retry, questions, data.get("state"))
        round_.claimer = functools.partial(_claimed, opened, self._sealer.claims)
        compiled = protocol(retry.version)
        assert compiled is not None  # the retry was read in it
        given = {k: m for k, (m, _) in questions.items() if k in carried}
        answers, _ = answered_inputs(carried, given, compiled.package)
        round_.answers.update(answers)
        return round_


async def _claimed(opened: OpenedState, claims: SingleUse | None) -> None:
    if claims is None:
        raise InternalError("this server cannot claim a round: its StateSealer has no claims")
    await opened.claim(claims)


def _question(ask: object) -> tuple[str, dict[str, Any]] | None:
    """A sealed input request as (method, params); None when it is none."""
    method = ask.get("method") if isinstance(ask, dict) else None
    params = ask.get("params") if isinstance(ask, dict) else None
    if not isinstance(method, str) or method not in INPUT_RESULTS or not isinstance(params, dict):
        return None
    return method, params
