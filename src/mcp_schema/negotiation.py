"""Protocol version negotiation for both eras (hand-written runtime module).

Handshake era (`HANDSHAKE_VERSIONS`): the client offers a version in
``initialize``; the server answers with that version when it supports it,
otherwise with the newest one it does (`initialize_version`), and the client
decides whether it can go on. Stateless era (`STATELESS_VERSIONS`): every request
names its version, and ``server/discover`` tells a client which versions the
server accepts (`discover_result`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any, Literal

from mcp_schema._args import check, strings
from mcp_schema.base import McpModel
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, protocol

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

__all__ = ["discover_result", "initialize_version"]


def initialize_version(requested: object) -> str:
    """The ``protocolVersion`` of the ``initialize`` result answering ``requested``.

    The client's version when it is a supported handshake-era version, else
    the newest supported handshake-era version (a stateless-era version is
    never negotiated by ``initialize``). ``requested`` is whatever the
    client sent, of any JSON type.
    """
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return HANDSHAKE_VERSIONS[-1]


def discover_result(
    capabilities: Any,
    *,
    server_info: Any = None,
    instructions: str | None = None,
    ttl_ms: int = 0,
    cache_scope: Literal["private", "public"] = "private",
    versions: Iterable[str] | None = None,
) -> McpModel:
    """The ``DiscoverResult`` (of the newest stateless-era version) announcing
    what this package supports.

    ``versions`` defaults to every supported stateless-era version, newest
    first (a handshake-era client never sends ``server/discover``); naming
    one this package has no models for raises ``ValueError``.
    ``capabilities`` and ``server_info`` are models or wire-shaped mappings.
    The defaults ask nobody to cache: ``ttl_ms=0``, ``cache_scope="private"``.
    """
    check(instructions, str, "instructions", none=True)
    check(ttl_ms, int, "ttl_ms")
    check(cache_scope, str, "cache_scope")
    named = strings(versions, "versions", none=True)
    newest = protocol(STATELESS_VERSIONS[-1])
    assert newest is not None
    # Imported when used: the models of a version cost ~100 ms to import.
    result: type[McpModel] = importlib.import_module(newest.package).DiscoverResult
    announced = list(reversed(STATELESS_VERSIONS)) if named is None else list(named)
    unknown = [v for v in announced if v not in STATELESS_VERSIONS]
    if unknown:
        raise ValueError(f"not a supported stateless-era version: {', '.join(unknown)}")
    fields: dict[str, Any] = {
        "result_type": "complete",
        "supported_versions": announced,
        "capabilities": capabilities,
        "ttl_ms": ttl_ms,
        "cache_scope": cache_scope,
    }
    if instructions is not None:
        fields["instructions"] = instructions
    if server_info is not None:
        fields["meta"] = {SERVER_INFO_KEY: server_info}
    return result(**fields)
