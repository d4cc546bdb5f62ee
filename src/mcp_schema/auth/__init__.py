"""Authorization for MCP servers over HTTP: the resource-server side of the
specification's [Authorization](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization)
(hand-written runtime package; the ``auth`` extra: PyJWT, cryptography, httpx).

* `ResourceServer` (``server``): the one entry point of a front door:
  the protected resource metadata, the token of each request checked into
  its `Principal` or refused with a ``WWW-Authenticate`` challenge, and the
  403 step-up challenge per tool, resource or prompt.
* `Principal` (``principal``): who a verified token speaks for.
* `ProtectedResource` (``metadata``): the RFC 9728 metadata and its answers.
* ``challenge``: the Bearer challenges (RFC 6750) and the refusals carrying them.
* `JwtVerifier` (``jwt_verifier``; its keys: ``jwks``, found by ``discovery``)
  and `Introspector` (``introspect``): the two `TokenVerifier` kinds.
* `RequiredScopes` and `ScopeHierarchy` (``scopes``): what each operation needs.
* `HttpFetcher` (``fetch``): how a verifier reaches its authorization server.
* `Secret` (``secret``): a credential kept out of every ``repr``.
"""

from __future__ import annotations

from mcp_schema.auth.fetch import Fetcher, FetchError, HttpFetcher
from mcp_schema.auth.introspect import Introspector
from mcp_schema.auth.jwks import ASYMMETRIC
from mcp_schema.auth.jwt_verifier import JwtVerifier
from mcp_schema.auth.metadata import WELL_KNOWN, ProtectedResource
from mcp_schema.auth.principal import Principal
from mcp_schema.auth.scopes import OFFLINE_ACCESS, Kind, RequiredScopes, ScopeHierarchy
from mcp_schema.auth.secret import Secret
from mcp_schema.auth.server import ResourceServer
from mcp_schema.auth.verifier import InvalidToken, TokenVerifier, VerifierUnavailable

__all__ = [
    "ASYMMETRIC",
    "OFFLINE_ACCESS",
    "WELL_KNOWN",
    "FetchError",
    "Fetcher",
    "HttpFetcher",
    "Introspector",
    "InvalidToken",
    "JwtVerifier",
    "Kind",
    "Principal",
    "ProtectedResource",
    "RequiredScopes",
    "ResourceServer",
    "ScopeHierarchy",
    "Secret",
    "TokenVerifier",
    "VerifierUnavailable",
]
