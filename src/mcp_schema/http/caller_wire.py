"""A `Caller` as `mcp_schema.http.forward` carries it to the replica holding
a session: the replica the client reached checked its token and read its
address, and tells the holder who it is, so the holder never sees the
token (``Authorization`` is never published to the broker) nor trusts a
forwarding header of its own.

On the wire a caller is a JSON object: ``principal``, ``address`` and, when
a token was verified, ``verified`` (its principal's issuer, subject,
client_id, scopes, expiry and claims: what a handler's per-tool checks
read, never the token), so the holder's gate (`mcp_schema.auth.Access`)
decides a scoped tool by the scopes the token granted. The holder believes
what its broker brings, as it believes the session records and tasks kept
there: the broker is the replicas' alone.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from mcp_schema.http.caller import Caller

__all__ = ["UNFORWARDED", "caller_of", "caller_wire"]

UNFORWARDED = frozenset(
    b"authorization proxy-authorization cookie forwarded x-forwarded-for".split()
)
"""Request header fields never published to the broker: the credentials
(checked where the client is) and the forwarding ones (read there into the
caller's address)."""


def caller_wire(caller: Caller) -> dict[str, Any]:
    """``caller`` as the JSON object the holder reads (`caller_of`)."""
    wire: dict[str, Any] = {"principal": caller.principal, "address": caller.address}
    verified = caller.verified
    if verified is not None:
        wire["verified"] = {
            "issuer": verified.issuer,
            "subject": verified.subject,
            "client_id": verified.client_id,
            "scopes": sorted(verified.scopes),
            "expires_at": verified.expires_at,
            "claims": dict(verified.claims),
        }
    return wire


def _optional(value: object, kinds: type | tuple[type, ...]) -> bool:
    return value is None or (isinstance(value, kinds) and not isinstance(value, bool))


def caller_of(wire: object) -> Caller | None:
    """The `Caller` a forwarded request names, or None when malformed."""
    if not isinstance(wire, dict):
        return None
    principal, address, verified = wire.get("principal"), wire.get("address"), wire.get("verified")
    if not (_optional(principal, str) and _optional(address, str)):
        return None
    if verified is None:
        return Caller(principal, address)
    if not isinstance(verified, dict):
        return None
    # Only a replica that checks tokens sends one: the auth extra is installed.
    from mcp_schema.auth.principal import Principal

    scopes, claims = verified.get("scopes"), verified.get("claims")
    fields = [verified.get(k) for k in ("issuer", "subject", "client_id", "expires_at")]
    if not (
        isinstance(fields[0], str)
        and all(_optional(v, str) for v in fields[1:3])
        and _optional(fields[3], (int, float))
        and isinstance(scopes, list)
        and all(isinstance(s, str) for s in scopes)
        and isinstance(claims, dict)
    ):
        return None
    try:
        found = Principal(
            fields[0], fields[1], fields[2], frozenset(scopes), fields[3], MappingProxyType(claims)
        )
    except ValueError:  # neither subject nor client_id
        return None
    return Caller(principal, address, found) if found.name == principal else None
