"""Whatever a server sends, the OAuth client's readers end in their record
or a typed `AuthorizationError` of bounded text, never a foreign exception:
metadata, token and registration answers (any bytes, any JSON of the right
members, members of megabytes), the redirect back (any text) and the
``WWW-Authenticate`` challenge, each in time linear in its size."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.oauth import AuthorizationError, ClientInfo
from mcp_schema.oauth.challenge import MAX_CHALLENGE, read_challenge
from mcp_schema.oauth.grants import (
    authorization_request,
    read_callback,
    read_registration,
    read_tokens,
)
from mcp_schema.oauth.metadata import read_resource, read_server
from mcp_schema.oauth.urls import endpoint
from tests.hostile import bounded, costs_linearly

SERVER = "https://mcp.example/mcp"
ISSUER = "https://as.example"
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
URLISH = st.sampled_from(
    [ISSUER, f"{ISSUER}/token", "http://127.0.0.1:1/x", "http://evil.example/x", "nope", ""]
)
METADATA_KEYS = [
    "issuer",
    "resource",
    "authorization_servers",
    "scopes_supported",
    "token_endpoint",
    "authorization_endpoint",
    "registration_endpoint",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "authorization_response_iss_parameter_supported",
    "access_token",
    "token_type",
    "expires_in",
    "refresh_token",
    "client_id",
    "client_secret",
    "token_endpoint_auth_method",
]
DOCUMENTS = st.dictionaries(st.sampled_from(METADATA_KEYS), JSON_VALUES | URLISH, max_size=10)
BODIES = st.binary(max_size=200) | DOCUMENTS.map(lambda d: json.dumps(d).encode())


def typed(read: Any, *args: Any) -> None:
    try:
        read(*args)
    except AuthorizationError as exc:
        bounded(exc)


@settings(max_examples=50)  # drawing nested JSON is what costs
@given(BODIES)
def test_metadata_of_any_shape_is_read_or_refused(body: bytes) -> None:
    typed(read_resource, body, SERVER)
    typed(read_server, body, ISSUER)


@settings(max_examples=50)
@given(st.integers(100, 599), BODIES)
def test_token_and_registration_answers_of_any_shape_are_read_or_refused(
    status: int, body: bytes
) -> None:
    typed(read_tokens, status, body, None)
    server = read_server(
        json.dumps({"issuer": ISSUER, "token_endpoint": f"{ISSUER}/token"}).encode(), ISSUER
    )
    typed(read_registration, status, body, server)


def pending_request() -> Any:
    document = {
        "issuer": ISSUER,
        "token_endpoint": f"{ISSUER}/token",
        "authorization_endpoint": f"{ISSUER}/authorize",
    }
    server = read_server(json.dumps(document).encode(), ISSUER)
    return authorization_request(server, ClientInfo("c"), "http://127.0.0.1:1/cb", SERVER, None)


@given(st.text(max_size=300))
def test_any_redirect_back_is_read_or_refused(back: str) -> None:
    pending = pending_request()
    typed(read_callback, pending, back)
    typed(read_callback, pending, f"http://127.0.0.1:1/cb?{back}")


HUGE = "\u2028" + "é\n" * (1 << 15)  # 64 KiB of what must not reach a message whole
HUGE_MEMBERS = [
    {"resource": HUGE},
    {"resource": SERVER, "authorization_servers": [HUGE] * 4},
    {"issuer": HUGE},
    {"issuer": [HUGE]},
    {"issuer": ISSUER, "token_endpoint": HUGE},
    {"access_token": HUGE, "token_type": "Bearer"},
    {"access_token": "a", "token_type": HUGE},
    {"error": HUGE, "error_description": HUGE},
    {"client_id": HUGE},
]


def test_members_of_megabytes_are_refused_in_bounded_text() -> None:
    for document in HUGE_MEMBERS:
        body = json.dumps(document).encode()
        typed(read_resource, body, SERVER)
        typed(read_server, body, ISSUER)
        for status in (200, 400):
            typed(read_tokens, status, body, None)
        typed(read_registration, 400, body, read_server(BARE_SERVER, ISSUER))
    typed(read_callback, pending_request(), f"http://127.0.0.1:1/cb?error={HUGE}&state=x")
    typed(read_callback, pending_request(), f"http://127.0.0.1:1/cb?{'a&' * 100_000}")
    typed(endpoint, HUGE, "an endpoint")
    found = read_challenge([f'Bearer resource_metadata="{HUGE}"'] * 100)
    assert found is not None  # its parameter cut at MAX_CHALLENGE: unreadable, so none
    assert found.resource_metadata is None or len(found.resource_metadata) <= MAX_CHALLENGE


BARE_SERVER = json.dumps({"issuer": ISSUER, "token_endpoint": f"{ISSUER}/token"}).encode()


def test_each_reader_costs_time_linear_in_its_input() -> None:
    def metadata(count: int) -> bytes:
        servers = [f"https://as{i}.example" for i in range(count)]
        return json.dumps({"resource": SERVER, "authorization_servers": servers}).encode()

    costs_linearly(lambda body: read_resource(body, SERVER), metadata(2_000), metadata(16_000))

    def challenges(count: int) -> list[str]:
        return ['Basic realm="x", Bearer error="e", scope="a b"'] * count

    costs_linearly(read_challenge, challenges(2_000), challenges(16_000))
    costs_linearly(
        lambda back: typed(read_callback, pending_request(), back),
        f"http://127.0.0.1:1/cb?state={'x' * 20_000}",
        f"http://127.0.0.1:1/cb?state={'x' * 160_000}",
    )
