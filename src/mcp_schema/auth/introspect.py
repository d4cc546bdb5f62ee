"""`Introspector`: opaque access tokens checked by asking the authorization
server that issued them (RFC 7662 token introspection).

The resource server authenticates to the introspection endpoint as a
client of its own (``client_secret_basic``: its client id and a `Secret`,
from the environment or a file), and takes a token only when the answer
says so in full:

* ``active`` is true;
* ``aud`` names this server's canonical resource URI (RFC 8707): an answer
  without an audience is refused, as a token for any resource would be;
* ``iss``, when given, is the configured issuer;
* ``token_type``, when given, is an access token's (``Bearer``);
* ``exp`` has not passed and ``nbf`` has come (with ``leeway``);
* ``scope`` lists scope tokens; no ``cnf`` (`mcp_schema.auth.verifier.principal_of`).

A 400 answer refuses the token (the authorization server would not
introspect it: node-oidc-provider answers so for its JWTs); any other
failure is 503, the token unjudged.

An answer is kept (by the resource server's cache) at most
``cache_seconds``, never past the token's ``exp``: a token revoked is
refused again within that time. At most ``max_checks`` introspections run
at once; beyond, a token is answered 503 rather than queued, so a flood of
made-up tokens cannot queue requests to the authorization server.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from urllib.parse import quote_plus

from mcp_schema._args import check
from mcp_schema.auth.discovery import discover, endpoint, json_object
from mcp_schema.auth.fetch import FETCH_SECONDS, Fetcher, FetchError, HttpFetcher
from mcp_schema.auth.jwt_verifier import LEEWAY
from mcp_schema.auth.principal import Principal
from mcp_schema.auth.refresh import Refresher
from mcp_schema.auth.secret import Secret
from mcp_schema.auth.urls import canonical_resource, secure_url
from mcp_schema.auth.verifier import (
    InvalidToken,
    VerifierUnavailable,
    check_audience,
    check_times,
    principal_of,
)

__all__ = ["MAX_CHECKS", "Introspector"]

MAX_CHECKS = 64
"""Introspection requests under way at once, by default."""

_DISCOVERY_RETRY = 30.0  # seconds between two discoveries that failed
_ACCESS_TYPES = frozenset({"bearer", "access_token"})


class Introspector:
    """A `mcp_schema.auth.verifier.TokenVerifier` of opaque tokens from
    ``issuer`` for ``audience`` (the resource's canonical URI), through the
    introspection endpoint (``endpoint``; None: the one the issuer's
    metadata names), as client ``client_id`` with ``client_secret``."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        client_id: str,
        client_secret: Secret,
        endpoint: str | None = None,
        fetcher: Fetcher | None = None,
        leeway: float = LEEWAY,
        cache_seconds: float = 60.0,
        max_checks: int = MAX_CHECKS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = secure_url(issuer, "issuer")
        self.audience = canonical_resource(audience)
        check(client_id, str, "client_id")
        if not client_id or not client_id.isprintable():
            raise ValueError("client_id must be printable text")
        if not isinstance(client_secret, Secret):
            raise TypeError(f"client_secret must be a Secret, not {type(client_secret).__name__}")
        self.client_id = client_id
        self.endpoint = None if endpoint is None else secure_url(endpoint, "endpoint", query=True)
        for value, name in ((leeway, "leeway"), (cache_seconds, "cache_seconds")):
            check(value, float, name)
            if not 0 <= value < 86400:
                raise ValueError(f"{name} must be a number of seconds under a day, not {value!r}")
        check(max_checks, int, "max_checks")
        if max_checks < 1:
            raise ValueError(f"max_checks must be positive, not {max_checks}")
        self.leeway, self.cache_seconds, self.max_checks = (
            float(leeway),
            float(cache_seconds),
            max_checks,
        )
        self._own = fetcher is None
        self.fetcher: Fetcher = fetcher or HttpFetcher()
        self._clock = clock
        # RFC 6749 2.3.1: each part form-encoded, then Basic.
        pair = f"{quote_plus(client_id)}:{quote_plus(client_secret.reveal())}".encode()
        self._authorization = Secret("Basic " + base64.b64encode(pair).decode())
        self._checking = 0
        self._found = Refresher(
            self._discover, every=_DISCOVERY_RETRY, seconds=FETCH_SECONDS, clock=clock
        )

    def __repr__(self) -> str:
        return f"Introspector(issuer={self.issuer!r}, audience={self.audience!r})"

    async def verify(self, token: str) -> Principal:
        """The token's principal, as the authorization server answers for it
        (see the module); `InvalidToken` or `VerifierUnavailable`."""
        if self._checking >= self.max_checks:
            raise VerifierUnavailable("too many tokens are being checked")
        self._checking += 1
        try:
            url = self.endpoint or await self._discovered()
            form = {"token": token, "token_type_hint": "access_token"}
            headers = {"authorization": self._authorization.reveal()}
            try:
                answer = json_object(await self.fetcher.fetch(url, form=form, headers=headers))
            except FetchError as failed:
                if failed.status == 400:  # the request is fine but for the token (RFC 6749 5.2)
                    raise InvalidToken(
                        "the authorization server refused to introspect the token"
                    ) from None
                raise VerifierUnavailable("the introspection endpoint did not answer") from None
            except ValueError:
                raise VerifierUnavailable("the introspection endpoint did not answer") from None
        finally:
            self._checking -= 1
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        if answer.get("iss", self.issuer) != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        kind = answer.get("token_type", "bearer")
        if not isinstance(kind, str) or kind.lower() not in _ACCESS_TYPES:
            raise InvalidToken("the token is not an access token")
        check_audience(answer, self.audience)
        check_times(answer, self._clock(), self.leeway)
        return principal_of(answer, self.issuer)

    async def _discovered(self) -> str:
        if self._found.value is None:
            await self._found.refresh()
        if self._found.value is None:
            raise VerifierUnavailable("the authorization server's metadata could not be found")
        return self._found.value

    async def _discover(self) -> str:
        return endpoint(await discover(self.issuer, self.fetcher), "introspection_endpoint")

    async def aclose(self) -> None:
        """Close the fetcher, when it is this introspector's own."""
        if self._own and isinstance(self.fetcher, HttpFetcher):
            await self.fetcher.aclose()
