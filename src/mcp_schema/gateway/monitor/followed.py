"""`Followed`: the handshake-era sessions an
`mcp_schema.gateway.monitor.exchange.ExchangeValidator` follows, each its
`mcp_schema.codec.Correlator` (hand-written runtime module, sans-IO).

A session is followed from the answer to its ``initialize`` until a
``DELETE`` answered 2xx, or until it has been unused for ``idle_seconds``.
The table is bounded as every table a client fills is
(`mcp_schema.shares`): at most ``max_sessions`` in all, ``per_key`` per
caller (the `mcp_schema.http.caller.Caller.key` of the client that sent
``initialize``). The place is taken when the ``initialize`` is read,
before anything goes upstream (`reserve`), so a client past its share is
refused (429) and no other client's session is forgotten to make room; a
place whose ``initialize`` opened no session is given back
(`Place.release`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import NamedTuple

from mcp_schema.codec import Correlator
from mcp_schema.http.sessions import IDLE_SECONDS
from mcp_schema.shares import Share

__all__ = ["Followed", "Place", "opens"]


def opens(method: str, received: Mapping[str, str], body: bytes) -> bool:
    """Whether a request (its headers by lower-case name, its whole body) may
    be an ``initialize``: a gateway that reads requests after forwarding them
    reads this one first (a session it opens takes a place, or is refused)."""
    # find, not in: ``bytes in bytes`` raises and clears a TypeError first (it tries an int).
    return method == "POST" and "mcp-session-id" not in received and body.find(b'"initialize"') >= 0


class _Session(NamedTuple):
    correlator: Correlator
    owner: str | None
    used: float


class Place:
    """A place `Followed.reserve` took for ``key``: a session takes it
    (`Followed.keep`), or it is given back (`release`; again: nothing)."""

    __slots__ = ("_share", "key")

    def __init__(self, share: Share | None, key: str | None) -> None:
        self._share, self.key = share, key

    def release(self) -> None:
        if self._share is not None:
            self._share.release(self.key)
            self._share = None

    @property
    def held(self) -> bool:
        """Whether it is still to be taken or given back."""
        return self._share is not None


class Followed:
    """The sessions followed, least recently used first (see the module)."""

    def __init__(
        self,
        max_sessions: int,
        per_key: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(idle_seconds, (int, float)) or not 0 < idle_seconds < float("inf"):
            raise ValueError(f"idle_seconds must be a positive number, not {idle_seconds!r}")
        self.share = Share("sessions", total=max_sessions, per_key=per_key)
        self.idle_seconds, self._clock = float(idle_seconds), clock
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> Correlator | None:
        """The correlator of ``session_id`` (now its latest use), or None."""
        now = self._clock()
        self._expire(now)
        found = self._sessions.get(session_id)
        if found is None:
            return None
        self._sessions[session_id] = found._replace(used=now)
        self._sessions.move_to_end(session_id)
        return found.correlator

    def reserve(self, key: str | None) -> Place | None:
        """A place for the session ``key``'s ``initialize`` may open (None,
        nothing taken, when its share or the table is full)."""
        self._expire(self._clock())
        return Place(self.share, key) if self.share.acquire(key) else None

    def keep(self, session_id: str, correlator: Correlator, place: Place) -> None:
        """Follow ``session_id`` in ``place`` (one `reserve` gave; given back
        already: not followed)."""
        if not place.held:
            return
        place._share = None  # the session holds it now
        self.forget(session_id)  # named again: the old one's place is given back
        self._sessions[session_id] = _Session(correlator, place.key, self._clock())

    def forget(self, session_id: str) -> None:
        found = self._sessions.pop(session_id, None)
        if found is not None:
            self.share.release(found.owner)

    def _expire(self, now: float) -> None:
        """Forget the sessions unused for ``idle_seconds``, oldest first (O(1)
        per call, amortized)."""
        horizon = now - self.idle_seconds
        while self._sessions:
            session_id, found = next(iter(self._sessions.items()))
            if found.used > horizon:
                return
            self.forget(session_id)
