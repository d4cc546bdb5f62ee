"""The requests of one id space awaiting their answer, by id, and the two
refusals every such table makes: an id already in flight, and a full table.

One table serves the `Correlator` (one per requesting peer) and the
sessions (the peer's requests in flight, and their own awaiting answers),
so both refuse a peer's request with the same -32600 and the same words.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from mcp_schema._codec.messages import RequestIdValue
from mcp_schema._codec.route import IdKey, id_key
from mcp_schema.errors import InvalidRequestError, quote

V = TypeVar("V")


def already_in_flight(rid: RequestIdValue) -> InvalidRequestError:
    """-32600 for a request whose id is pending: the pending one is kept."""
    return InvalidRequestError(
        f"Invalid Request: id {quote(rid)} is already in flight; the pending request is kept",
        {"id": rid},
    )


class Pending(Generic[V]):
    """Values by request id (``"1"`` and ``1`` apart), at most ``limit`` of them."""

    __slots__ = ("_table", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._table: dict[IdKey, V] = {}

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, key: IdKey) -> bool:
        return key in self._table

    def __iter__(self) -> Iterator[IdKey]:
        return iter(self._table)

    @property
    def full(self) -> bool:
        return len(self._table) >= self.limit

    def check(self, rid: RequestIdValue) -> None:
        """-32600 (`InvalidRequestError`, carrying the id) when ``rid`` is pending
        already or the table is full."""
        if id_key(rid) in self._table:
            raise already_in_flight(rid)
        if len(self._table) >= self.limit:
            raise InvalidRequestError(
                f"Invalid Request: {len(self._table):,} requests already in flight "
                f"(the limit is {self.limit:,})",
                {"id": rid},
            )

    def admit(self, rid: RequestIdValue, value: V) -> None:
        """Hold ``value`` for ``rid``, after `check` (which raises, changing nothing)."""
        key = id_key(rid)
        if key in self._table or len(self._table) >= self.limit:
            self.check(rid)  # refused: in the words of the one check
        self._table[key] = value

    def get(self, rid: RequestIdValue) -> V | None:
        return self._table.get(id_key(rid))

    def pop(self, rid: RequestIdValue) -> V | None:
        return self._table.pop(id_key(rid), None)
