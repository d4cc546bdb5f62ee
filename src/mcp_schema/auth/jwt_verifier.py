"""`JwtVerifier`: JWT access tokens (RFC 9068) checked against the keys of
the authorization server that issued them, as the specification requires
of a resource server
([Token Handling](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#token-handling),
[Access Token Privilege Restriction](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations#access-token-privilege-restriction)):

* the signature, by a key of the issuer's JWKS (`mcp_schema.auth.jwks`),
  the one the header's ``kid`` names, with the header's ``alg`` only when
  the allow-list has it (public-key algorithms only: never ``none``, never
  an HMAC, so never a public key taken for an HMAC secret) and the key fits it;
* ``iss``, the configured issuer, exactly;
* ``aud``, this server's canonical resource URI (RFC 8707): a token issued
  for another resource, or an ID token (whose audience is its client), is
  refused;
* ``exp`` (required) and ``nbf``, allowed ``leeway`` seconds of clock skew;
* ``typ``: ``at+jwt`` when ``at_jwt`` (RFC 9068 section 4), and never a type
  of another kind of JWT; no ``crit`` header parameter (none is understood);
* no ``cnf`` (a sender-constrained token: `mcp_schema.auth.verifier.principal_of`).

The JOSE work is PyJWT's (with ``cryptography``; the ``auth`` extra), never
this package's: the most widely used and reviewed JWT library of Python, the
one the official MCP Python SDK depends on too. It makes the caller name the
algorithms it accepts, binds a key built from a JWK to one algorithm (a
token naming another is refused), refuses key material that looks public
as an HMAC secret, checks the registered claims with a leeway, and enforces
minimum key sizes. (joserfc was the other candidate: as careful, with typed
keys, but far less deployed.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

import jwt
from jwt.types import Options

from mcp_schema._args import check, strings
from mcp_schema.auth.fetch import Fetcher, HttpFetcher
from mcp_schema.auth.jwks import ASYMMETRIC, MAX_KID, KeySource
from mcp_schema.auth.principal import Principal
from mcp_schema.auth.urls import canonical_resource, secure_url
from mcp_schema.auth.verifier import InvalidToken, principal_of

__all__ = ["LEEWAY", "JwtVerifier"]

LEEWAY = 30.0
"""Seconds of clock skew allowed to ``exp``, ``nbf`` and ``iat``."""

# typ values of an access token; a JWT without typ, or "JWT", is taken unless at_jwt.
_ACCESS = frozenset({"at+jwt", "application/at+jwt"})
_PLAIN = frozenset({"jwt", "application/jwt"})

# What PyJWT raised, in this package's words (its messages may quote claims).
_REASONS: tuple[tuple[type[jwt.PyJWTError], str], ...] = (
    (jwt.ExpiredSignatureError, "the token has expired"),
    (jwt.ImmatureSignatureError, "the token is not valid yet"),
    (jwt.InvalidAudienceError, "the token was not issued for this resource"),
    (jwt.InvalidIssuerError, "the token was issued by another authorization server"),
    (jwt.MissingRequiredClaimError, "the token lacks a required claim"),
    (jwt.InvalidSignatureError, "the token's signature does not verify"),
    (jwt.InvalidKeyError, "the token's key is not acceptable"),
)


def _reason(error: jwt.PyJWTError) -> str:
    return next(
        (why for kind, why in _REASONS if isinstance(error, kind)), "the token is not valid"
    )


class JwtVerifier:
    """A `mcp_schema.auth.verifier.TokenVerifier` of JWT access tokens from
    ``issuer`` for ``audience`` (the resource's canonical URI).

    * ``algorithms``: those a token may be signed with (a subset of `ASYMMETRIC`);
    * ``at_jwt``: require RFC 9068's ``typ`` (``at+jwt``);
    * ``jwks_uri``: the issuer's keys (None: found by discovery);
    * ``fetcher``: how the issuer is reached (None: an `HttpFetcher`);
    * ``refresh_seconds``, ``keys_max_age``: see `KeySource`;
    * ``cache_seconds``: how long a verified token may be taken again unchecked.
    """

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        algorithms: Collection[str] = ASYMMETRIC,
        leeway: float = LEEWAY,
        at_jwt: bool = False,
        jwks_uri: str | None = None,
        fetcher: Fetcher | None = None,
        refresh_seconds: float = 30.0,
        keys_max_age: float = 3600.0,
        cache_seconds: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = secure_url(issuer, "issuer")
        self.audience = canonical_resource(audience)
        allowed = frozenset(strings(algorithms, "algorithms") or ())
        if not allowed or not allowed <= ASYMMETRIC:
            raise ValueError(f"algorithms must be some of {sorted(ASYMMETRIC)}")
        for value, name in (
            (leeway, "leeway"),
            (refresh_seconds, "refresh_seconds"),
            (keys_max_age, "keys_max_age"),
            (cache_seconds, "cache_seconds"),
        ):
            check(value, float, name)
            if not 0 <= value < 366 * 86400:
                raise ValueError(f"{name} must be a number of seconds, not {value!r}")
        check(at_jwt, bool, "at_jwt")
        self.algorithms, self.leeway, self.at_jwt = allowed, float(leeway), at_jwt
        self.cache_seconds = float(cache_seconds)
        self._own = fetcher is None
        self.fetcher: Fetcher = fetcher or HttpFetcher()
        self.keys = KeySource(
            self.issuer,
            self.fetcher,
            algorithms=allowed,
            jwks_uri=None if jwks_uri is None else secure_url(jwks_uri, "jwks_uri", query=True),
            refresh_seconds=float(refresh_seconds),
            max_age=float(keys_max_age),
            clock=clock,
        )
        required = ["exp", "iss", "aud"]
        if at_jwt:
            required += ["sub", "client_id", "iat", "jti"]
        self._options: Options = {
            "require": required,
            "enforce_minimum_key_length": True,
        }
        self._jwt = jwt.PyJWT()

    def __repr__(self) -> str:
        return f"JwtVerifier(issuer={self.issuer!r}, audience={self.audience!r})"

    async def verify(self, token: str) -> Principal:
        """The token's principal; `InvalidToken` when it is refused (see the module),
        `mcp_schema.auth.verifier.VerifierUnavailable` when no keys could be had."""
        if token.count(".") != 2:
            raise InvalidToken("the token is not a signed JWT")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the token is not a JWT") from None
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken("the token's algorithm is not allowed")
        if not isinstance(kid, str) or not 0 < len(kid) <= MAX_KID:
            raise InvalidToken("the token names no key (kid)")
        self._check_type(header.get("typ"))
        if "crit" in header:
            raise InvalidToken("the token has critical header parameters")
        key = await self.keys.key(kid, alg)
        if key is None:
            raise InvalidToken("the token's key is not one of the authorization server's")
        try:
            decoded = self._jwt.decode_complete(
                token,
                key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options=self._options,
            )
        except jwt.PyJWTError as error:
            raise InvalidToken(_reason(error)) from None
        except (ValueError, TypeError, OverflowError):  # a claim no library check expected
            raise InvalidToken("the token is not valid") from None
        return principal_of(decoded["payload"], self.issuer)

    def _check_type(self, typ: object) -> None:
        kind = typ.lower() if isinstance(typ, str) else typ
        if kind in _ACCESS or (not self.at_jwt and (kind is None or kind in _PLAIN)):
            return
        raise InvalidToken("the token is not a JWT access token (typ)")

    async def aclose(self) -> None:
        """Close the fetcher, when it is this verifier's own."""
        if self._own and isinstance(self.fetcher, HttpFetcher):
            await self.fetcher.aclose()
