"""The OAuth client end to end, `HttpClient` driving it against a protected
server and its authorization server in memory (tests/oauth/world.py):
discovery, registration in the specification's order, the code grant with
PKCE and its checks, the resource on every request, scope selection and
step-up, refresh before a new authorization, and another issuer."""

from __future__ import annotations

import asyncio
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_schema.http.client import HttpClient
from mcp_schema.oauth import OAuth, TokenKey
from tests.oauth.world import AS, INFO, MCP, OTHER_AS, World, pre_registered


def connect(world: World, auth: OAuth) -> Any:
    async def main() -> Any:
        async with world.client(auth) as client:
            return await client.list_tools()

    return asyncio.run(main())


def test_a_401_is_answered_by_discovery_registration_and_the_code_grant() -> None:
    world = World()
    connect(world, world.oauth())
    paths = [r.url.path for r in world.requests]
    assert paths[:6] == [
        "/api/mcp",
        "/.well-known/oauth-protected-resource/api/mcp",
        "/.well-known/oauth-authorization-server",
        "/register",
        "/authorize",
        "/token",
    ]
    (query,) = world.authorizations()
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [MCP]
    assert query["client_id"] == ["client-1-https://as.example"]
    (form,) = world.forms()
    assert form["resource"] == [MCP] and "code_verifier" in form
    (registration,) = world.sent("/register")
    assert b'"application_type":"native"' in registration.content.replace(b" ", b"")
    calls = world.sent("/api/mcp")[1:]
    assert calls and all(r.headers["authorization"] == "Bearer token-0" for r in calls)


def test_registration_prefers_pre_registered_then_the_metadata_document() -> None:
    world = World(cimd=True, auth_methods=["client_secret_basic"])
    connect(
        world,
        world.oauth(client=pre_registered(), client_metadata_url="https://app.example/c.json"),
    )
    assert world.sent("/register") == [] and world.authorizations()[0]["client_id"] == ["pre"]
    assert world.sent("/token")[0].headers["authorization"].startswith("Basic ")
    world = World(cimd=True)
    connect(world, world.oauth(client_metadata_url="https://app.example/c.json"))
    assert world.sent("/register") == []
    assert world.authorizations()[0]["client_id"] == ["https://app.example/c.json"]


def test_client_secret_post_and_none_at_the_token_endpoint() -> None:
    world = World(auth_methods=["client_secret_post"])
    connect(world, world.oauth(client=pre_registered()))
    (form,) = world.forms()
    assert (
        form["client_secret"] == ["s3cret"]
        and "authorization" not in world.sent("/token")[0].headers
    )
    world = World()
    connect(world, world.oauth())
    (form,) = world.forms()
    assert "client_secret" not in form and form["client_id"] == ["client-1-https://as.example"]


def test_scopes_come_from_the_challenge_else_the_metadata_with_offline_access_where_listed() -> (
    None
):
    world = World(scope_challenge="files:read", prm_scopes=["a", "b"], as_scopes=["offline_access"])
    connect(world, world.oauth())
    assert world.authorizations()[0]["scope"] == ["files:read offline_access"]
    world = World(prm_scopes=["a", "b"])
    connect(world, world.oauth())
    assert world.authorizations()[0]["scope"] == ["a b"]
    world = World()
    connect(world, world.oauth())
    assert "scope" not in world.authorizations()[0]


def test_step_up_asks_for_the_union_of_the_scopes() -> None:
    world = World(scope_challenge="basic", needs="write")
    connect(world, world.oauth())
    first, second = world.authorizations()
    assert first["scope"] == ["basic"] and second["scope"] == ["basic write"]


def test_a_refused_token_is_refreshed_before_a_new_authorization() -> None:
    world = World(refresh=True)
    auth = world.oauth()
    connect(world, auth)
    world.granted.clear()  # the server forgets the token: the next request is refused
    connect(world, auth)
    assert len(world.authorizations()) == 1
    assert [f["grant_type"] for f in world.forms()] == [["authorization_code"], ["refresh_token"]]
    assert world.forms()[1]["resource"] == [MCP]


def test_tokens_are_kept_by_resource_and_issuer() -> None:
    world = World()
    auth = world.oauth()
    connect(world, auth)
    kept = asyncio.run(auth.store.get(TokenKey(MCP, AS)))
    assert kept is not None and kept.access_token == "token-0"
    assert "token-0" not in repr(kept) and "token-0" not in repr(auth)


def test_another_issuer_is_registered_with_anew_and_sees_no_credentials_of_the_first() -> None:
    world = World(authorization_servers=[AS, OTHER_AS])
    auth = world.oauth()
    connect(world, auth)
    world.authorization_servers = [OTHER_AS]
    world.granted.clear()
    connect(world, auth)
    at_other = [r for r in world.requests if r.url.host == "other-as.example"]
    assert [r.url.path for r in at_other if r.url.path == "/register"] == ["/register"]
    assert all(b"client-1-https://as.example" not in r.content for r in at_other)
    assert all("client-1" not in r.url.query.decode() for r in at_other)


def test_the_iss_of_the_redirect_back_is_compared_as_the_specification_tabulates() -> None:
    for iss, supported, proceeds in [
        ("correct", True, True),
        ("omit", False, True),
        ("omit", True, False),
        ("wrong", True, False),
        ("wrong", False, False),
    ]:
        world = World(iss=iss, iss_supported=supported)
        try:
            connect(world, world.oauth())
        except Exception as exc:
            assert type(exc).__name__ == "AuthorizationResponseError", (iss, supported, exc)
        assert bool(world.sent("/token")) is proceeds, (iss, supported)


def test_a_token_the_source_was_told_is_refused_is_not_sent_again() -> None:
    world = World()
    auth = world.oauth()
    connect(world, auth)
    refused = asyncio.run(auth.authorization())
    assert refused is not None
    auth.rejected(refused)
    assert asyncio.run(auth.authorization()) is None  # no refresh token: the 401 says what next
    world.granted.clear()
    connect(world, auth)
    assert len(world.authorizations()) == 2
    assert all(r.headers.get("authorization") != refused for r in world.sent("/api/mcp")[-2:])


def test_concurrent_challenges_share_one_authorization() -> None:
    world = World()

    async def main() -> None:
        async with world.client(world.oauth()) as client:
            await asyncio.gather(*(client.list_tools() for _ in range(5)))

    asyncio.run(main())
    assert len(world.authorizations()) == 1


def test_private_key_jwt_sends_a_signed_assertion_for_the_issuer() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    world = World(auth_methods=["private_key_jwt"])
    auth = world.oauth(
        grant="client_credentials", client=pre_registered(secret=None), private_key=pem
    )
    connect(world, auth)
    (form,) = world.forms()
    assert form["grant_type"] == ["client_credentials"] and form["resource"] == [MCP]
    claims = jwt.decode(
        form["client_assertion"][0], key.public_key(), algorithms=["ES256"], audience=AS
    )
    assert claims["iss"] == claims["sub"] == "pre"
    assert world.sent("/authorize") == [] and world.sent("/register") == []


class Rotating:
    """A plain `CredentialSource`: its next credential once told of a refusal."""

    def __init__(self, *credentials: str) -> None:
        self.credentials = list(credentials)
        self.refused: list[str] = []

    async def authorization(self) -> str | None:
        return self.credentials[0] if self.credentials else None

    def rejected(self, authorization: str) -> None:
        self.refused.append(authorization)
        if self.credentials and self.credentials[0] == authorization:
            self.credentials.pop(0)


def test_a_plain_credential_source_is_told_of_a_401_and_the_request_sent_once_more() -> None:
    world = World()
    world.granted["good"] = set()
    source = Rotating("Bearer stale", "Bearer good")

    async def main() -> Any:
        async with HttpClient(
            MCP, info=INFO, mode="handshake", http=world.http(), auth=source
        ) as c:
            return await c.list_tools()

    asyncio.run(main())
    assert source.refused == ["Bearer stale"]
    world, source = World(), Rotating("Bearer a", "Bearer b")  # refused both: one retry only

    try:
        asyncio.run(main())
    except Exception as exc:
        assert type(exc).__name__ == "TransportError" and getattr(exc, "status", None) == 401
    assert source.refused == ["Bearer a"]
