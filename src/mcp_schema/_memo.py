"""`kept`: how the runtime remembers what it read of the text peers send
(hand-written runtime module): the same header names and values come with
every request, each read once so.

A memo is a plain dict (a hit is one look-up, on the hot path), bounded in its
entries and in the size of each key, and emptied when full. Every peer reads
the same fact from the same text, so a memo holds no peer's state: one that
fills it costs the others only the reading it saved.
"""

from __future__ import annotations

from collections.abc import Sized
from typing import TypeVar

__all__ = ["kept"]

K = TypeVar("K", bound="Sized | None")
V = TypeVar("V")


LIMIT = 1024
"""Entries a memo holds by default: more header names and texts than peers send."""
LONGEST = 128
"""Characters (or bytes) of a key a memo keeps by default: longer than any
header name, version, method or tool name a client repeats."""


def kept(memo: dict[K, V], key: K, value: V, *, limit: int = LIMIT, longest: int = LONGEST) -> V:
    """``value``, remembered in ``memo`` under ``key`` when the key is at most
    ``longest`` characters (or bytes; None, the absence of a text, too), the
    memo emptied first when it holds ``limit`` entries."""
    if key is None or len(key) <= longest:
        if len(memo) >= limit:
            memo.clear()
        memo[key] = value
    return value
