"""The typed failures of the OAuth client: each is a
`mcp_schema.http.binding.TransportError` (-32603), so that a request the
client could not authorize is answered, in the session, like any other
exchange that brought no answer. Messages carry what the peer said, clipped,
and never a token, a secret or an authorization code.
"""

from __future__ import annotations

from mcp_schema.http.posts import TransportError

__all__ = [
    "AuthorizationError",
    "AuthorizationResponseError",
    "DiscoveryError",
    "FetchError",
    "RegistrationError",
    "RetryLimitError",
    "TokenError",
]


class AuthorizationError(TransportError):
    """The client could not get a token for the resource."""

    default_message = "Authorization failed"


class FetchError(AuthorizationError):
    """A fetch that broke its bounds: time, size, redirects, a refused
    address (the SSRF guard) or a URL that is neither https nor loopback."""


class DiscoveryError(AuthorizationError):
    """No usable metadata: none found, malformed, naming another resource or
    another issuer, or an authorization server without PKCE (S256)."""


class RegistrationError(AuthorizationError):
    """No client identity for the authorization server: none configured and
    none it supports, or its registration endpoint refused."""


class AuthorizationResponseError(AuthorizationError):
    """The redirect back was refused: another ``state``, an ``iss`` that is
    not the recorded issuer (RFC 9207), no code, or the server's error."""


class TokenError(AuthorizationError):
    """The token endpoint refused, or answered with no usable Bearer token."""


class RetryLimitError(AuthorizationError):
    """The resource kept refusing fresh tokens (401, or 403
    ``insufficient_scope``) past the retry limit."""
