"""`OAuth`: the authorization of one MCP server for a client, as the
specification's [Authorization](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization)
describes it. `mcp_schema.http.client.HttpClient` drives it (``auth=``);
it is also a `mcp_schema.http.credentials.CredentialSource`, for the
gateway's upstream links.

On a 401, or a 403 ``insufficient_scope``, from the server (`challenged`):

1. discovery: the protected resource metadata from the challenge's
   ``resource_metadata``, else from its well-known paths, its ``resource``
   checked against the server's URL; the authorization server's metadata
   (RFC 8414, then OpenID discovery), its ``issuer`` checked;
2. a token kept for the resource and issuer, if the server did not just
   refuse it; else its refresh; else a new grant:
3. the scopes of the challenge, else the metadata's ``scopes_supported``,
   with those asked for before (step-up asks for the union), and
   ``offline_access`` where the authorization server lists it;
4. the client's identity at that issuer: pre-registered, a Client ID
   Metadata Document, or dynamic registration, in that order, kept per
   issuer (another issuer is registered with anew);
5. the grant: the authorization code with PKCE through the `Redirect`, or
   client credentials; the ``resource`` on every request.

More than ``max_attempts`` challenges without an answer in between end in
`RetryLimitError`. Concurrent challenges wait for one authorization.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mcp_schema._args import check
from mcp_schema.errors import quote
from mcp_schema.oauth.challenge import Challenge, read_challenge
from mcp_schema.oauth.errors import (
    AuthorizationError,
    DiscoveryError,
    RegistrationError,
    RetryLimitError,
    TokenError,
)
from mcp_schema.oauth.fetch import BoundedFetcher, Fetcher, HttpFetcher, Request, Response
from mcp_schema.oauth.grants import (
    ClientInfo,
    Signer,
    TokenRequest,
    Tokens,
    authorization_request,
    client_credentials_request,
    code_request,
    read_callback,
    read_registration,
    read_tokens,
    refresh_request,
    registration_request,
    resolved,
)
from mcp_schema.oauth.metadata import ResourceMetadata, ServerMetadata, read_resource, read_server
from mcp_schema.oauth.redirect import Redirect
from mcp_schema.oauth.store import MemoryTokenStore, TokenKey, TokenStore
from mcp_schema.oauth.urls import (
    canonical_resource,
    endpoint,
    resource_metadata_urls,
    server_metadata_urls,
)

__all__ = ["OAuth"]

Grant = Literal["authorization_code", "client_credentials"]

_LOG = logging.getLogger("mcp_schema.oauth")
_OFFLINE = "offline_access"
_JSON = {"accept": "application/json"}


class OAuth:
    """The authorization of the MCP server at ``server_url`` (see the module).

    ``grant``: ``"authorization_code"`` (a user's consent, through
    ``redirect``) or ``"client_credentials"`` (a confidential client on its
    own behalf: ``client`` with a secret, or ``private_key``).
    ``client``: pre-registered credentials (bound to the first issuer met
    unless they name theirs). ``client_metadata_url``: the client's Client
    ID Metadata Document (an https URL with a path). ``client_metadata``:
    members of a dynamic registration (``client_name``...).
    ``private_key``: a PEM key for ``private_key_jwt`` (needs the ``auth``
    extra), signed with ``signing_algorithm``. ``scopes``: asked for where
    neither challenge nor metadata name any (client credentials: where the
    challenge names none, before the metadata's). ``guard``: the server-side
    request forgery guard of `mcp_schema.oauth.fetch` (a client inside a
    server); ``fetcher``: how to reach the servers (`HttpFetcher` by
    default).
    """

    def __init__(
        self,
        server_url: str,
        *,
        grant: Grant = "authorization_code",
        redirect: Redirect | None = None,
        client: ClientInfo | None = None,
        client_metadata_url: str | None = None,
        client_metadata: Mapping[str, Any] | None = None,
        private_key: str | None = None,
        signing_algorithm: str = "ES256",
        scopes: Sequence[str] | None = None,
        store: TokenStore | None = None,
        fetcher: Fetcher | None = None,
        guard: bool = False,
        offline_access: bool = True,
        max_attempts: int = 3,
    ) -> None:
        check(server_url, str, "server_url")
        check(client, ClientInfo, "client", none=True)
        check(client_metadata_url, str, "client_metadata_url", none=True)
        check(private_key, str, "private_key", none=True)
        check(signing_algorithm, str, "signing_algorithm")
        check(max_attempts, int, "max_attempts")
        if grant not in ("authorization_code", "client_credentials"):
            raise ValueError(
                f"grant must be authorization_code or client_credentials, not {grant!r}"
            )
        if grant == "authorization_code" and redirect is None:
            raise ValueError("the authorization_code grant needs a redirect")
        if grant == "client_credentials" and client is None:
            raise ValueError("the client_credentials grant needs the client's credentials")
        if client_metadata_url is not None:
            endpoint(client_metadata_url, "client_metadata_url", loopback_http=False)
        self.server_url = endpoint(server_url, "the server URL", loopback_http=not guard)
        self.resource = canonical_resource(server_url)
        self.grant, self.redirect, self.guard = grant, redirect, guard
        self.client, self.client_metadata_url = client, client_metadata_url
        self.client_metadata = dict(client_metadata or {})
        self.scopes = tuple(scopes) if scopes else None
        self.offline_access, self.max_attempts = offline_access, max_attempts
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self._own_fetcher: BoundedFetcher | None = None
        if fetcher is None:
            fetcher = self._own_fetcher = HttpFetcher(guard=guard)
        self.fetcher: Fetcher = fetcher
        self._sign: Signer | None = None
        if private_key is not None:
            from mcp_schema.oauth.assertion import signer  # the auth extra: PyJWT

            try:
                self._sign = signer(private_key, signing_algorithm)
            except Exception as exc:
                raise ValueError(f"private_key: {type(exc).__name__}") from None
        self._lock = asyncio.Lock()
        self._tokens: Tokens | None = None
        self._key: TokenKey | None = None
        self._server: ServerMetadata | None = None
        self._metadata: ResourceMetadata | None = None
        self._clients: dict[str, ClientInfo] = {}
        self._bound: str | None = client.issuer if client is not None else None
        self._requested: tuple[str, ...] | None = None
        self._rejected: str | None = None
        self._attempts = 0
        self._renewals = 0
        self._failure: AuthorizationError | None = None

    def __repr__(self) -> str:
        return f"OAuth({self.server_url!r}, grant={self.grant!r})"

    async def aclose(self) -> None:
        """Close the fetcher it made itself (one given is the caller's)."""
        if self._own_fetcher is not None:
            await self._own_fetcher.aclose()

    # -- what a request carries ----------------------------------------------------------

    async def authorization(self) -> str | None:
        """The ``Authorization`` to send (``Bearer …``), or None when there is
        no token yet (the server's 401 starts the authorization). A stale or
        refused token is refreshed first; client credentials are granted
        before the first request."""
        current = self._header()
        if current is not None and current != self._rejected and self._fresh():
            return current
        if self.grant == "authorization_code" and (
            self._tokens is None or self._tokens.refresh_token is None
        ):
            return None if current == self._rejected else current
        renewals = self._renewals
        async with self._lock:
            if self._renewals == renewals and self._header() == current:
                self._renewals += 1
                self._failure = None
                try:
                    await self._renew()
                except AuthorizationError as exc:
                    self._failure = exc
                    raise
            elif self._failure is not None and self._header() == current:
                # The renewal these requests waited for failed: they share its
                # failure rather than each asking the authorization server again.
                raise type(self._failure)(self._failure.message, status=self._failure.status)
        return self._header()

    def rejected(self, authorization: str) -> None:
        """The server refused ``authorization`` (401): the next
        `authorization` renews it where it can."""
        self._rejected = authorization

    def settled(self) -> None:
        """A request carrying a token was answered: challenges count anew."""
        self._attempts = 0

    async def challenged(
        self, status: int, www_authenticate: Sequence[str], authorization: str | None
    ) -> bool:
        """The server answered a request carrying ``authorization`` with
        ``status`` (401 or 403) and these ``WWW-Authenticate`` headers:
        whether to send it again (with a new `authorization`); raises an
        `AuthorizationError` when no token can be had."""
        challenge = read_challenge(www_authenticate) or Challenge()
        if status == 403 and not challenge.insufficient_scope:
            return False  # forbidden for another reason: no token changes it
        async with self._lock:
            header = self._header()
            if header not in (None, authorization, self._rejected):
                return True  # another request renewed it meanwhile
            self._attempts += 1
            if self._attempts > self.max_attempts:
                raise RetryLimitError(
                    f"the server refused {self.max_attempts} fresh authorizations", status=status
                )
            if authorization is not None:
                self._rejected = authorization
            await self._discover(challenge)
            scopes = self._scopes(challenge)
            if status == 401 and await self._reuse():
                return True
            await self._grant(scopes)
        return True

    def _header(self) -> str | None:
        return None if self._tokens is None else f"Bearer {self._tokens.access_token}"

    def _fresh(self) -> bool:
        return self._tokens is not None and self._tokens.fresh()

    async def _renew(self) -> None:
        if self._tokens is not None and self._tokens.refresh_token is not None:
            if await self._refresh(self._tokens):
                return
        if self.grant == "client_credentials":
            if self._server is None:
                try:
                    await self._discover(Challenge())
                except DiscoveryError as exc:
                    # No metadata at the well-known paths: the request goes without
                    # a token, and the server's 401 names its metadata (`challenged`).
                    _LOG.info("no metadata before the first request: %s", exc.message)
                    return
            await self._grant(self._scopes(Challenge()))

    # -- discovery -----------------------------------------------------------------------

    async def _get(self, url: str) -> Response:
        return await self.fetcher.fetch(Request("GET", url, _JSON))

    async def _discover(self, challenge: Challenge) -> None:
        urls = resource_metadata_urls(self.server_url)
        if challenge.resource_metadata is not None:
            given = endpoint(
                challenge.resource_metadata, "resource_metadata", loopback_http=not self.guard
            )
            urls = [given, *(u for u in urls if u != given)]
        for url in urls:
            answer = await self._get(url)
            if answer.status == 200:
                metadata = read_resource(answer.body, self.server_url, loopback_http=not self.guard)
                break
        else:
            raise DiscoveryError("the server has no protected resource metadata")
        issuer = metadata.authorization_servers[0]
        server = (
            self._server if self._server is not None and self._server.issuer == issuer else None
        )
        if server is None:
            server = await self._server_metadata(issuer)
        if self.grant == "authorization_code" and not server.pkce:
            raise DiscoveryError(
                f"the authorization server {quote(issuer)} does not support PKCE (S256)"
            )
        self._metadata, self._server = metadata, server
        self._key = TokenKey(canonical_resource(metadata.resource), issuer)

    async def _server_metadata(self, issuer: str) -> ServerMetadata:
        for url in server_metadata_urls(issuer):
            answer = await self._get(url)
            if answer.status == 200:
                return read_server(answer.body, issuer, loopback_http=not self.guard)
        raise DiscoveryError(f"the authorization server {quote(issuer)} has no metadata")

    def _scopes(self, challenge: Challenge) -> tuple[str, ...] | None:
        assert self._metadata is not None and self._server is not None
        if self.grant == "client_credentials":  # the operator's scopes over all those listed
            asked = challenge.scopes or self.scopes or self._metadata.scopes_supported
        else:
            asked = challenge.scopes or self._metadata.scopes_supported or self.scopes
        if self._requested:
            asked = tuple(dict.fromkeys((*self._requested, *(asked or ()))))
        if not asked:
            return None
        listed = self._server.scopes_supported or ()
        if self.grant == "authorization_code" and self.offline_access and _OFFLINE in listed:
            asked = tuple(dict.fromkeys((*asked, _OFFLINE)))
        return asked

    # -- tokens --------------------------------------------------------------------------

    async def _reuse(self) -> bool:
        """A kept token for the resource and issuer now found, or its refresh."""
        assert self._key is not None
        kept = await self.store.get(self._key)
        if kept is None:
            return False
        if f"Bearer {kept.access_token}" != self._rejected and kept.fresh():
            self._tokens = kept
            return True
        return kept.refresh_token is not None and await self._refresh(kept)

    async def _refresh(self, tokens: Tokens) -> bool:
        assert self._server is not None and self._key is not None and self._metadata is not None
        client = self._clients.get(self._server.issuer)
        if client is None:
            return False
        request = refresh_request(self._server, client, tokens, self._metadata.resource, self._sign)
        try:
            await self._token(request, tokens.scopes, tokens)
        except TokenError as exc:
            _LOG.info("refresh refused, authorizing anew: %s", exc.message)
            await self.store.drop(self._key)
            self._tokens = None
            return False
        return True

    async def _token(
        self, request: TokenRequest, scopes: tuple[str, ...] | None, previous: Tokens | None = None
    ) -> None:
        assert self._key is not None
        answer = await self.fetcher.fetch(
            Request("POST", request.url, request.headers, request.form)
        )
        tokens = read_tokens(answer.status, answer.body, scopes, previous)
        await self.store.put(self._key, tokens)
        self._tokens, self._rejected = tokens, None
        self._requested = scopes

    async def _grant(self, scopes: tuple[str, ...] | None) -> None:
        assert self._server is not None and self._metadata is not None
        server, resource = self._server, self._metadata.resource
        client = await self._identity(server)
        if self.grant == "client_credentials":
            request = client_credentials_request(server, client, resource, scopes, self._sign)
            await self._token(request, scopes)
            return
        assert self.redirect is not None
        pending = authorization_request(
            server, client, self.redirect.redirect_uri, resource, scopes
        )
        code = read_callback(pending, await self.redirect.authorize(pending.url))
        await self._token(code_request(server, client, pending, code, self._sign), scopes)

    async def _identity(self, server: ServerMetadata) -> ClientInfo:
        """Who the client is at ``server``: kept, pre-registered, its metadata
        document, or registered now (`RegistrationError` when none)."""
        issuer = server.issuer
        if issuer in self._clients:
            return self._clients[issuer]
        signing = self._sign is not None
        if self.client is not None and self._bound in (None, issuer):
            self._bound = issuer
            found = resolved(self.client, server, signing)
        elif self.grant == "client_credentials":
            raise RegistrationError(
                f"the client's credentials belong to {quote(self._bound)}, not {quote(issuer)}"
            )
        elif self.client_metadata_url is not None and server.client_id_metadata_documents:
            method = "private_key_jwt" if signing else "none"
            found = ClientInfo(self.client_metadata_url, None, method, issuer)
        elif server.registration_endpoint is not None:
            found = await self._register(server)
        else:
            raise RegistrationError(f"no way to register with {quote(issuer)}")
        self._clients[issuer] = found
        return found

    async def _register(self, server: ServerMetadata) -> ClientInfo:
        assert self.redirect is not None
        url, body = registration_request(server, self.redirect.redirect_uri, self.client_metadata)
        answer = await self.fetcher.fetch(Request("POST", url, _JSON, json=body))
        return read_registration(answer.status, answer.body, server)
