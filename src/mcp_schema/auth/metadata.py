"""The protected resource metadata of an MCP server (RFC 9728), which the
specification requires of every server that takes tokens
([Authorization Server Location](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery#authorization-server-location)):
the document, and the answer to a request for it.

The document is served at both well-known URLs a client tries
([Protected Resource Metadata Discovery Requirements](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery#protected-resource-metadata-discovery-requirements)):
the path-inserted one (``/.well-known/oauth-protected-resource/mcp`` for a
resource ``https://host/mcp``), which challenges name, and the root one
(``/.well-known/oauth-protected-resource``). Both are worked out from the
configured resource URI, as is every URL in the document: a request's
``Host`` or ``X-Forwarded-*`` never enters it. The paths are those of the
resource URI: a proxy in front that moves the server under another path
must pass these paths through as they are.

The answer is public, for any origin (``Access-Control-Allow-Origin: *``,
no credentials), and a CORS preflight of it needs no token.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from urllib.parse import urlsplit

from mcp_schema._args import check, strings
from mcp_schema.auth.scopes import scopes
from mcp_schema.auth.urls import MAX_URL, canonical_resource, secure_url
from mcp_schema.http.stream import Response

__all__ = ["MAX_AUTHORIZATION_SERVERS", "WELL_KNOWN", "ProtectedResource"]

WELL_KNOWN = "/.well-known/oauth-protected-resource"
"""RFC 9728 section 3's well-known path."""

MAX_AUTHORIZATION_SERVERS = 16
"""Most authorization servers one resource names."""

_MAX_AGE = 300  # seconds a client may keep the document
_METHODS = "GET, HEAD, OPTIONS"


class ProtectedResource:
    """The metadata of the protected ``resource`` (its canonical URI):

    * ``authorization_servers``: the issuer identifiers of the authorization
      servers whose tokens it takes (at least one; https, http on loopback);
    * ``scopes_supported``: the scopes a client should ask for basic use
      (left out when empty; never ``offline_access``);
    * ``resource_name``, ``resource_documentation``: for people.

    ``url`` is the document's URL, as challenges give it
    (``resource_metadata``); ``paths`` the request paths it is served at.
    """

    __slots__ = ("_body", "document", "paths", "resource", "url")

    def __init__(
        self,
        resource: str,
        authorization_servers: Sequence[str],
        *,
        scopes_supported: Collection[str] = (),
        resource_name: str | None = None,
        resource_documentation: str | None = None,
    ) -> None:
        self.resource = canonical_resource(resource)
        servers = strings(authorization_servers, "authorization_servers")
        assert servers is not None
        if not 0 < len(servers) <= MAX_AUTHORIZATION_SERVERS:
            raise ValueError(
                f"authorization_servers must name 1 to {MAX_AUTHORIZATION_SERVERS} issuers"
            )
        document: dict[str, object] = {
            "resource": self.resource,
            "authorization_servers": [
                secure_url(s, "an authorization server") for s in dict.fromkeys(servers)
            ],
            "bearer_methods_supported": ["header"],
        }
        supported = scopes(scopes_supported, "scopes_supported")
        if supported:
            document["scopes_supported"] = sorted(supported)
        check(resource_name, str, "resource_name", none=True)
        if resource_name is not None:
            if not 0 < len(resource_name) <= MAX_URL:
                raise ValueError(f"resource_name must have 1 to {MAX_URL} characters")
            document["resource_name"] = resource_name
        if resource_documentation is not None:
            document["resource_documentation"] = secure_url(
                resource_documentation, "resource_documentation"
            )
        self.document: Mapping[str, object] = document
        """The metadata document (RFC 9728 section 2)."""
        self._body = json.dumps(document, ensure_ascii=False).encode()
        parts = urlsplit(self.resource)
        origin = f"{parts.scheme}://{parts.netloc}"
        inserted = WELL_KNOWN + parts.path  # RFC 9728 section 3.1: no trailing slash left
        self.url = origin + inserted
        self.paths: frozenset[str] = frozenset({inserted, WELL_KNOWN})

    def __repr__(self) -> str:
        return f"ProtectedResource({self.resource!r})"

    def response(self, method: str, path: str, received: Mapping[str, str]) -> Response | None:
        """The answer to a request for the document, or None when ``path`` is
        not one of `paths` (the request is the front door's). ``received``:
        the request's headers by lower-case name (`mcp_schema.http_headers.received_headers`)."""
        if path not in self.paths:
            return None
        cors = [("access-control-allow-origin", "*")]
        if method == "OPTIONS":
            allowed = [("access-control-allow-methods", _METHODS)]
            if received.get("access-control-request-headers"):
                allowed.append(("access-control-allow-headers", "*"))  # no credentials: any
            return Response(204, [*cors, *allowed, ("access-control-max-age", str(_MAX_AGE))])
        if method not in ("GET", "HEAD"):
            return Response(405, [*cors, ("allow", _METHODS)])
        head = [
            ("content-type", "application/json"),
            ("cache-control", f"public, max-age={_MAX_AGE}"),
            *cors,
        ]
        return Response(200, head, self._body)  # an ASGI server sends no body to HEAD
