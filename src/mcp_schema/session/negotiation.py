"""Which version a session speaks: the server's answer to ``initialize``, the
client's offer and its check of the answer, and the refusals that name the
versions a session serves. The version a message is read in is the
pipeline's decision (`mcp_schema._codec.route`), fed the session's.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from mcp_schema.errors import UnsupportedProtocolVersionError, clip, quote
from mcp_schema.negotiation import handshake_answer
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

SERVED_BY: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "resources/list": ("resources",),
    "resources/read": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "completion/complete": ("completions",),
    "logging/setLevel": ("logging",),
}
"""The server capability (a path into ``ServerCapabilities``) each client request needs."""


def capability_of(method: str) -> tuple[str, ...] | None:
    """The server capability ``method`` needs, if any."""
    return SERVED_BY.get(method)


def session_unsupported(
    requested: object, versions: Sequence[str]
) -> UnsupportedProtocolVersionError:
    """-32022 for ``requested``, listing the versions this session serves, newest first."""
    shown = clip(requested) if isinstance(requested, str) else quote(requested)
    return UnsupportedProtocolVersionError(
        f"Unsupported protocol version: {shown} (this session serves "
        f"{', '.join(reversed(versions))})",
        requested=shown,
        supported=tuple(reversed(versions)),
    )


def chosen_handshake_version(requested: object, versions: Collection[str]) -> str:
    """The ``protocolVersion`` a server answers ``initialize`` with: the
    client's when it serves it, else its newest handshake-era one; -32022
    when it serves none (a stateless-only server)."""
    served = [v for v in HANDSHAKE_VERSIONS if v in versions]
    if not served:
        raise session_unsupported(requested, sorted(versions))
    return handshake_answer(requested, served)


def offered_handshake_version(versions: Collection[str]) -> str:
    """The version a client offers in ``initialize``: its newest handshake-era one."""
    served = [v for v in HANDSHAKE_VERSIONS if v in versions]
    if not served:
        raise ValueError("this client speaks no handshake-era version")
    return served[-1]


def newest_stateless(offered: object, versions: Collection[str]) -> str | None:
    """The newest stateless-era version both a ``server/discover`` answer lists and this client speaks."""
    if not isinstance(offered, list):
        return None
    mutual = [v for v in STATELESS_VERSIONS if v in versions and v in offered]
    return mutual[-1] if mutual else None
