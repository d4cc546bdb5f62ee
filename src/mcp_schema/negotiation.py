"""Protocol version negotiation for both eras (hand-written runtime module).

Handshake era (`HANDSHAKE_VERSIONS`): the client offers a version in
``initialize``; the server answers with that version when it supports it,
otherwise with the newest one it does (`initialize_version`), and the client
decides whether it can go on. Stateless era (`STATELESS_VERSIONS`): every request
names its version, and ``server/discover`` tells a client which versions the
server accepts (`discover_result`).

A session asks `read_version` which version a message of the peer is read
in, given what it has negotiated (nothing, for a request served with no
connection), and `answered_version`, `offered_version`, `accepted_version`
and `discovered_version` which one each side of a negotiation takes; every
refusal is -32022 built by `versions.unsupported`, listing what the session
serves. These decisions are made in ``mcp_schema._codec.versioning``, the one
place a version is decided, which the codec's readers (the ``Correlator``
among them) ask too: this module hands them on, and adds what needs models.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check, strings
from mcp_schema._codec.versioning import accepted_version as accepted_version
from mcp_schema._codec.versioning import answered_version as answered_version
from mcp_schema._codec.versioning import discovered_version as discovered_version
from mcp_schema._codec.versioning import handshake_answer
from mcp_schema._codec.versioning import offered_version as offered_version
from mcp_schema._codec.versioning import read_version as read_version
from mcp_schema._codec.wire import wire_value
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS, protocol

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
