"""Shares: every table a client can fill holds at most so many entries per
caller, under a bound for all (hand-written runtime module, sans-IO).

A table a client fills by asking (handshake-era sessions, listens, the
forwarding slots of a cluster, live tasks, requests whose answer is
awaited, the stdio gateway's children) keeps one `Share`. Each entry is
counted under the key of the caller that made it (`mcp_schema.http.caller.Caller.key`:
the principal where there is one, else the client's address), and the
share refuses a new entry when that key holds ``per_key`` of them, or when
the table holds ``total``. ``per_key`` is well under ``total``, so one
caller never fills the table alone, and a refusal never takes anything from
another caller: no table evicts a live entry to make room.

A refusal is a `ShareExceededError`: JSON-RPC code `SHARE_EXCEEDED`
(-31429, outside the range JSON-RPC and MCP reserve, as the specification
asks of a code it does not define), with ``data`` naming the table and the
seconds to wait (``{"table": "sessions", "retryAfter": 5}``); over HTTP it
is status 429 with ``Retry-After`` (`mcp_schema.http.rules.too_many`),
answering the request's id.

O(1) per acquire and release; not thread-safe (one event loop), per
process: every replica keeps its own shares. A share its owner gave a
telemetry (`Share.observe`) counts each entry granted and each refusal, by
table name only (`mcp_schema.telemetry.Telemetry.count_share`): the key is
never recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_schema._args import check
from mcp_schema.errors import McpError

if TYPE_CHECKING:
    from mcp_schema.telemetry import Telemetry

__all__ = ["RETRY_AFTER", "SHARE_EXCEEDED", "Share", "ShareExceededError"]

SHARE_EXCEEDED = -31429
"""The JSON-RPC code of a refusal for a full share (429 echoed; outside
-32768..-32000, which JSON-RPC and MCP keep for their own codes)."""

RETRY_AFTER = 5
"""Seconds a refused client is told to wait, by default (``Retry-After``)."""


class ShareExceededError(McpError):
    """-31429: the caller's share of a table, or the table, is full; try
    again after ``retry_after`` seconds."""

    code = SHARE_EXCEEDED
    default_message = "Too many requests"

    def __init__(self, message: str | None = None, *, table: str, retry_after: int) -> None:
        super().__init__(message, {"table": table, "retryAfter": retry_after})
        self.table, self.retry_after = table, retry_after


def _count(value: object, name: str) -> int:
    check(value, int, name)
    assert isinstance(value, int)
    if value < 1:
        raise ValueError(f"{name} must be positive, not {value!r}")
    return value


class Share:
    """The bound of one table (``name``, as refusals name it): at most
    ``per_key`` entries per key, ``total`` in all (``per_key`` at most
    ``total``; by default a tenth of it, so that ten callers at least are
    served at once). A key of None is counted in the total only (a caller the
    transport cannot tell apart from the others: stdio's one client)."""

    __slots__ = ("_held", "_size", "_unkeyed", "name", "per_key", "telemetry", "total")

    retry_after = RETRY_AFTER
    """Seconds a refused caller is told to wait: entries end as their
    clients finish, so a short wait, the same for every table."""

    def __init__(self, name: str, *, total: int, per_key: int | None = None) -> None:
        self.name = name
        self.total = _count(total, f"the bound on {name}")
        if per_key is None:
            per_key = max(1, self.total // 10)
        self.per_key = _count(per_key, f"the bound on {name} per caller")
        if self.per_key > self.total:
            raise ValueError(
                f"the bound on {name} per caller ({per_key}) must not exceed the bound on "
                f"{name} ({total})"
            )
        self._held: dict[str, int] = {}
        self._size = 0
        self._unkeyed = 0  # the entries of key None
        self.telemetry: Telemetry | None = None
        """Where grants and refusals are counted (`observe`), or None."""

    def observe(self, telemetry: Telemetry | None) -> None:
        """Count grants and refusals to ``telemetry`` (its owner's), unless
        one was given before (a share several owners hold is counted once)."""
        if self.telemetry is None:
            self.telemetry = telemetry

    def __len__(self) -> int:
        return self._size

    def held(self, key: str | None) -> int:
        """The entries ``key`` holds."""
        return 0 if key is None else self._held.get(key, 0)

    def keys(self) -> int:
        """How many keys hold an entry."""
        return len(self._held)

    def room(self, key: str | None) -> bool:
        """Whether `acquire` would succeed for ``key`` (nothing changes)."""
        return self._size < self.total and self.held(key) < self.per_key

    def acquire(self, key: str | None) -> bool:
        """Count one more entry of ``key``; False, and nothing counted, when
        its share or the table is full."""
        if not self.room(key):
            return False
        if key is None:
            self._unkeyed += 1
        else:
            self._held[key] = self._held.get(key, 0) + 1
        self._size += 1
        telemetry = self.telemetry
        if telemetry is not None and telemetry.active:
            telemetry.count_share(self.name, True)
        return True

    def take(self, key: str | None) -> None:
        """`acquire`, or its refusal raised (`ShareExceededError`)."""
        if not self.acquire(key):
            raise self.refused(key)

    def release(self, key: str | None) -> None:
        """One entry of ``key`` is gone (one it does not hold: nothing changes)."""
        if key is None:
            if self._unkeyed == 0:
                return
            self._unkeyed -= 1
        else:
            held = self._held.get(key, 0)
            if held == 0:
                return
            if held == 1:
                del self._held[key]
            else:
                self._held[key] = held - 1
        self._size -= 1

    def refused(self, key: str | None) -> ShareExceededError:
        """The refusal of one more entry for ``key`` (which bound it met; the
        key itself is never named: it may be a principal or an address).
        Counted as a refusal: each caller of this method refuses the entry
        (an `acquire` that fails is not one, when room is made and it is tried again)."""
        telemetry = self.telemetry
        if telemetry is not None and telemetry.active:
            telemetry.count_share(self.name, False)
        if self.held(key) >= self.per_key:
            why = f"this client holds {self.per_key:,} {self.name}, the most one may"
        else:
            why = f"the server holds {self.total:,} {self.name}, the most it may"
        return ShareExceededError(
            f"Too many requests: {why}; try again in {self.retry_after} s",
            table=self.name,
            retry_after=self.retry_after,
        )
