"""Handshake-era sessions over HTTP: what one ``Mcp-Session-Id`` holds (a
`LiveSession`), and where the endpoint keeps them (a `SessionStore`).

The store is the seam for sharing sessions: the endpoint only calls
`SessionStore.get`, `add` and `remove`. The default, `MemorySessions`,
keeps them in this process: at most ``max_sessions`` of them, at most
``max_per_key`` per caller (`LiveSession.owner`, the `Caller.key` of the
client that sent ``initialize``: `mcp_schema.shares`). One more is refused
(`add` raises `ShareExceededError`, and the client gets 429); none is
evicted to make room, but a session unused for ``idle_seconds`` (no
request, no open stream) expires, as if the client had deleted it. Across replicas,
`mcp_schema.http.shared_sessions.BrokerSessions` records where each one
lives, and `mcp_schema.http.forward` carries a request to it. A store of another kind
must hand back the same `LiveSession` objects it was given: a session
holds a live `ServerSession` and the open streams of its requests, which
live in the process that serves them. Stateless-era requests never touch
a store.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from mcp_schema.http.resume import Replays
from mcp_schema.http.stream import Stream
from mcp_schema.session import Frame, ServerSession
from mcp_schema.shares import Share

if TYPE_CHECKING:
    from mcp_schema.http.answers import Awaited

__all__ = [
    "IDLE_SECONDS",
    "MAX_SESSIONS",
    "LiveSession",
    "MemorySessions",
    "SessionStore",
    "StreamKey",
]

MAX_SESSIONS = 10_000
"""Handshake-era sessions `MemorySessions` keeps by default (a tenth of them per caller)."""

IDLE_SECONDS = 1800.0
"""Seconds a handshake-era session may go unused before it expires, by default."""

StreamKey = tuple[type, object]
"""A request id as a key: ``"1"`` and ``1`` are different requests."""


def stream_key(request_id: object) -> StreamKey:
    return (type(request_id), request_id)


class LiveSession:
    """One handshake-era session: its id, its `ServerSession`, the streams
    of its requests still being answered (by request id) and its GET stream
    (``listener``), which carries what relates to no request; or the
    session of one stateless-era request (no id), kept while its answer is
    awaited."""

    # One is built for every stateless-era request: slots, no dict to build with it.
    __slots__ = (
        "awaited",
        "closed",
        "holding",
        "id",
        "listener",
        "opened",
        "outbox",
        "owner",
        "replays",
        "server",
        "streams",
    )

    def __init__(
        self, session_id: str | None, server: ServerSession, owner: str | None = None
    ) -> None:
        self.id = session_id
        """``None`` for the throwaway session of one stateless-era request."""
        self.server = server
        self.owner = owner
        """The `Caller.key` of the client that opened it: whose share it counts in."""
        self.streams: dict[StreamKey, Stream] = {}
        self.listener: Stream | None = None
        self.closed = False
        self.replays: Replays | None = None
        """Its resumable streams (`mcp_schema.http.resume`), when the endpoint keeps any."""
        self.awaited: dict[StreamKey, Awaited] = {}
        """Its requests answered later (`mcp_schema.http.answers`), by id."""
        self.holding = False
        """The endpoint is at work on it: what the session queues waits for
        the endpoint to route it (`mcp_schema.http.routing`)."""
        self.outbox: list[Frame] = []
        """Frames taken from the session outside the endpoint's calls, to route."""
        self.opened = time.monotonic()

    def close(self) -> None:
        """Terminate: every open stream ends (unanswered requests get no answer,
        their handlers' tasks are cancelled)."""
        self.closed = True
        telemetry = self.server.telemetry
        if self.id is not None and telemetry is not None and telemetry.active:
            telemetry.session_ended(time.monotonic() - self.opened, self.server.version, "tcp")
        streams = [*self.streams.values(), *([self.listener] if self.listener else [])]
        self.streams.clear()
        self.listener = None
        awaited, self.awaited = list(self.awaited.values()), {}
        for waiting in awaited:
            waiting.end(cancel=True)
        for stream in streams:
            stream.finish()


class SessionStore(Protocol):
    """Where an `Endpoint` keeps its handshake-era sessions, by id."""

    def get(self, session_id: str) -> LiveSession | None:
        """The live session of ``session_id``, or None (unknown or terminated)."""

    def add(self, session: LiveSession) -> None:
        """Keep ``session`` (whose ``id`` is set) until it is removed; a
        `ShareExceededError`, nothing kept, when its owner's share is full."""

    def remove(self, session_id: str) -> LiveSession | None:
        """Forget ``session_id``; the session it had, if any."""

    def close(self) -> None:
        """Terminate every session (the server is shutting down)."""


class MemorySessions:
    """The sessions of this process: at most ``max_sessions``, at most
    ``max_per_key`` per owner (by default a tenth of ``max_sessions``); one
    unused for ``idle_seconds`` expires (``on_expire`` hears its id)."""

    def __init__(
        self,
        max_sessions: int = MAX_SESSIONS,
        *,
        max_per_key: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        on_expire: Callable[[str], None] | None = None,
    ) -> None:
        if not isinstance(max_sessions, int) or max_sessions < 1:
            raise ValueError(f"max_sessions must be a positive int, not {max_sessions!r}")
        if not isinstance(idle_seconds, (int, float)) or not 0 < idle_seconds < float("inf"):
            raise ValueError(f"idle_seconds must be a positive number, not {idle_seconds!r}")
        self.share = Share("sessions", total=max_sessions, per_key=max_per_key)
        self.max_sessions, self.idle_seconds = max_sessions, float(idle_seconds)
        self._clock, self._on_expire = clock, on_expire
        # Least recently used first, each with when it was last used.
        self._sessions: OrderedDict[str, tuple[LiveSession, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> LiveSession | None:
        now = self._clock()
        self._expire(now)
        found = self._sessions.get(session_id)
        if found is None:
            return None
        self._sessions[session_id] = (found[0], now)
        self._sessions.move_to_end(session_id)
        return found[0]

    def add(self, session: LiveSession) -> None:
        assert session.id is not None
        now = self._clock()
        self._expire(now)
        self.share.take(session.owner)  # raises when full: nothing kept
        self._sessions[session.id] = (session, now)

    def ids(self) -> list[str]:
        """The ids of the sessions kept, least recently used first."""
        return list(self._sessions)

    def remove(self, session_id: str) -> LiveSession | None:
        found = self._sessions.pop(session_id, None)
        if found is None:
            return None
        self.share.release(found[0].owner)
        return found[0]

    def close(self) -> None:
        sessions = [live for live, _ in self._sessions.values()]
        self._sessions.clear()
        for session in sessions:
            self.share.release(session.owner)
            session.close()

    def _expire(self, now: float) -> None:
        """End the sessions unused for ``idle_seconds``, oldest first. One
        still at work (a request's stream, its GET stream, an answer awaited)
        is in use: it goes to the back as if used now. Each session is looked
        at once per ``idle_seconds`` at most: O(1) per call, amortized."""
        horizon = now - self.idle_seconds
        while self._sessions:
            session_id, (live, used) = next(iter(self._sessions.items()))
            if used > horizon:
                return
            if live.streams or live.listener is not None or live.awaited:
                self._sessions[session_id] = (live, now)
                self._sessions.move_to_end(session_id)
                continue
            self.remove(session_id)
            live.close()
            if self._on_expire is not None:
                self._on_expire(session_id)
