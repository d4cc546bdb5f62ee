"""`CredentialSource`: how this package, acting as a client (the gateway's
upstream links and bridges, `mcp_schema.http.client`), gets the
``Authorization`` it sends. A front door never passes on the token its own
client presented: the specification forbids token passthrough
(https://modelcontextprotocol.io/specification/2026-07-28/basic/security_best_practices).

It lives outside `mcp_schema.auth` so that it needs no extra; the sources that reach an authorization server
(client credentials) live beside the OAuth client.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["CredentialSource"]


@runtime_checkable
class CredentialSource(Protocol):
    """Where the credentials of an outgoing request come from."""

    async def authorization(self) -> str | None:
        """The ``Authorization`` header value to send (``"Bearer …"``), or
        None to send none."""
        ...

    def rejected(self, authorization: str) -> None:
        """The upstream refused ``authorization`` (401): forget it, so the
        next `authorization` gets a fresh one where the source can."""
        ...
