"""The OAuth client's parts, one by one: the ``WWW-Authenticate`` reader
(any text ends in a challenge or none, never an exception), the well-known
URLs in the specification's order, the resource check, the loopback
redirect receiver on 127.0.0.1, and the ``private_key_jwt`` assertion."""

from __future__ import annotations

import asyncio

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.oauth import LoopbackRedirect, read_challenge
from mcp_schema.oauth.assertion import signer
from mcp_schema.oauth.challenge import MAX_CHALLENGE
from mcp_schema.oauth.urls import (
    canonical_resource,
    resource_covers,
    resource_metadata_urls,
    server_metadata_urls,
)


def test_the_bearer_challenge_is_read_among_others() -> None:
    header = 'Basic realm="x", Bearer error="insufficient_scope", scope="a b a", resource_metadata="https://m/x", error_description="q\\"uote"'
    found = read_challenge([header])
    assert found is not None
    assert (found.error, found.scopes, found.resource_metadata) == (
        "insufficient_scope",
        ("a", "b"),
        "https://m/x",
    )
    assert read_challenge(["Negotiate abc=="]) is None
    assert read_challenge(['Bearer scope="x"', 'Bearer scope="y"']).scopes == ("x",)  # type: ignore[union-attr]


@given(st.lists(st.text(max_size=300), max_size=4))
def test_any_header_reads_into_a_challenge_or_none(headers: list[str]) -> None:
    found = read_challenge(headers)
    if found is not None and found.resource_metadata is not None:
        assert len(found.resource_metadata) <= MAX_CHALLENGE


def test_the_well_known_urls_come_in_the_specifications_order() -> None:
    assert resource_metadata_urls("https://a.example/public/mcp") == [
        "https://a.example/.well-known/oauth-protected-resource/public/mcp",
        "https://a.example/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://a.example") == [
        "https://a.example/.well-known/oauth-protected-resource"
    ]
    assert server_metadata_urls("https://auth.example/tenant1") == [
        "https://auth.example/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example/.well-known/openid-configuration/tenant1",
        "https://auth.example/tenant1/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://auth.example") == [
        "https://auth.example/.well-known/oauth-authorization-server",
        "https://auth.example/.well-known/openid-configuration",
    ]


def test_the_resource_must_be_the_servers_or_a_parent_of_it() -> None:
    server = "https://MCP.example/api/mcp"
    assert canonical_resource(server) == "https://mcp.example/api/mcp"
    for resource in [
        "https://mcp.example/api/mcp",
        "https://mcp.example/api",
        "https://mcp.example",
    ]:
        assert resource_covers(resource, server), resource
    for resource in [
        "https://evil.example/api/mcp",
        "http://mcp.example/api/mcp",
        "https://mcp.example:8443/api/mcp",
        "https://mcp.example/ap",
        "https://mcp.example/api/mcp/deeper",
        "not a url",
    ]:
        assert not resource_covers(resource, server), resource


def test_the_loopback_receiver_takes_the_one_redirect_back() -> None:
    async def main() -> tuple[str, str]:
        async with LoopbackRedirect(lambda url: None, timeout=10) as redirect:
            uri = redirect.redirect_uri

            async def browser() -> None:
                async with httpx.AsyncClient() as http:
                    assert (await http.get(f"{uri.rsplit('/', 1)[0]}/elsewhere")).status_code == 404
                    assert (await http.get(f"{uri}?code=c&state=s")).status_code == 200

            visit = asyncio.ensure_future(browser())
            back = await redirect.authorize("https://as.example/authorize")
            await visit
            return uri, back

    uri, back = asyncio.run(main())
    assert uri.startswith("http://127.0.0.1:") and back == f"{uri}?code=c&state=s"


def test_the_loopback_receiver_gives_up_in_its_time() -> None:
    async def main() -> None:
        async with LoopbackRedirect(lambda url: None, timeout=0.1) as redirect:
            await redirect.authorize("https://as.example/authorize")

    try:
        asyncio.run(main())
    except Exception as exc:
        assert type(exc).__name__ == "AuthorizationResponseError"
    else:
        raise AssertionError("no timeout")


def test_the_client_assertion_names_the_client_and_the_issuer() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    assertion = signer(pem, "ES256")("client-1", "https://as.example")
    claims = jwt.decode(
        assertion, key.public_key(), algorithms=["ES256"], audience="https://as.example"
    )
    assert claims["iss"] == claims["sub"] == "client-1"
    assert claims["exp"] - claims["iat"] == 300 and claims["jti"]
