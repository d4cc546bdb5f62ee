"""Handshake-era sessions over HTTP: what one ``Mcp-Session-Id`` holds (a
`LiveSession`), and where the endpoint keeps them (a `SessionStore`).

The store is the seam for sharing sessions: the endpoint only calls
`SessionStore.get`, `add` and `remove`. The default, `MemorySessions`,
keeps them in this process, at most ``max_sessions`` of them (beyond, the
least recently used one is terminated); across replicas,
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
from typing import TYPE_CHECKING, Protocol

from mcp_schema.http.resume import Replays
from mcp_schema.http.stream import Stream
from mcp_schema.session import Frame, ServerSession

if TYPE_CHECKING:
    from mcp_schema.http.answers import Awaited

__all__ = ["MAX_SESSIONS", "LiveSession", "MemorySessions", "SessionStore", "StreamKey"]

MAX_SESSIONS = 10_000
"""Handshake-era sessions `MemorySessions` keeps by default."""

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

    def __init__(self, session_id: str | None, server: ServerSession) -> None:
        self.id = session_id
        """``None`` for the throwaway session of one stateless-era request."""
        self.server = server
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
        """Keep ``session`` (whose ``id`` is set) until it is removed."""

    def remove(self, session_id: str) -> LiveSession | None:
        """Forget ``session_id``; the session it had, if any."""

    def close(self) -> None:
        """Terminate every session (the server is shutting down)."""


class MemorySessions:
    """The sessions of this process, at most ``max_sessions``: adding one
    more terminates the one used least recently."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        if not isinstance(max_sessions, int) or max_sessions < 1:
            raise ValueError(f"max_sessions must be a positive int, not {max_sessions!r}")
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, LiveSession] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> LiveSession | None:
        found = self._sessions.get(session_id)
        if found is not None:
            self._sessions.move_to_end(session_id)
        return found

    def add(self, session: LiveSession) -> None:
        assert session.id is not None
        self._sessions[session.id] = session
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)[1].close()

    def ids(self) -> list[str]:
        """The ids of the sessions kept, least recently used first."""
        return list(self._sessions)

    def remove(self, session_id: str) -> LiveSession | None:
        return self._sessions.pop(session_id, None)

    def close(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        for session in sessions:
            session.close()
