"""The client side of MCP authorization (hand-written runtime package): an
OAuth 2.1 client for Streamable HTTP servers, as the specification's
[Authorization](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization)
asks of clients. Needs the ``http`` extra (its fetches go through
`mcp_schema.http.pool`, on httptools; no httpx); ``private_key_jwt`` also
the ``auth`` extra (PyJWT), and only then.

* `OAuth` (``client``): the authorization of one MCP server, which
  `mcp_schema.http.client.HttpClient` drives (``auth=``), and a
  `mcp_schema.http.credentials.CredentialSource`.
* `ClientInfo`, `Tokens` (``grants``): a client's identity at an
  authorization server, and what it granted; the requests themselves,
  sans-IO.
* `Redirect`, `LoopbackRedirect`, `FollowRedirect` (``redirect``): how the
  user's consent is asked for.
* `TokenStore`, `MemoryTokenStore`, `TokenKey` (``store``): where tokens are kept.
* `Fetcher`, `HttpFetcher` (``fetch``): every fetch, bounded; `HttpxFetcher`
  (``fetch_httpx``, imported only when asked for) on an httpx client of the
  caller's.
* The errors (``errors``): each a `mcp_schema.http.binding.TransportError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_schema.oauth.challenge import Challenge, read_challenge
from mcp_schema.oauth.client import OAuth
from mcp_schema.oauth.errors import (
    AuthorizationError,
    AuthorizationResponseError,
    DiscoveryError,
    FetchError,
    RegistrationError,
    RetryLimitError,
    TokenError,
)
from mcp_schema.oauth.fetch import Fetcher, HttpFetcher
from mcp_schema.oauth.grants import ClientInfo, Tokens
from mcp_schema.oauth.redirect import FollowRedirect, LoopbackRedirect, Redirect
from mcp_schema.oauth.store import MemoryTokenStore, TokenKey, TokenStore

if TYPE_CHECKING:
    from mcp_schema.oauth.fetch_httpx import HttpxFetcher

__all__ = [
    "AuthorizationError",
    "AuthorizationResponseError",
    "Challenge",
    "ClientInfo",
    "DiscoveryError",
    "FetchError",
    "Fetcher",
    "FollowRedirect",
    "HttpFetcher",
    "HttpxFetcher",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "Redirect",
    "RegistrationError",
    "RetryLimitError",
    "TokenError",
    "TokenKey",
    "TokenStore",
    "Tokens",
    "read_challenge",
]


def __getattr__(name: str) -> Any:
    if name == "HttpxFetcher":  # httpx only for those who ask for it
        from mcp_schema.oauth.fetch_httpx import HttpxFetcher

        return HttpxFetcher
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
