"""Whatever a server sends, the OAuth client's readers end in their record
or a typed `AuthorizationError`, never a foreign exception: metadata,
token and registration answers (any bytes, any JSON of the right members),
and the redirect back (any text)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.oauth import AuthorizationError, ClientInfo
from mcp_schema.oauth.grants import (
    authorization_request,
    read_callback,
    read_registration,
    read_tokens,
)
from mcp_schema.oauth.metadata import read_resource, read_server

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
    except AuthorizationError:
        pass


@given(BODIES)
def test_metadata_of_any_shape_is_read_or_refused(body: bytes) -> None:
    typed(read_resource, body, SERVER)
    typed(read_server, body, ISSUER)


@given(st.integers(100, 599), BODIES)
def test_token_and_registration_answers_of_any_shape_are_read_or_refused(
    status: int, body: bytes
) -> None:
    typed(read_tokens, status, body, None)
    server = read_server(
        json.dumps({"issuer": ISSUER, "token_endpoint": f"{ISSUER}/token"}).encode(), ISSUER
    )
    typed(read_registration, status, body, server)


@given(st.text(max_size=300))
def test_any_redirect_back_is_read_or_refused(back: str) -> None:
    document = {
        "issuer": ISSUER,
        "token_endpoint": f"{ISSUER}/token",
        "authorization_endpoint": f"{ISSUER}/authorize",
    }
    server = read_server(json.dumps(document).encode(), ISSUER)
    pending = authorization_request(server, ClientInfo("c"), "http://127.0.0.1:1/cb", SERVER, None)
    typed(read_callback, pending, back)
    typed(read_callback, pending, f"http://127.0.0.1:1/cb?{back}")
