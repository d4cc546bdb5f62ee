"""`Refresher`: a value fetched from an authorization server (its keys, its
introspection endpoint), fetched again on demand but at most once per
``every`` seconds, each fetch bounded by ``seconds``, and shared by every
request that asks while it runs: however many requests ask, the
authorization server sees one fetch per interval."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from mcp_schema.auth.verifier import VerifierUnavailable

__all__ = ["Refresher"]

T = TypeVar("T")


class Refresher(Generic[T]):
    """``value``: what ``load`` last gave (None before it ever did);
    ``loaded_at``: when, by ``clock``."""

    def __init__(
        self,
        load: Callable[[], Awaitable[T]],
        *,
        every: float,
        seconds: float,
        clock: Callable[[], float],
    ) -> None:
        self._load, self.every, self.seconds, self._clock = load, every, seconds, clock
        self.value: T | None = None
        self.loaded_at = 0.0
        self._tried_at: float | None = None
        self._loading: asyncio.Future[T] | None = None

    async def refresh(self) -> None:
        """Load again, or join the load under way, unless one began less
        than ``every`` seconds ago. A failure (`VerifierUnavailable`, or no
        answer within ``seconds``) keeps the value held."""
        if self._loading is None:
            now = self._clock()
            if self._tried_at is not None and now - self._tried_at < self.every:
                return
            self._tried_at = now
            self._loading = asyncio.ensure_future(asyncio.wait_for(self._load(), self.seconds))
            self._loading.add_done_callback(self._loaded)
        try:
            await asyncio.shield(self._loading)
        except (VerifierUnavailable, asyncio.TimeoutError):
            pass  # told by `value` (None, or the one held)

    def _loaded(self, loading: asyncio.Future[T]) -> None:
        self._loading = None
        if not loading.cancelled() and loading.exception() is None:
            self.value, self.loaded_at = loading.result(), self._clock()
