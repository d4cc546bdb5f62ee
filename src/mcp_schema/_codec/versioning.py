"""The one place a protocol version is decided: which version a message is
read in, and which one each side of ``initialize`` or ``server/discover``
takes. Pure: it knows only the versions of `mcp_schema.versions`, so the
codec's readers (`route`, the `Correlator`) and the sessions (through
`mcp_schema.negotiation`) ask the same functions.

``served`` is the versions a session speaks; None is a reader bound to no
session's list (`decode`, a `Correlator`): every supported version, refused
with the plain -32022. Every refusal is -32022 built by `versions.unsupported`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from mcp_schema.errors import UnsupportedProtocolVersionError
from mcp_schema.versions import (
    DEFAULT_VERSION,
    HANDSHAKE_VERSIONS,
    STATELESS_VERSIONS,
    SUPPORTED,
    unsupported,
)

NULL_VERSION = object()
"""What a message names when its version member is present but null."""


def handshake_answer(requested: object, served: Sequence[str]) -> str:
    """The version a server serving ``served`` (handshake-era versions,
    oldest first, at least one) answers ``initialize`` with: the client's
    when it is among them, else the newest."""
    if isinstance(requested, str) and requested in served:
        return requested
    return served[-1]


def not_served(
    requested: object, served: Collection[str] | None
) -> UnsupportedProtocolVersionError:
    """-32022 for ``requested``, listing the versions a session serves, newest
    first (None: every supported version, without naming a session)."""
    shown = None if requested is NULL_VERSION else requested
    if served is None:
        return unsupported(shown)
    newest_first = sorted(served, reverse=True)
    return unsupported(
        shown, f" (this session serves {', '.join(newest_first)})", supported=newest_first
    )


def read_version(
    named: object,
    method: object,
    negotiated: str | None,
    served: Collection[str] | None = None,
    header: str | None = None,
) -> str:
    """The version a peer's request or notification is read in.

    ``named`` is what the message names in ``params._meta`` (None: nothing,
    `NULL_VERSION`: null), ``method`` its method (None for a reader that is
    no session, as `decode`: it gives ``initialize`` no rule of its own),
    ``negotiated`` the session's version (None before one is fixed, and
    always for a request served with no connection), ``header`` the
    ``MCP-Protocol-Version`` header's. After negotiation a message naming
    another version is -32022 (the session does not change); before it, an
    ``initialize`` that names none is read in the newest handshake-era
    version (it chooses the session's, whatever the header says), anything
    else in the version it names, else the header's, else the newest
    handshake-era one: -32022 unless served.
    """
    if negotiated is not None:
        if named is not None and named != negotiated:
            shown = None if named is NULL_VERSION else named
            raise unsupported(
                shown, f" (this session speaks {negotiated})", supported=(negotiated,)
            )
        return negotiated
    if method == "initialize" and named is None:
        return DEFAULT_VERSION  # it predates any session version
    requested = named if named is not None else header
    version = DEFAULT_VERSION if requested is None else requested
    if type(version) is not str or version not in (SUPPORTED if served is None else served):
        raise not_served(requested, served)
    return version


def answered_version(requested: object, served: Collection[str]) -> str:
    """The ``protocolVersion`` a server answers ``initialize`` with: the
    client's when it serves it, else its newest handshake-era one; -32022
    when it serves none (a stateless-only server)."""
    handshake = [v for v in HANDSHAKE_VERSIONS if v in served]
    if not handshake:
        raise not_served(requested, served)
    return handshake_answer(requested, handshake)


def offered_version(served: Collection[str]) -> str:
    """The version a client offers in ``initialize``: its newest handshake-era one."""
    handshake = [v for v in HANDSHAKE_VERSIONS if v in served]
    if not handshake:
        raise ValueError("this client speaks no handshake-era version")
    return handshake[-1]


def accepted_version(answered: object, served: Collection[str] | None) -> str:
    """The version a client takes from the server's ``initialize`` answer; -32022
    when it is not a handshake-era version the client speaks."""
    if (
        type(answered) is not str
        or answered not in HANDSHAKE_VERSIONS
        or (served is not None and answered not in served)
    ):
        raise not_served(answered, served)
    return answered


def discovered_version(offered: object, served: Collection[str]) -> str:
    """The newest stateless-era version both a ``server/discover`` answer lists
    and the client speaks; -32022 when there is none."""
    listed = offered if isinstance(offered, list) else []
    mutual = [v for v in STATELESS_VERSIONS if v in served and v in listed]
    if not mutual:
        raise not_served(offered, served)
    return mutual[-1]
