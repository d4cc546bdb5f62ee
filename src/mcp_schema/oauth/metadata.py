"""The metadata documents a client reads, each read once into a frozen
record or refused with a `DiscoveryError`:

* `ResourceMetadata`: the MCP server's protected resource metadata (RFC
  9728), whose ``resource`` must name the server the client talks to;
* `ServerMetadata`: its authorization server's (RFC 8414 or OpenID
  discovery), whose ``issuer`` must be the one the client asked about,
  exactly (RFC 8414 section 3.3), and whose endpoints are https except on
  loopback.

A body is JSON of at most the fetch's bound; a member of the wrong type is
absent, an endpoint that is no URL refuses the whole document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jiter

from mcp_schema.errors import clip, quote
from mcp_schema.oauth.errors import AuthorizationError, DiscoveryError
from mcp_schema.oauth.urls import endpoint, resource_covers

__all__ = ["ResourceMetadata", "ServerMetadata", "json_object", "read_resource", "read_server"]

_MAX_LISTED = 100  # scopes, servers, methods: the first ones kept
_MAX_NAME = 200


def json_object(body: bytes, what: str, error: type[Exception] = DiscoveryError) -> dict[str, Any]:
    """``body`` as a JSON object, or ``error`` saying what it is not."""
    try:
        value = jiter.from_json(body, catch_duplicate_keys=True, allow_inf_nan=False)
    except ValueError as exc:
        raise error(f"{what} is no JSON: {clip(str(exc))}") from None
    if not isinstance(value, dict):
        raise error(f"{what} is no JSON object")
    return value


def _names(document: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    listed = document.get(key)
    if not isinstance(listed, list):
        return None
    return tuple(
        dict.fromkeys(
            n for n in listed[:_MAX_LISTED] if isinstance(n, str) and 0 < len(n) <= _MAX_NAME
        )
    )


@dataclass(frozen=True)
class ResourceMetadata:
    """What protected resource metadata says (RFC 9728 section 2)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None


def read_resource(body: bytes, server_url: str, *, loopback_http: bool = True) -> ResourceMetadata:
    """The protected resource metadata in ``body`` for the MCP server at
    ``server_url``; `DiscoveryError` when it names another resource or no
    usable authorization server."""
    document = json_object(body, "the protected resource metadata")
    resource = document.get("resource")
    if not isinstance(resource, str) or not resource_covers(resource, server_url):
        raise DiscoveryError(
            f"the protected resource metadata names another resource: {quote(resource)}"
        )
    servers = _names(document, "authorization_servers") or ()
    usable = []
    for server in servers:
        try:
            usable.append(endpoint(server, "an authorization server", loopback_http=loopback_http))
        except AuthorizationError:
            continue  # another may be usable
    if not usable:
        raise DiscoveryError("the protected resource metadata names no usable authorization server")
    return ResourceMetadata(resource, tuple(usable), _names(document, "scopes_supported"))


@dataclass(frozen=True)
class ServerMetadata:
    """What an authorization server's metadata says (RFC 8414 section 2)."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None
    scopes_supported: tuple[str, ...] | None
    code_challenge_methods: tuple[str, ...]
    token_auth_methods: tuple[str, ...]
    grant_types: tuple[str, ...]
    signing_algs: tuple[str, ...]
    iss_parameter: bool
    """``authorization_response_iss_parameter_supported`` (RFC 9207)."""
    client_id_metadata_documents: bool

    @property
    def pkce(self) -> bool:
        """Whether it supports PKCE with S256 (the specification refuses it otherwise)."""
        return "S256" in self.code_challenge_methods


def _endpoint(document: Mapping[str, Any], key: str, loopback_http: bool) -> str | None:
    value = document.get(key)
    if value is None:
        return None
    return endpoint(value, key, loopback_http=loopback_http)


def read_server(body: bytes, issuer: str, *, loopback_http: bool = True) -> ServerMetadata:
    """The metadata in ``body`` of the authorization server ``issuer``:
    `DiscoveryError` when its ``issuer`` is not ``issuer``, character for
    character, or when it has no token endpoint."""
    document = json_object(body, "the authorization server metadata")
    named = document.get("issuer")
    if named != issuer:
        raise DiscoveryError(
            f"the authorization server metadata names issuer {quote(named)}, not {quote(issuer)}"
        )
    token = _endpoint(document, "token_endpoint", loopback_http)
    if token is None:
        raise DiscoveryError("the authorization server metadata has no token_endpoint")
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=_endpoint(document, "authorization_endpoint", loopback_http),
        token_endpoint=token,
        registration_endpoint=_endpoint(document, "registration_endpoint", loopback_http),
        scopes_supported=_names(document, "scopes_supported"),
        code_challenge_methods=_names(document, "code_challenge_methods_supported") or (),
        # RFC 8414 section 2: client_secret_basic when the member is absent.
        token_auth_methods=_names(document, "token_endpoint_auth_methods_supported")
        or ("client_secret_basic",),
        grant_types=_names(document, "grant_types_supported") or ("authorization_code", "implicit"),
        signing_algs=_names(document, "token_endpoint_auth_signing_alg_values_supported") or (),
        iss_parameter=document.get("authorization_response_iss_parameter_supported") is True,
        client_id_metadata_documents=document.get("client_id_metadata_document_supported") is True,
    )
