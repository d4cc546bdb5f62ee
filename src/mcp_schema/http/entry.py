"""Where a request's `Caller` is made, once, as it enters an ASGI app.

Until the front door verifies tokens (and reads forwarding headers from
trusted proxies alone), a caller is what the application's own hook names
(`Endpoint`'s ``principal``, given the request's headers) and the client
address of the ASGI scope. Every table a client can fill counts its share
by this caller's key (`mcp_schema.shares`); nothing else builds one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mcp_schema.http.caller import Caller

__all__ = ["PrincipalHook", "address_of", "caller_of"]

PrincipalHook = Callable[[Mapping[str, str]], "str | None"]
"""What names a request's principal from its headers (lower-case names)."""

_MAX_ADDRESS = 64  # longer than any IP address text (an IPv6 one with a zone is < 64)


def caller_of(
    client: object, received: Mapping[str, str], principal: PrincipalHook | None = None
) -> Caller:
    """The caller of a request: ``principal(received)`` (when there is a hook)
    and `address_of` the ASGI scope's ``client``."""
    named = None if principal is None else principal(received)
    return Caller(named if isinstance(named, str) else None, address_of(client))


def address_of(client: object) -> str | None:
    """The host of an ASGI scope's ``client`` (``(host, port)``; None: not known)."""
    if isinstance(client, (tuple, list)) and client:
        host = client[0]
        if isinstance(host, str) and 0 < len(host) <= _MAX_ADDRESS:
            return host
    return None
