"""The URLs of authorization, checked once where they are configured: the
resource's canonical URI (RFC 8707 section 2, as the MCP specification's
[Canonical Server URI](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#canonical-server-uri)
defines it), and the authorization servers' URLs, which are https except on
loopback ([Communication Security](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations#communication-security)).
Every URL a client is told is built from these, never from a request's
``Host`` or ``X-Forwarded-*``.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

from mcp_schema._args import check

__all__ = ["MAX_URL", "canonical_resource", "is_loopback", "secure_url"]

MAX_URL = 400
"""Longest configured URL, in characters: a principal names its issuer, and
fits `mcp_schema.tasks.record.MAX_PRINCIPAL`."""

# Visible ASCII but the characters a header's quoted-string or a JSON string
# would have to escape, and those RFC 3986 never allows unencoded.
_URL_TEXT = re.compile(r"[!#-\[\]-~]+")


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a URL's host name, IPv6 without brackets) is this
    machine: ``localhost`` or a loopback address."""
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parts(url: object, what: str, *, query: bool = False) -> SplitResult:
    check(url, str, what)
    assert isinstance(url, str)
    if not 0 < len(url) <= MAX_URL or not _URL_TEXT.fullmatch(url):
        raise ValueError(f"{what} must be a URL of at most {MAX_URL} visible ASCII characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a malformed port raises ValueError here
    except ValueError:
        raise ValueError(f"{what} is not a URL: {url!r}") from None
    if not parts.hostname or parts.username is not None or parts.password is not None:
        raise ValueError(f"{what} must name a host, and no user: {url!r}")
    if parts.fragment or "#" in url:
        raise ValueError(f"{what} must have no fragment: {url!r}")
    if not query and (parts.query or "?" in url):
        raise ValueError(f"{what} must have no query: {url!r}")
    if parts.scheme != "https" and not (parts.scheme == "http" and is_loopback(parts.hostname)):
        raise ValueError(f"{what} must be https (http only on loopback): {url!r}")
    return parts


def secure_url(url: object, what: str, *, query: bool = False) -> str:
    """``url``, an https URL (http on loopback), without fragment, user or
    password, and without query unless ``query`` (an issuer identifier,
    RFC 8414 section 2, has none; an endpoint it names may); ``ValueError``
    otherwise."""
    _parts(url, what, query=query)
    assert isinstance(url, str)
    return url


def canonical_resource(uri: object) -> str:
    """``uri``, the canonical URI of a protected MCP server: a `secure_url`
    whose scheme and host are lower-case (the form tokens name in ``aud``,
    compared as given), and without a trailing slash unless it is the root."""
    parts = _parts(uri, "resource")
    assert isinstance(uri, str)
    netloc = parts.netloc
    if uri[: len(parts.scheme)] != parts.scheme or netloc != netloc.lower():
        raise ValueError(f"resource must have a lower-case scheme and host: {uri!r}")
    if parts.path.endswith("/"):
        raise ValueError(f"resource must not end with '/': {uri!r}")
    return uri
