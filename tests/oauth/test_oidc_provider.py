"""`OAuth` as a client-credentials `CredentialSource` (the gateway's upstream
links) against a real authorization server, node-oidc-provider
(tests/auth/provider.py): the token it gets is bound to the resource (RFC
8707), which the package's own resource server takes; a refused or stale
token is replaced by a fresh grant; a scope the client may not have is the
provider's refusal, typed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest

from mcp_schema.auth import Principal, ResourceServer
from mcp_schema.http.credentials import CredentialSource
from mcp_schema.oauth import ClientInfo, HttpxFetcher, OAuth, TokenError
from tests.auth.provider import provider

RESOURCE = "http://127.0.0.1:9/mcp"
ALICE, ALICE_SECRET = "alice", "alice-secret-0123456789abcdef"
CLIENTS = [{"client_id": ALICE, "client_secret": ALICE_SECRET, "scope": "tools:read"}]
RESOURCES = {RESOURCE: {"format": "jwt", "scope": "tools:read tools:write"}}


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider(CLIENTS, RESOURCES) as url:
        yield url


def source(issuer: str, scopes: list[str]) -> OAuth:
    """The source of tokens for RESOURCE, whose metadata (served here, in
    memory) names the real provider."""

    def metadata(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(
                200, json={"resource": RESOURCE, "authorization_servers": [issuer]}
            )
        return httpx.Response(404)

    http = httpx.AsyncClient(mounts={"http://127.0.0.1:9": httpx.MockTransport(metadata)})
    return OAuth(
        RESOURCE,
        grant="client_credentials",
        client=ClientInfo(ALICE, ALICE_SECRET),
        scopes=scopes,
        fetcher=HttpxFetcher(http),
    )


def test_its_tokens_are_bound_to_the_resource_and_taken_by_the_resource_server(issuer: str) -> None:
    async def main() -> object:
        oauth = source(issuer, ["tools:read"])
        assert isinstance(oauth, CredentialSource)
        authorization = await oauth.authorization()
        assert authorization is not None and authorization.startswith("Bearer ")
        assert await oauth.authorization() == authorization  # kept while fresh
        server = ResourceServer(resource=RESOURCE, issuer=issuer)
        try:
            return await server.authenticate({"authorization": authorization})
        finally:
            await server.aclose()

    principal = asyncio.run(main())
    assert isinstance(principal, Principal)
    assert (principal.client_id, principal.scopes) == (ALICE, frozenset({"tools:read"}))


def test_a_refused_or_stale_token_is_granted_anew(
    issuer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def main() -> list[str | None]:
        oauth = source(issuer, ["tools:read"])
        first = await oauth.authorization()
        assert first is not None
        oauth.rejected(first)
        second = await oauth.authorization()
        later = time.time() + 3600  # past the provider's 300 s
        monkeypatch.setattr("mcp_schema.oauth.grants.time.time", lambda: later)
        third = await oauth.authorization()
        return [first, second, third]

    first, second, third = asyncio.run(main())
    assert len({first, second, third}) == 3


def test_a_scope_the_client_may_not_have_is_a_token_error(issuer: str) -> None:
    async def main() -> None:
        await source(issuer, ["tools:write"]).authorization()

    with pytest.raises(TokenError, match="invalid_scope"):
        asyncio.run(main())
