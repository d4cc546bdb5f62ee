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
* `Access` (``access``): what each principal may reach of the tools,
  resources and prompts (their scopes and a policy), the object an
  `mcp_schema.http.Endpoint` consults before a call is dispatched.

The scopes, the principal and `Access` import without the extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_schema.auth.access import Access, Attempt, Policy, current_principal
from mcp_schema.auth.metadata import WELL_KNOWN, ProtectedResource
from mcp_schema.auth.principal import Principal
from mcp_schema.auth.scopes import OFFLINE_ACCESS, Kind, RequiredScopes, ScopeHierarchy
from mcp_schema.auth.secret import Secret
from mcp_schema.auth.verifier import InvalidToken, TokenVerifier, VerifierUnavailable

if TYPE_CHECKING:
    from mcp_schema.auth.fetch import Fetcher, FetchError, HttpFetcher
    from mcp_schema.auth.introspect import Introspector
    from mcp_schema.auth.jwks import ASYMMETRIC
    from mcp_schema.auth.jwt_verifier import JwtVerifier
    from mcp_schema.auth.server import ResourceServer

# What needs the auth extra (PyJWT, httpx) is imported when first named, so
# that the scopes, the principal and `Access` (the server layer's, the
# endpoint's) import without it.
_EXTRA = {
    "Fetcher": "fetch",
    "FetchError": "fetch",
    "HttpFetcher": "fetch",
    "Introspector": "introspect",
    "ASYMMETRIC": "jwks",
    "JwtVerifier": "jwt_verifier",
    "ResourceServer": "server",
}


def __getattr__(name: str) -> Any:
    module = _EXTRA.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "ASYMMETRIC",
    "OFFLINE_ACCESS",
    "WELL_KNOWN",
    "Access",
    "Attempt",
    "FetchError",
    "Fetcher",
    "HttpFetcher",
    "Introspector",
    "InvalidToken",
    "JwtVerifier",
    "Kind",
    "Policy",
    "Principal",
    "ProtectedResource",
    "RequiredScopes",
    "ResourceServer",
    "ScopeHierarchy",
    "Secret",
    "TokenVerifier",
    "VerifierUnavailable",
    "current_principal",
]
