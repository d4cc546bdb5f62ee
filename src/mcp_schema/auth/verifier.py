"""What a token check is: the `TokenVerifier` protocol, the two ways it fails
(`InvalidToken`, `VerifierUnavailable`), and the reading of claims both kinds
of verifier share (a JWT's, `mcp_schema.auth.jwt_verifier`, and an
introspection answer's, `mcp_schema.auth.introspect`) into a `Principal`.

A failure says why in words of this module's own, never the token's text or
a claim's: a token is never logged, reported or kept in an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from mcp_schema.auth.principal import MAX_NAME, MAX_SCOPES, Principal

__all__ = [
    "InvalidToken",
    "TokenVerifier",
    "VerifierUnavailable",
    "check_audience",
    "check_times",
    "principal_of",
    "scope_list",
]

# RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
SCOPE_TOKEN = re.compile(r"[!#-\[\]-~]{1,128}")
_NAME = re.compile(rf"[^\x00-\x1f\x7f]{{1,{MAX_NAME}}}")


class InvalidToken(Exception):
    """The token is not one this resource server accepts (401
    ``invalid_token``); the message is this package's own words."""


class VerifierUnavailable(Exception):
    """The token could not be checked: the authorization server (its
    metadata, keys or introspection endpoint) did not answer as it must
    (503: the token may be good)."""


class TokenVerifier(Protocol):
    """Checks an access token for one resource server.

    ``verify`` returns the token's `Principal`, or raises `InvalidToken` or
    `VerifierUnavailable` (nothing else); ``cache_seconds`` bounds how long
    the resource server may take a verified token's principal again without
    asking (never past its ``expires_at``)."""

    cache_seconds: float

    async def verify(self, token: str) -> Principal: ...


def scope_list(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token grants: ``scope``, space-separated (RFC 9068,
    RFC 7662), or ``scp``, a list or a string (as some providers write it)."""
    raw = claims.get("scope", claims.get("scp"))
    if raw is None:
        return frozenset()
    if isinstance(raw, str):
        items: list[object] = list(raw.split(" ", MAX_SCOPES))
    elif isinstance(raw, list):
        items = list(raw)
    else:
        raise InvalidToken("the token's scope is not a string")
    scopes: set[str] = set()
    for item in items:
        if item == "":
            continue  # two spaces in a row
        if not isinstance(item, str) or not SCOPE_TOKEN.fullmatch(item):
            raise InvalidToken("the token's scope is not a list of scope tokens")
        scopes.add(item)
    if len(scopes) > MAX_SCOPES:
        raise InvalidToken(f"the token grants more than {MAX_SCOPES} scopes")
    return frozenset(scopes)


def check_audience(claims: Mapping[str, Any], resource: str) -> None:
    """`InvalidToken` unless ``aud`` names ``resource`` (RFC 8707; exact)."""
    aud = claims.get("aud")
    named = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if resource not in named:
        raise InvalidToken("the token was not issued for this resource")


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise ValueError(name)
        return float(value)
    except (ValueError, OverflowError):  # NaN, or an int past any float
        raise InvalidToken(f"the token's {name} is not a number") from None


def check_times(claims: Mapping[str, Any], now: float, leeway: float) -> None:
    """`InvalidToken` when ``exp`` has passed or ``nbf`` is yet to come,
    each allowed ``leeway`` seconds of clock skew."""
    expires, starts = _number(claims, "exp"), _number(claims, "nbf")
    if expires is not None and expires <= now - leeway:
        raise InvalidToken("the token has expired")
    if starts is not None and starts > now + leeway:
        raise InvalidToken("the token is not valid yet")


def principal_of(claims: Mapping[str, Any], issuer: str) -> Principal:
    """The `Principal` of checked ``claims`` (signature or introspection,
    issuer, audience and times already checked) from ``issuer``.

    A sender-constrained token (``cnf``: DPoP or mutual TLS) is refused: this
    resource server checks no proof of possession, and taking one as a bearer
    token would let whoever holds a copy use it."""
    if "cnf" in claims:
        raise InvalidToken("the token is sender-constrained (cnf), which is not supported")
    subject, client_id = claims.get("sub"), claims.get("client_id")
    for value in (subject, client_id):
        if value is not None and not (isinstance(value, str) and _NAME.fullmatch(value)):
            raise InvalidToken(f"the token's sub or client_id is not a name of 1 to {MAX_NAME}")
    if subject is None and client_id is None:
        raise InvalidToken("the token names no subject and no client")
    return Principal(
        issuer=issuer,
        subject=subject,
        client_id=client_id,
        scopes=scope_list(claims),
        expires_at=_number(claims, "exp"),
        claims=MappingProxyType(dict(claims)),
    )
