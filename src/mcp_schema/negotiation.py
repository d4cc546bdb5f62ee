"""Protocol version negotiation for both eras (hand-written runtime module):
the one place a version is decided.

Handshake era (`HANDSHAKE_VERSIONS`): the client offers a version in
``initialize``; the server answers with that version when it supports it,
otherwise with the newest one it does (`initialize_version`), and the client
decides whether it can go on. Stateless era (`STATELESS_VERSIONS`): every request
names its version, and ``server/discover`` tells a client which versions the
server accepts (`discover_result`).

A session asks `read_version` which version a message of the peer is read
in, given what it has negotiated (nothing, for a request served with no
connection); every refusal is -32022 built by `versions.unsupported`, listing
what the session serves.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check, strings
from mcp_schema._codec.route import NULL_VERSION
from mcp_schema._codec.wire import wire_value
from mcp_schema.errors import UnsupportedProtocolVersionError
from mcp_schema.versions import (
    DEFAULT_VERSION,
    HANDSHAKE_VERSIONS,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    protocol,
    unsupported,
)

if TYPE_CHECKING:
    # The newest stateless-era version's: the one discover_result builds.
    from mcp_schema.registry import DiscoverResult

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

__all__ = ["discover_result", "initialize_version"]


def initialize_version(requested: object) -> str:
    """The ``protocolVersion`` of the ``initialize`` result answering ``requested``.

    The client's version when it is a supported handshake-era version, else
    the newest supported handshake-era version (a stateless-era version is
    never negotiated by ``initialize``). ``requested`` is whatever the
    client sent, of any JSON type.
    """
    return handshake_answer(requested, HANDSHAKE_VERSIONS)


def handshake_answer(requested: object, served: Sequence[str]) -> str:
    """The version a server serving ``served`` (handshake-era versions,
    oldest first, at least one) answers ``initialize`` with: the client's
    when it is among them, else the newest."""
    if isinstance(requested, str) and requested in served:
        return requested
    return served[-1]


def not_served(requested: object, served: Collection[str]) -> UnsupportedProtocolVersionError:
    """-32022 for ``requested``, listing the versions a session serves, newest first."""
    newest_first = sorted(served, reverse=True)
    shown = None if requested is NULL_VERSION else requested
    return unsupported(
        shown, f" (this session serves {', '.join(newest_first)})", supported=newest_first
    )


def read_version(
    named: object,
    method: object,
    negotiated: str | None,
    served: Collection[str],
    header: str | None = None,
) -> str:
    """The version a session reads a peer's request or notification in.

    ``named`` is what the message names in ``params._meta`` (None: nothing,
    `NULL_VERSION`: null), ``negotiated`` the session's version (None before
    one is fixed, and always for a request served with no connection),
    ``served`` the versions the session speaks, ``header`` the
    ``MCP-Protocol-Version`` header's. After negotiation a message naming
    another version is -32022 (the session does not change); before it,
    ``initialize`` is read in the newest handshake-era version (it chooses
    the session's), anything else in the version it names, else the
    header's, else the newest handshake-era one: -32022 unless served.
    """
    if negotiated is not None:
        if named is not None and named != negotiated:
            shown = None if named is NULL_VERSION else named
            raise unsupported(
                shown, f" (this session speaks {negotiated})", supported=(negotiated,)
            )
        return negotiated
    if method == "initialize":
        return DEFAULT_VERSION  # it predates any session version
    requested = named if named is not None else header
    version = DEFAULT_VERSION if requested is None else requested
    if type(version) is not str or version not in served:
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


def accepted_version(answered: object, served: Collection[str]) -> str:
    """The version a client takes from the server's ``initialize`` answer; -32022
    when it is not a handshake-era version the client speaks."""
    if type(answered) is not str or answered not in served or answered not in HANDSHAKE_VERSIONS:
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


def discover_result(
    capabilities: BaseModel | Mapping[str, Any],
    *,
    server_info: BaseModel | Mapping[str, Any] | None = None,
    instructions: str | None = None,
    ttl_ms: int = 0,
    cache_scope: Literal["private", "public"] = "private",
    versions: Iterable[str] | None = None,
) -> DiscoverResult:
    """The ``DiscoverResult`` (of the newest stateless-era version) announcing
    the versions this server speaks.

    ``versions`` defaults to every supported version, newest first: those of
    both eras, as a server serving both lists them (a client picks a
    stateless-era one from the list, or falls back to ``initialize``);
    naming one this package has no models for is a ``ValueError``.
    ``capabilities`` and ``server_info`` are models of any version or
    wire-shaped mappings; what the result refuses is a ``ValueError`` naming
    the member (never pydantic's own exception). The defaults ask nobody to
    cache: ``ttl_ms=0``, ``cache_scope="private"``.
    """
    check(instructions, str, "instructions", none=True)
    check(ttl_ms, int, "ttl_ms")
    check(cache_scope, str, "cache_scope")
    named = strings(versions, "versions", none=True)
    newest = protocol(STATELESS_VERSIONS[-1])
    assert newest is not None
    # Imported when used: the models of a version cost ~100 ms to import.
    result: type[DiscoverResult] = importlib.import_module(newest.package).DiscoverResult
    announced = list(reversed(SUPPORTED_VERSIONS)) if named is None else list(named)
    unknown = [v for v in announced if v not in SUPPORTED_VERSIONS]
    if unknown:
        raise ValueError(f"not a supported protocol version: {', '.join(map(str, unknown))}")
    wire: dict[str, Any] = {
        "resultType": "complete",
        "supportedVersions": announced,
        "capabilities": wire_value(capabilities, "capabilities"),
        "ttlMs": ttl_ms,
        "cacheScope": cache_scope,
    }
    if instructions is not None:
        wire["instructions"] = instructions
    if server_info is not None:
        wire["_meta"] = {SERVER_INFO_KEY: wire_value(server_info, "server_info")}
    try:
        return result.model_validate(wire)
    except ValidationError as exc:
        where = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise ValueError(f"not a valid DiscoverResult: {where}") from None
