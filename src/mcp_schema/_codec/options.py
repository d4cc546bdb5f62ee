"""The decode options, travelling as one frozen value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

NO_EXTENSIONS: frozenset[str] = frozenset()


class DecodeOptions(NamedTuple):
    """What the caller knows about a message (see `mcp_schema.codec.decode`).

    A named tuple rather than a frozen dataclass: one is built per decoded
    message, and a tuple is built in a third of the time.
    """

    version: str | None = None
    method: str | None = None
    headers: Mapping[str, str] | None = None
    extensions: frozenset[str] = NO_EXTENSIONS
    allow_unknown_methods: bool = False
    assume_complete: bool = False
