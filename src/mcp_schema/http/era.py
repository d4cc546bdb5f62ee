"""`era_of`: which era a POSTed JSON-RPC message belongs to, decided once,
by one rule, for every front door (the `Endpoint`, the gateway's apps, the
exchange validator). The body is the one the front door parsed already;
the headers are the request's, by lower-case name.

In order:

1. a message naming a protocol version in ``params._meta`` is a
   stateless-era request, of that version (even one not served, or null:
   the caller refuses it, -32022);
2. else, one whose ``MCP-Protocol-Version`` names a version served per
   request, without ``Mcp-Session-Id`` and other than ``initialize``, is a
   stateless-era request of that version (its session then refuses the
   ``_meta`` it lacks, -32602);
3. else it is of the handshake era: ``initialize`` opens a session, and
   anything else belongs to the session ``Mcp-Session-Id`` names.

A header that disagrees with the body is for the session that reads them
to refuse (-32020), not for this decision.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from mcp_schema._codec.route import named_version
from mcp_schema.versions import STATELESS_VERSIONS

__all__ = ["Era", "era_of"]


class Era(NamedTuple):
    """What `era_of` found: whether the message is served statelessly, and
    the version it names there (None in the handshake era)."""

    stateless: bool
    version: object


HANDSHAKE = Era(False, None)
_SERVED = {version: Era(True, version) for version in STATELESS_VERSIONS}
"""The era of each version served per request, built once: most requests name one."""


def era_of(
    value: Mapping[str, Any],
    headers: Mapping[str, str],
    per_request: Collection[str] = STATELESS_VERSIONS,
) -> Era:
    """The era of ``value`` (a parsed JSON-RPC message) POSTed with
    ``headers``; ``per_request``: the versions served per request."""
    named = named_version(value)
    if named is not None:
        served = _SERVED.get(named) if type(named) is str else None
        return Era(True, named) if served is None else served
    header = headers.get("mcp-protocol-version")
    if (
        header is not None
        and header in per_request
        and "mcp-session-id" not in headers
        and value.get("method") != "initialize"
    ):
        return _SERVED.get(header) or Era(True, header)
    return HANDSHAKE
