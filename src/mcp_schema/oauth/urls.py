"""The URLs an OAuth client meets, read once: the MCP server's canonical
resource (RFC 8707 section 2, the specification's
[Canonical Server URI](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#canonical-server-uri)),
the well-known locations of its protected resource metadata (RFC 9728) and
of its authorization server's metadata (RFC 8414 and OpenID discovery), in
the order the specification's
[Authorization Server Discovery](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery)
gives, and the endpoints, which are https except on loopback
([Communication Security](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations#communication-security)).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit, urlunsplit

from mcp_schema.errors import quote
from mcp_schema.oauth.errors import DiscoveryError, FetchError

__all__ = [
    "MAX_URL",
    "canonical_resource",
    "endpoint",
    "is_loopback",
    "origin",
    "resource_covers",
    "resource_metadata_urls",
    "server_metadata_urls",
]

MAX_URL = 2048
"""Longest URL read from a peer or configured, in characters."""

_VISIBLE = re.compile(r"[!-~]+")
_PRM = "/.well-known/oauth-protected-resource"
_RFC8414 = "/.well-known/oauth-authorization-server"
_OIDC = "/.well-known/openid-configuration"


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a URL's host, IPv6 without brackets) is this machine."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parts(url: object, what: str) -> SplitResult:
    if not isinstance(url, str) or not 0 < len(url) <= MAX_URL or not _VISIBLE.fullmatch(url):
        raise DiscoveryError(f"{what} is no URL of at most {MAX_URL} visible characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a malformed port raises ValueError here
    except ValueError:
        raise DiscoveryError(f"{what} is no URL: {quote(url)}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise DiscoveryError(f"{what} is no http(s) URL: {quote(url)}")
    if "@" in parts.netloc or parts.fragment:
        raise DiscoveryError(f"{what} has credentials or a fragment: {quote(url)}")
    return parts


def endpoint(url: object, what: str, *, loopback_http: bool = True) -> str:
    """``url`` when it is https, or http on loopback while ``loopback_http``
    (`FetchError` otherwise); given as read, never normalized."""
    parts = _parts(url, what)
    assert isinstance(url, str)
    if parts.scheme.lower() == "https":
        return url
    if loopback_http and is_loopback(parts.hostname):
        return url
    raise FetchError(f"{what} is neither https nor loopback: {quote(url)}")


def origin(url: str) -> tuple[str, str, int | None]:
    """The scheme, host and port of ``url``, compared case-insensitively
    (the default port made explicit)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"https": 443, "http": 80}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def canonical_resource(url: str) -> str:
    """The canonical URI of the MCP server at ``url``: scheme and host
    lowercased, no query, no fragment, no trailing slash on a bare origin."""
    parts = _parts(url, "the server URL")
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the metadata's ``resource`` names the server at ``server_url``:
    the same origin, and a path that is the server's or one of its parents
    (by whole segments)."""
    try:
        named = _parts(resource, "resource")
    except DiscoveryError:
        return False
    if origin(resource) != origin(server_url):
        return False
    mine = urlsplit(server_url).path.rstrip("/")
    theirs = named.path.rstrip("/")
    return mine == theirs or mine.startswith(theirs + "/")


def resource_metadata_urls(server_url: str) -> list[str]:
    """Where the server's protected resource metadata may be, in the order
    to try: under the MCP endpoint's path, then at the root."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    found = [f"{_PRM}{path}"] if path else []
    found.append(_PRM)
    return [urlunsplit((parts.scheme, parts.netloc, p, "", "")) for p in found]


def server_metadata_urls(issuer: str) -> list[str]:
    """Where the metadata of the authorization server ``issuer`` may be, in
    the specification's order (path insertion for RFC 8414 and OpenID, then
    OpenID's path appending)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    paths = [f"{_RFC8414}{path}", f"{_OIDC}{path}"]
    if path:
        paths.append(f"{path}{_OIDC}")
    return [urlunsplit((parts.scheme, parts.netloc, p, "", "")) for p in paths]
