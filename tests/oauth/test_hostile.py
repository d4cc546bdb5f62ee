"""Hostile servers: each ends in a typed `AuthorizationError`, within its
bounds, and no token (nor client secret) goes anywhere but where it was
granted for: metadata naming another resource or issuer, an authorization
server without PKCE, endpoints that are not https, redirects to other
origins, endless 401s and 403s, a wrong token_type, huge or malformed
documents, a token endpoint that never answers, another state."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from mcp_schema.oauth import (
    AuthorizationError,
    AuthorizationResponseError,
    DiscoveryError,
    FetchError,
    HttpxFetcher,
    OAuth,
    RetryLimitError,
    TokenError,
)
from mcp_schema.oauth.fetch import Request
from tests.oauth.world import AS, World, pre_registered


def refused(world: World, auth: OAuth | None = None) -> AuthorizationError:
    async def main() -> None:
        async with world.client(auth or world.oauth()) as client:
            await client.list_tools()

    with pytest.raises(AuthorizationError) as caught:
        asyncio.run(main())
    return caught.value


def no_token_left_the_client(world: World) -> bool:
    return all("authorization" not in r.headers for r in world.requests if r.url.path != "/token")


def test_metadata_naming_another_resource_is_refused_before_any_authorization() -> None:
    world = World(prm_resource="https://evil.example/mcp")
    assert isinstance(refused(world), DiscoveryError)
    assert world.sent("/authorize") == [] and world.sent("/register") == []


def test_metadata_naming_another_issuer_is_not_used() -> None:
    world = World(metadata_issuer="https://attacker.example")
    assert isinstance(refused(world), DiscoveryError)
    assert [r.url.path for r in world.requests if r.url.host == "as.example"] == [
        "/.well-known/oauth-authorization-server"
    ]


def test_an_authorization_server_without_pkce_is_refused() -> None:
    world = World(pkce=False)
    assert isinstance(refused(world), DiscoveryError) and world.sent("/authorize") == []


@pytest.mark.parametrize(
    "server", ["http://as.example", "ftp://as.example", "https://u@as.example"]
)
def test_authorization_servers_that_are_not_https_are_not_contacted(server: str) -> None:
    world = World(authorization_servers=[server])
    assert isinstance(refused(world), DiscoveryError)
    assert all(r.url.host == "mcp.example" for r in world.requests)


def test_a_redirect_to_another_origin_is_refused() -> None:
    def elsewhere(request: httpx.Request) -> httpx.Response | None:
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(302, headers={"location": "https://evil.example/metadata"})
        return None

    world = World(override=elsewhere)
    assert isinstance(refused(world), FetchError)
    assert all(r.url.host != "evil.example" for r in world.requests)


def test_endless_401s_end_at_the_retry_limit() -> None:
    world = World(always_401=True)
    assert isinstance(refused(world), RetryLimitError)
    assert len(world.sent("/authorize")) == 3


def test_endless_403s_end_at_the_retry_limit() -> None:
    world = World(needs="never", withheld=frozenset({"never"}))
    error = refused(world, world.oauth(max_attempts=2))
    # The first, for initialize's 401 (answered: the count starts anew), then two step-ups.
    assert isinstance(error, RetryLimitError) and len(world.sent("/authorize")) == 1 + 2


def test_a_token_that_is_not_bearer_is_never_sent() -> None:
    world = World(token_type="DPoP")
    assert isinstance(refused(world), TokenError)
    assert no_token_left_the_client(world)


@pytest.mark.parametrize(
    "body",
    [
        b"{" * 100_000,
        b"[" * 5000 + b"]" * 5000,
        b'{"issuer": "https://as.example", "issuer": "https://as.example"}',
        b"not json",
        b"[]",
    ],
)
def test_malformed_metadata_is_a_discovery_error(body: bytes) -> None:
    def malformed(request: httpx.Request) -> httpx.Response | None:
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, content=body)
        return None

    assert isinstance(refused(World(override=malformed)), DiscoveryError)


def test_huge_answers_are_cut_at_the_bound() -> None:
    def huge(request: httpx.Request) -> httpx.Response | None:
        if request.url.path == "/token":
            return httpx.Response(200, content=b'{"access_token": "' + b"a" * 10_000_000 + b'"}')
        return None

    world = World(override=huge)
    assert isinstance(refused(world), FetchError) and no_token_left_the_client(world)


@pytest.mark.parametrize(
    "answer",
    [
        {"access_token": "a\r\nx-injected: 1", "token_type": "Bearer"},
        {"access_token": 5, "token_type": "Bearer"},
        {"token_type": "Bearer"},
        {"access_token": "x"},
    ],
)
def test_malformed_token_answers_are_token_errors(answer: dict[str, Any]) -> None:
    def malformed(request: httpx.Request) -> httpx.Response | None:
        return httpx.Response(200, json=answer) if request.url.path == "/token" else None

    world = World(override=malformed)
    assert isinstance(refused(world), TokenError) and no_token_left_the_client(world)


def test_a_token_endpoint_that_never_answers_is_a_fetch_error_in_bounded_time() -> None:
    class Silent(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            await asyncio.sleep(3600)
            raise AssertionError("unreachable")

    async def main() -> None:
        fetcher = HttpxFetcher(httpx.AsyncClient(transport=Silent()), timeout=0.2)
        await fetcher.fetch(Request("POST", f"{AS}/token", form={"grant_type": "x"}))

    started = time.monotonic()
    with pytest.raises(FetchError, match="no answer within"):
        asyncio.run(main())
    assert time.monotonic() - started < 5


def test_another_state_in_the_redirect_back_is_refused_and_the_code_never_redeemed() -> None:
    def forged(request: httpx.Request) -> httpx.Response | None:
        if request.url.path == "/authorize":
            back = "http://127.0.0.1:5555/callback?code=stolen&state=forged&iss=https%3A%2F%2Fas.example"
            return httpx.Response(302, headers={"location": back})
        return None

    world = World(override=forged)
    assert isinstance(refused(world), AuthorizationResponseError)
    assert world.sent("/token") == []


@pytest.mark.parametrize(
    "url",
    [
        "http://as.example/x",  # not https
        "https://127.0.0.1/x",  # loopback
        "https://10.1.2.3/x",  # private
        "https://169.254.169.254/latest/meta-data",  # link-local (cloud metadata)
        "https://[::1]/x",
        "https://localhost/x",
    ],
)
def test_the_guard_refuses_private_addresses_and_plain_http_without_connecting(url: str) -> None:
    contacted: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        contacted.append(request)
        return httpx.Response(200)

    async def main() -> None:
        fetcher = HttpxFetcher(httpx.AsyncClient(transport=httpx.MockTransport(record)), guard=True)
        await fetcher.fetch(Request("GET", url))

    with pytest.raises(FetchError):
        asyncio.run(main())
    assert contacted == []


def test_a_guarded_client_refuses_a_loopback_server_url() -> None:
    with pytest.raises(FetchError):
        OAuth(
            "http://127.0.0.1:8000/mcp",
            grant="client_credentials",
            client=None or _client(),
            guard=True,
        )


def _client() -> Any:

    return pre_registered()


def test_the_guard_refuses_a_name_that_resolves_to_a_private_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def resolve(self: object, host: str, *args: object, **kwargs: object) -> list[Any]:
        address = "10.0.0.5" if host == "internal.example" else "93.184.216.34"
        return [(2, 1, 6, "", (address, 0))]

    monkeypatch.setattr(asyncio.base_events.BaseEventLoop, "getaddrinfo", resolve)
    contacted: list[str] = []

    def record(request: httpx.Request) -> httpx.Response:
        contacted.append(str(request.url))
        return httpx.Response(200)

    async def main(url: str) -> None:
        fetcher = HttpxFetcher(httpx.AsyncClient(transport=httpx.MockTransport(record)), guard=True)
        await fetcher.fetch(Request("GET", url))

    with pytest.raises(FetchError, match="non-global"):
        asyncio.run(main("https://internal.example/.well-known/oauth-authorization-server"))
    asyncio.run(main("https://public.example/x"))
    assert contacted == ["https://public.example/x"]


@pytest.mark.parametrize(
    "back",
    [
        "https://evil.example/callback?code=c&state=STATE",  # another redirect URI
        "http://127.0.0.1:5555/callback?code=c&state=STATE&state=STATE",  # two states
        "http://127.0.0.1:5555/callback?error=access_denied&state=STATE&iss=https%3A%2F%2Fas.example",
        "http://127.0.0.1:5555/callback?state=STATE&iss=https%3A%2F%2Fas.example",  # no code
    ],
)
def test_a_redirect_back_that_is_not_the_one_expected_is_refused(back: str) -> None:
    def sent_back(request: httpx.Request) -> httpx.Response | None:
        if request.url.path == "/authorize":
            state = request.url.params["state"]
            return httpx.Response(302, headers={"location": back.replace("STATE", state)})
        return None

    world = World(override=sent_back, iss_supported=False)
    assert isinstance(refused(world), AuthorizationResponseError)
    assert world.sent("/token") == []
