"""`Caller`: who sent a request, as the front door established it once.

The front door reads it at the edge (the verified token's principal, and the
client's address, taken from ``Forwarded``/``X-Forwarded-For`` only behind a
configured trusted proxy) and passes it on as data: to the handler's context,
to the tables a client can fill (each keeps a share per `Caller.key`), and
across replicas when a request is forwarded to its session's holder, so no
replica reads a token or a forwarding header a second time.

A caller never holds a token.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_schema.auth.principal import Principal

__all__ = ["ANONYMOUS", "SCOPE_KEY", "Caller", "caller_in", "principal_in"]

SCOPE_KEY = "mcp_schema.caller"
"""Where a front door that hands a request on as ASGI (the gateway to its
bridges) puts the `Caller` it admitted, in the request's scope."""


@dataclass(frozen=True, slots=True)
class Caller:
    """A request's sender.

    * ``principal``: the verified identity (`mcp_schema.auth.Principal.name`,
      or what an `Endpoint`'s ``principal`` hook names), None without one;
    * ``address``: the client's IP address, None where the server does not say;
    * ``verified``: the verified token's `mcp_schema.auth.Principal` (its
      scopes and expiry, for per-tool checks), None without authorization.
    """

    principal: str | None = None
    address: str | None = None
    verified: Principal | None = field(default=None, compare=False, repr=False)
    key: str = field(init=False, compare=False, repr=False)
    """What shares are counted by: the principal where there is one, else
    the address (the two kinds never collide). Read for every request (its
    share), so made once, with the caller (most often one of a cached few)."""

    def __post_init__(self) -> None:
        if self.principal is not None:
            key = "principal " + self.principal
        else:
            key = "address " + (self.address or "unknown")
        object.__setattr__(self, "key", key)  # frozen: set once, here

    @property
    def expires_at(self) -> float | None:
        """When the token expires (seconds since the epoch), None when it
        does not say or there is none: what the caller's streams end at."""
        return None if self.verified is None else self.verified.expires_at


ANONYMOUS = Caller()
"""A caller with neither principal nor address (a sans-IO call that names none)."""


def caller_in(scope: Mapping[str, Any]) -> Caller | None:
    """The `Caller` a front door put in an ASGI ``scope`` (`SCOPE_KEY`), or None."""
    found = scope.get(SCOPE_KEY)
    return found if isinstance(found, Caller) else None


def principal_in(scope: Mapping[str, Any]) -> str | None:
    """The principal of the `Caller` in ``scope`` (`caller_in`), or None."""
    caller = caller_in(scope)
    return None if caller is None else caller.principal
