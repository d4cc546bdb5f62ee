"""The compiled protocol versions, read from the generated registry
(hand-written runtime module): which versions exist, their eras, the default
for messages that name none, and the extensions of each."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_schema._args import check, strings
from mcp_schema.errors import UnsupportedProtocolVersionError, clip, quote
from mcp_schema.registry import COMPILED
from mcp_schema.tables import CompiledVersion

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DEFAULT_VERSION",
    "HANDSHAKE_VERSIONS",
    "PROTOCOL_VERSION_KEY",
    "STATELESS_VERSIONS",
    "SUPPORTED_VERSIONS",
    "TASKS_EXTENSION",
    "extensions_of",
    "protocol",
    "unsupported",
    "version_of",
]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
"""The ``params._meta`` member a stateless-era request names its version in."""

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The id of the official Tasks extension."""

_CORE: dict[str, CompiledVersion] = {c.version: c for c in COMPILED if c.extension is None}
_EXTENSIONS: dict[str, dict[str, CompiledVersion]] = {}
for _entry in COMPILED:
    if _entry.extension is not None:
        _EXTENSIONS.setdefault(_entry.version, {})[_entry.extension] = _entry

SUPPORTED_VERSIONS: tuple[str, ...] = tuple(sorted(_CORE))
"""Protocol versions this release has models for, oldest first."""

HANDSHAKE_VERSIONS: tuple[str, ...] = tuple(
    v for v in SUPPORTED_VERSIONS if _CORE[v].era == "handshake"
)
STATELESS_VERSIONS: tuple[str, ...] = tuple(
    v for v in SUPPORTED_VERSIONS if _CORE[v].era == "stateless"
)

SUPPORTED: frozenset[str] = frozenset(SUPPORTED_VERSIONS)
"""`SUPPORTED_VERSIONS` as a set, for membership tests on every message."""
STATELESS: frozenset[str] = frozenset(STATELESS_VERSIONS)

DEFAULT_VERSION: str = HANDSHAKE_VERSIONS[-1]
"""Used when a message names no version and the caller gives none: only
handshake-era traffic omits it (its version was negotiated by ``initialize``),
and the newest handshake-era version reads the others' messages."""


def protocol(version: str) -> CompiledVersion | None:
    """The compiled version, or None when this release has no models for it."""
    check(version, str, "version")
    return _CORE.get(version)


def extensions_of(version: str) -> dict[str, CompiledVersion]:
    """The compiled extensions of ``version``, by extension id."""
    check(version, str, "version")
    return _EXTENSIONS.get(version, {})


_PACKAGES: dict[str, CompiledVersion] = {c.package: c for c in COMPILED}


def version_of(model: type) -> CompiledVersion | None:
    """The compiled version (or extension) whose models module defines ``model``."""
    check(model, type, "model")
    return _PACKAGES.get(model.__module__.rpartition(".")[0])


def unsupported(
    requested: object, why: str = "", *, supported: Sequence[str] = SUPPORTED_VERSIONS
) -> UnsupportedProtocolVersionError:
    """The -32022 for ``requested``, listing ``supported`` (default: every
    supported version); the one place the error is built.

    ``requested`` may be peer text of any size: message and data carry it
    escaped and cut (a string as itself, anything else as JSON).
    """
    check(why, str, "why")
    listed = strings(supported, "supported")
    shown = clip(requested) if isinstance(requested, str) else quote(requested)
    return UnsupportedProtocolVersionError(
        f"Unsupported protocol version: {shown}{why}", requested=shown, supported=listed
    )
