"""An authorization server's metadata, found from its issuer identifier by
RFC 8414 (``/.well-known/oauth-authorization-server``) or OpenID Connect
Discovery (``/.well-known/openid-configuration``), in the order the
specification gives
([Authorization Server Metadata Discovery](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery#authorization-server-metadata-discovery)),
and taken only when its ``issuer`` is the one asked for (RFC 8414 section
3.3): a document naming another issuer is never used.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from mcp_schema.auth.fetch import Fetcher, FetchError
from mcp_schema.auth.urls import secure_url
from mcp_schema.auth.verifier import VerifierUnavailable

__all__ = ["discover", "endpoint", "json_object", "metadata_urls"]


def metadata_urls(issuer: str) -> list[str]:
    """Where the metadata of ``issuer`` may be, most preferred first."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def json_object(body: bytes) -> dict[str, Any]:
    """``body``, a JSON object; ``ValueError`` otherwise."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        raise ValueError("not JSON") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


async def discover(issuer: str, fetcher: Fetcher) -> dict[str, Any]:
    """The metadata of ``issuer``: the first of `metadata_urls` that answers
    with a JSON object naming ``issuer``; `VerifierUnavailable` when none does."""
    for url in metadata_urls(issuer):
        try:
            document = json_object(await fetcher.fetch(url))
        except (FetchError, ValueError):
            continue
        if document.get("issuer") == issuer:
            return document
    raise VerifierUnavailable("the authorization server's metadata could not be found")


def endpoint(document: dict[str, Any], name: str) -> str:
    """The URL member ``name`` of a metadata document (https, http on
    loopback); `VerifierUnavailable` when it has none such."""
    try:
        return secure_url(document.get(name), name, query=True)
    except (TypeError, ValueError):
        raise VerifierUnavailable(
            f"the authorization server's metadata has no usable {name}"
        ) from None
