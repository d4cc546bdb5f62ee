"""`ResourceServer`: the one entry point of authorization for a front door
(the ASGI `App`, the gateway, a framework's middleware). For each request:

1. ``metadata_response(method, path, received)``: the protected resource
   metadata, or its CORS preflight, when the request is for it (no token
   asked); else None. Call it first: its paths are not the MCP endpoint's.
2. ``await authenticate(received)``: the request's `Principal`, or the
   refusal to send (401 with a challenge; 403 when the token lacks the
   scopes every request needs; 503 when the token could not be checked).
   A CORS preflight of the endpoint is answered before it (it carries no
   token): call it after the precheck.
3. ``step_up(principal, kind, name)``: once the body says which tool,
   resource or prompt a request reaches, the 403 step-up challenge when
   the token lacks a scope it needs, else None.

The principal's `Principal.name` is the identity the session, sealed
``requestState``, tasks and listens are bound to. The token goes no
further than the verifier: never logged, never in an error or a
response, never forwarded (a gateway reaches its upstream with
credentials of its own).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol, runtime_checkable

from mcp_schema._args import check, strings
from mcp_schema.auth.bearer import bearer_credentials, checked_token
from mcp_schema.auth.cache import CACHED, VerifiedTokens
from mcp_schema.auth.challenge import insufficient_scope, unauthorized
from mcp_schema.auth.jwt_verifier import JwtVerifier
from mcp_schema.auth.metadata import ProtectedResource
from mcp_schema.auth.principal import Principal
from mcp_schema.auth.scopes import Kind, RequiredScopes
from mcp_schema.auth.verifier import InvalidToken, TokenVerifier, VerifierUnavailable
from mcp_schema.errors import UnavailableError
from mcp_schema.http.rules import failure
from mcp_schema.http.stream import Response

__all__ = ["RETRY_SECONDS", "ResourceServer"]

RETRY_SECONDS = 5
"""``Retry-After`` of a 503: the token could not be checked."""


@runtime_checkable
class _Closing(Protocol):
    async def aclose(self) -> None: ...


class ResourceServer:
    """The resource server of the protected MCP server at ``resource`` (its
    canonical URI, as tokens name it in ``aud``).

    Tokens are checked by ``verifier`` or, given ``issuer`` instead, by a
    `JwtVerifier` of that issuer's JWT access tokens for ``resource``.

    * ``authorization_servers``: the issuers the metadata names (by
      default ``issuer``; required with a ``verifier``);
    * ``required``: the scopes every request, and each tool, resource and
      prompt, needs (`RequiredScopes`; by default none);
    * ``scopes_supported``: the scopes the metadata lists (by default those
      every request needs);
    * ``resource_name``, ``resource_documentation``: for the metadata;
    * ``cache_size``: verified tokens kept (`VerifiedTokens`; 0: none).
    """

    def __init__(
        self,
        *,
        resource: str,
        issuer: str | None = None,
        verifier: TokenVerifier | None = None,
        authorization_servers: Sequence[str] | None = None,
        required: RequiredScopes | None = None,
        scopes_supported: Collection[str] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        cache_size: int = CACHED,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (issuer is None) == (verifier is None):
            raise ValueError("give an issuer or a verifier (one of them)")
        if verifier is None:
            assert issuer is not None
            verifier = JwtVerifier(issuer, resource)
            if authorization_servers is None:
                authorization_servers = [issuer]
        if authorization_servers is None:
            raise ValueError("authorization_servers names the issuers of a verifier's tokens")
        if not callable(getattr(verifier, "verify", None)):
            raise TypeError(f"verifier must be a TokenVerifier, not {type(verifier).__name__}")
        if required is not None and not isinstance(required, RequiredScopes):
            raise TypeError(f"required must be RequiredScopes, not {type(required).__name__}")
        check(cache_size, int, "cache_size")
        self.verifier = verifier
        self.required = required or RequiredScopes()
        supported = strings(scopes_supported, "scopes_supported", none=True)
        self.metadata = ProtectedResource(
            resource,
            authorization_servers,
            scopes_supported=self.required.always if supported is None else supported,
            resource_name=resource_name,
            resource_documentation=resource_documentation,
        )
        self.tokens = VerifiedTokens(max(cache_size, 0), clock)

    def __repr__(self) -> str:
        return f"ResourceServer(resource={self.metadata.resource!r})"

    def metadata_response(
        self, method: str, path: str, received: Mapping[str, str]
    ) -> Response | None:
        """The answer to a request for the protected resource metadata; None
        when ``path`` is not one of its (`ProtectedResource.response`)."""
        return self.metadata.response(method, path, received)

    async def authenticate(
        self, received: Mapping[str, str], *, request_id: str | int | None = None
    ) -> Principal | Response:
        """The principal of the request whose headers are ``received`` (by
        lower-case name), or the refusal to answer it with (its JSON-RPC
        error names ``request_id``): 401 without a token or with one refused,
        403 when it lacks the scopes every request needs, 503 (and
        ``Retry-After``) when it could not be checked."""
        url, always = self.metadata.url, self.required.always
        try:
            token = bearer_credentials(received.get("authorization"))
            if token is None:
                return unauthorized(url, scopes=always, request_id=request_id)
            principal = self.tokens.get(token)  # only checked tokens are kept
            if principal is None:
                principal = await self.verifier.verify(checked_token(token))
                self.tokens.put(token, principal, self.verifier.cache_seconds)
        except InvalidToken as refused:
            return unauthorized(url, scopes=always, description=str(refused), request_id=request_id)
        except VerifierUnavailable as failed:
            error = UnavailableError(f"Service Unavailable: {failed}")
            return failure(error, request_id, [("retry-after", str(RETRY_SECONDS))])
        if self.required.missing(principal.scopes):
            return insufficient_scope(url, always, request_id=request_id)
        return principal

    def step_up(
        self,
        principal: Principal,
        kind: Kind,
        name: str,
        *,
        request_id: str | int | None = None,
    ) -> Response | None:
        """The 403 step-up challenge when ``principal``'s token lacks a scope
        that ``kind`` ``name`` needs (listing all it needs); else None."""
        if not self.required.missing(principal.scopes, kind, name):
            return None
        needed = self.required.required(kind, name)
        return insufficient_scope(self.metadata.url, needed, request_id=request_id)

    async def aclose(self) -> None:
        """Close what the verifier holds open (its HTTP client)."""
        if isinstance(self.verifier, _Closing):
            await self.verifier.aclose()
