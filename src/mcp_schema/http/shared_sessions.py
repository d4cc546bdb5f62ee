"""`BrokerSessions`: handshake-era sessions that every replica can find
(hand-written runtime module).

A session still lives where ``initialize`` made it: its `ServerSession` and
its open streams are objects of that process (`mcp_schema.http.sessions`).
What the other replicas need is where that is, so each session has a record
in the broker's key-value store: ``{prefix}{session id}`` holding the id of
the replica that holds it, for ``ttl`` seconds. The holder writes the record
before the client can learn the session id (`flush`, awaited by
`mcp_schema.http.forward.ClusterApp` before a response starts), rewrites the
records of its sessions every ``ttl / 3`` seconds (`refresh`), and deletes
a record once its session is terminated. A replica that dies stops
rewriting: its records expire ``ttl`` seconds later at most (and a replica
that finds nobody listening on the holder's channel forgets the record, but
right after an outage of the broker, when the holder may not have subscribed
again yet: `mcp_schema.http.forward.DEAF_SECONDS`). A request naming a
session held elsewhere is forwarded to the holder by `mcp_schema.http.forward`.

Redis restarted without persistence has lost every record. Each replica
also keeps a marker of its own in the store (``mcp-marker:{prefix}{replica}``),
checked every half second by `ClusterApp` (`revive`): a marker gone means
the store lost what it held, and the replica writes the records of all its
sessions again at once. A replica that finds no record for a session asks
the others before it answers 404 (`mcp_schema.http.forward`), so the
records lost between a restart and its detection cost no session.

The store's own methods are the synchronous ones an `Endpoint` calls, on
this replica's sessions (a `MemorySessions`); the broker is reached only by
the coroutines, each bounded by ``timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from mcp_schema._args import check
from mcp_schema.broker import Broker, BrokerError
from mcp_schema.http.forward_wire import EVERY, pack, reply, unpack
from mcp_schema.http.sessions import IDLE_SECONDS, MAX_SESSIONS, LiveSession, MemorySessions
from mcp_schema.shares import Share

__all__ = ["ASK_SECONDS", "RECORD_TTL", "BrokerSessions"]

ASK_SECONDS = 0.25
"""How long a replica that finds no record waits for a holder to say it holds the session."""

RECORD_TTL = 30.0
"""Seconds a session's record outlives the last rewrite by its holder."""

_MAX_ID = 128  # longer than any id this package mints (43 characters): never looked up
_MAX_ASKING = 64  # asks waiting at once; past that a missing record is an unknown session
_T = TypeVar("_T")


def positive_seconds(value: object, name: str) -> float:
    """``value``, a number of seconds above 0 (``TypeError``, ``ValueError`` otherwise)."""
    check(value, float, name)
    assert isinstance(value, (int, float))
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    return float(value)


class BrokerSessions:
    """A `mcp_schema.http.sessions.SessionStore` whose sessions are recorded
    in ``broker`` under ``prefix``, as held by the replica ``replica`` (a
    fresh random id when not given); at most ``max_sessions`` of them here,
    ``max_per_key`` per caller, each expiring ``idle_seconds`` unused (as
    `MemorySessions`)."""

    def __init__(
        self,
        broker: Broker,
        *,
        replica: str | None = None,
        ttl: float = RECORD_TTL,
        timeout: float = 5.0,
        prefix: str = "mcp-session:",
        max_sessions: int = MAX_SESSIONS,
        max_per_key: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(broker, Broker):
            raise TypeError(f"broker must be a Broker, not {type(broker).__name__}")
        check(replica, str, "replica", none=True)
        check(prefix, str, "prefix")
        if replica is not None and not 0 < len(replica) <= 64:
            raise ValueError("replica must have 1 to 64 characters")
        if len(prefix) > 128:
            raise ValueError("prefix must have at most 128 characters")
        self.broker = broker
        self.replica = replica or secrets.token_urlsafe(12)
        """The id of this replica, which its records name."""
        self.ttl = positive_seconds(ttl, "ttl")
        self.timeout = positive_seconds(timeout, "timeout")
        self.prefix = prefix
        self._local = MemorySessions(
            max_sessions,
            max_per_key=max_per_key,
            idle_seconds=idle_seconds,
            clock=clock,
            on_expire=self._expired,
        )
        self._added: set[str] = set()  # records not written yet
        self._removed: set[str] = set()  # records not deleted yet
        self._asking = 0

    # -- SessionStore: this replica's sessions ------------------------------------------

    def __len__(self) -> int:
        return len(self._local)

    def get(self, session_id: str) -> LiveSession | None:
        return self._local.get(session_id)

    def add(self, session: LiveSession) -> None:
        self._local.add(session)
        assert session.id is not None
        self._added.add(session.id)
        self._removed.discard(session.id)

    def remove(self, session_id: str) -> LiveSession | None:
        found = self._local.remove(session_id)
        if found is not None:
            self._added.discard(session_id)
            self._removed.add(session_id)
        return found

    def _expired(self, session_id: str) -> None:
        self._added.discard(session_id)
        self._removed.add(session_id)

    @property
    def share(self) -> Share:
        """The bound on this replica's sessions (`MemorySessions.share`)."""
        return self._local.share

    def close(self) -> None:
        self._removed.update(self._local.ids())
        self._added.clear()
        self._local.close()

    # -- the records ----------------------------------------------------------------------

    def _key(self, session_id: str) -> str:
        return self.prefix + session_id

    def unwritten(self, session_id: str) -> bool:
        """Whether ``session_id`` is held here and its record not written yet."""
        return session_id in self._added

    def drop(self, session_id: str) -> None:
        """Terminate ``session_id``, held here, whose record could not be
        written: its client is refused, and never learns the id."""
        live = self._local.remove(session_id)
        self._added.discard(session_id)
        if live is not None:
            live.close()

    def claim(self, session_id: str) -> bool:
        """Whether ``session_id`` is held here; if so its record is written
        again at the next `flush` (another replica found none)."""
        if self._local.get(session_id) is None:
            return False
        self._added.add(session_id)
        return True

    async def _bounded(self, work: Awaitable[_T]) -> _T:
        try:
            return await asyncio.wait_for(work, self.timeout)
        except asyncio.TimeoutError:
            raise BrokerError(f"the broker did not answer within {self.timeout:g} s") from None

    async def flush(self) -> None:
        """Write the records of the sessions added since, delete those of the
        sessions removed since (what is left to do on a failure stays to do)."""
        while self._added:
            session_id = next(iter(self._added))
            await self._bounded(self.broker.put(self._key(session_id), self._name(), self.ttl))
            self._added.discard(session_id)
        while self._removed:
            session_id = next(iter(self._removed))
            await self._bounded(self.broker.delete(self._key(session_id)))
            self._removed.discard(session_id)

    async def refresh(self) -> None:
        """`flush`, then rewrite the record of every session held here, and the marker."""
        await self.flush()
        for session_id in self._local.ids():
            await self._bounded(self.broker.put(self._key(session_id), self._name(), self.ttl))
        await self._bounded(self.broker.put(self._marker(), b"1", 3 * self.ttl))

    async def revive(self) -> bool:
        """Whether the store lost this replica's marker (Redis restarted and
        lost its keys); if so every record here, and the marker, is written
        again (`refresh`)."""
        if await self._bounded(self.broker.get(self._marker())) is not None:
            return False
        await self.refresh()
        return True

    def _marker(self) -> str:
        return "mcp-marker:" + self.prefix + self.replica

    async def holder(self, session_id: str) -> str | None:
        """The replica holding ``session_id`` by its record, or None (no record)."""
        if not _plausible(session_id):
            return None  # no id this package minted: no record to find
        found = await self._bounded(self.broker.get(self._key(session_id)))
        if found is None:
            return None
        try:
            return found.decode("utf-8")
        except UnicodeDecodeError:
            return None  # not a record of ours

    async def ask(self, session_id: str, patience: float = 0.0) -> str | None:
        """The replica that says it holds ``session_id``, asked on every
        replica's channel when no record names one; None when none answers
        within `ASK_SECONDS` (or too many asks wait already). With
        ``patience``, the seconds in which a holder may subscribe again
        after an outage, the question is asked again every `ASK_SECONDS`
        until they pass."""
        if not _plausible(session_id) or self._asking >= _MAX_ASKING:
            return None
        ask_id = secrets.token_urlsafe(16)
        question = pack({"t": "who", "f": ask_id, "s": session_id})
        loop = asyncio.get_running_loop()
        until = loop.time() + max(ASK_SECONDS, patience)
        self._asking += 1
        try:
            async with self.broker.subscribe(reply(ask_id), max_queued=8) as answers:
                message = None
                while message is None and (left := until - loop.time()) > 0:
                    heard = await self._bounded(self.broker.publish(EVERY, question))
                    if not heard and patience <= 0:
                        return None  # no replica listens (nor will: no outage)
                    try:
                        wait = min(ASK_SECONDS, left)
                        message = await asyncio.wait_for(answers.__anext__(), wait)
                    except asyncio.TimeoutError:
                        pass  # asked again while the patience lasts
                    except StopAsyncIteration:
                        return None
        finally:
            self._asking -= 1
        unpacked = None if message is None else unpack(message.data)
        holder = None if unpacked is None else unpacked[0].get("r")
        return holder if isinstance(holder, str) and 0 < len(holder) <= 64 else None

    def answer(self, question: dict[str, object]) -> bytes | None:
        """What to answer another replica asking who holds a session: that
        this replica does (its record is written again at the next `flush`),
        or None when it does not hold it."""
        session_id = question.get("s")
        if not isinstance(session_id, str) or not self.claim(session_id):
            return None
        return pack({"t": "here", "r": self.replica})

    async def forget(self, session_id: str) -> None:
        """Delete the record of ``session_id`` (its holder was found dead)."""
        await self._bounded(self.broker.delete(self._key(session_id)))

    def _name(self) -> bytes:
        return self.replica.encode("utf-8")


def _plausible(session_id: str) -> bool:
    return 0 < len(session_id) <= _MAX_ID and session_id.isascii()
