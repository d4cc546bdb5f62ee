"""`VerifiedTokens`: the principals of tokens verified lately, so that a
client sending the same token with each request costs one check per
``cache_seconds`` rather than one per request. Bounded (the least lately
used go first) and never past a token's expiry; a token is kept by its
SHA-256 digest alone, never as itself."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

from mcp_schema.auth.principal import Principal

__all__ = ["CACHED", "VerifiedTokens"]

CACHED = 10_000
"""Tokens kept by default."""


class VerifiedTokens:
    """At most ``size`` verified tokens' principals; ``clock``: the time
    (seconds since the epoch, as ``exp`` counts them)."""

    __slots__ = ("_clock", "_kept", "size")

    def __init__(self, size: int = CACHED, clock: Callable[[], float] = time.time) -> None:
        self.size, self._clock = size, clock
        self._kept: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, token: str) -> Principal | None:
        """The principal of ``token`` when it was verified and kept, and is
        still good."""
        digest = hashlib.sha256(token.encode()).digest()
        found = self._kept.get(digest)
        if found is None:
            return None
        principal, until = found
        if until <= self._clock():
            del self._kept[digest]
            return None
        self._kept.move_to_end(digest)
        return principal

    def put(self, token: str, principal: Principal, seconds: float) -> None:
        """Keep ``principal``, of ``token``, for ``seconds`` at most (never
        past its ``expires_at``)."""
        if self.size < 1 or seconds <= 0:
            return
        until = self._clock() + seconds
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        digest = hashlib.sha256(token.encode()).digest()
        self._kept[digest] = (principal, until)
        self._kept.move_to_end(digest)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
