"""Protected resource metadata (RFC 9728): the document the specification
requires (``authorization_servers`` never empty, ``scopes_supported`` never
``offline_access``), served at the path-inserted well-known URL and at the
root one, with CORS and no token, its URLs from the configured resource
alone, whatever ``Host`` or ``X-Forwarded-*`` a request carries."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.auth import WELL_KNOWN, ProtectedResource, RequiredScopes
from tests.auth.tokens import (
    ISSUER,
    METADATA_URL,
    RESOURCE,
    authenticated,
    refusal_of,
    resource_server,
)

DOCUMENT = {
    "resource": RESOURCE,
    "authorization_servers": [ISSUER],
    "bearer_methods_supported": ["header"],
}


def served(
    resource: ProtectedResource, path: str, method: str = "GET", **headers: str
) -> dict[str, object]:
    answer = resource.response(method, path, headers)
    assert answer is not None and answer.status == 200
    assert answer.header("content-type") == "application/json"
    assert answer.header("access-control-allow-origin") == "*"
    document: dict[str, object] = json.loads(answer.body)
    return document


def test_the_document_is_served_at_the_path_inserted_and_the_root_urls() -> None:
    resource = ProtectedResource(RESOURCE, [ISSUER])
    assert resource.url == METADATA_URL
    assert resource.paths == {"/.well-known/oauth-protected-resource/mcp", WELL_KNOWN}
    for path in resource.paths:
        assert served(resource, path) == DOCUMENT
    assert resource.response("GET", "/mcp", {}) is None  # the endpoint's: not the metadata's
    assert resource.response("GET", WELL_KNOWN + "/other", {}) is None


def test_a_resource_at_the_root_is_served_at_the_root_url() -> None:
    resource = ProtectedResource("https://mcp.example.com", [ISSUER])
    assert resource.url == "https://mcp.example.com" + WELL_KNOWN
    assert resource.paths == {WELL_KNOWN}


def test_a_deeper_path_keeps_its_every_segment() -> None:
    resource = ProtectedResource("https://example.com:8443/public/mcp", [ISSUER])
    assert (
        resource.url == "https://example.com:8443/.well-known/oauth-protected-resource/public/mcp"
    )


@pytest.mark.parametrize("servers", [[], ()])
def test_authorization_servers_are_never_empty(servers: list[str]) -> None:
    with pytest.raises(ValueError, match="authorization_servers"):
        ProtectedResource(RESOURCE, servers)


def test_offline_access_is_never_a_supported_scope() -> None:
    with pytest.raises(ValueError, match="offline_access"):
        ProtectedResource(RESOURCE, [ISSUER], scopes_supported=["tools:read", "offline_access"])
    with pytest.raises(ValueError, match="offline_access"):
        RequiredScopes(always=["offline_access"])


def test_scopes_supported_default_to_what_every_request_needs() -> None:
    server = resource_server(required=RequiredScopes(always=["mcp"], tools={"x": ["admin"]}))
    assert served(server.metadata, WELL_KNOWN)["scopes_supported"] == ["mcp"]
    assert "scopes_supported" not in served(resource_server().metadata, WELL_KNOWN)


@pytest.mark.parametrize(
    "resource",
    [
        "mcp.example.com",  # no scheme
        "https://mcp.example.com/mcp#frag",
        "https://mcp.example.com/mcp?x=1",
        "http://mcp.example.com/mcp",  # http off loopback
        "https://MCP.example.com/mcp",  # not the canonical (lower-case) form
        "HTTPS://mcp.example.com/mcp",
        "https://mcp.example.com/mcp/",
        "https://user@mcp.example.com/mcp",
        'https://mcp.example.com/"mcp',
        "https://mcp.example.com/\r\nmcp",
        "https://" + "a" * 500 + ".com",
    ],
)
def test_a_resource_that_is_no_canonical_https_uri_is_refused(resource: str) -> None:
    with pytest.raises(ValueError):
        ProtectedResource(resource, [ISSUER])


@pytest.mark.parametrize(
    "issuer", ["http://auth.example.com", "https://auth.example.com?x", "ftp://a.b"]
)
def test_an_authorization_server_that_is_no_https_url_is_refused(issuer: str) -> None:
    with pytest.raises(ValueError):
        ProtectedResource(RESOURCE, [issuer])


def test_http_is_allowed_on_loopback() -> None:
    resource = ProtectedResource("http://127.0.0.1:8000/mcp", ["http://localhost:9000"])
    assert resource.url == "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


def test_a_preflight_needs_no_token_and_any_origin_may_read() -> None:
    server = resource_server()
    asked = {
        "origin": "https://app.example.com",
        "access-control-request-method": "GET",
        "access-control-request-headers": "mcp-protocol-version",
    }
    answer = server.metadata_response("OPTIONS", WELL_KNOWN + "/mcp", asked)
    assert answer is not None and answer.status == 204
    assert dict(answer.headers) == {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, HEAD, OPTIONS",
        "access-control-allow-headers": "*",
        "access-control-max-age": "300",
    }


def test_another_method_is_405() -> None:
    answer = ProtectedResource(RESOURCE, [ISSUER]).response("POST", WELL_KNOWN, {})
    assert answer is not None and answer.status == 405
    assert answer.header("allow") == "GET, HEAD, OPTIONS"


def test_each_answer_is_a_new_response() -> None:
    # A front door adds its own headers to what it sends (in place).
    resource = ProtectedResource(RESOURCE, [ISSUER])
    first = resource.response("GET", WELL_KNOWN, {})
    assert first is not None
    first.headers.append(("x-added", "1"))
    again = resource.response("GET", WELL_KNOWN, {})
    assert again is not None and again.header("x-added") is None


header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)


@given(host=header_text, forwarded=header_text, proto=header_text)
def test_no_url_follows_host_or_forwarded_headers(host: str, forwarded: str, proto: str) -> None:
    server = resource_server()
    received = {
        "host": host,
        "x-forwarded-host": forwarded,
        "x-forwarded-proto": proto,
        "forwarded": f"host={forwarded};proto={proto}",
    }
    assert served(server.metadata, WELL_KNOWN + "/mcp", **received) == DOCUMENT
    _, params, _ = refusal_of(authenticated(server, received))
    assert params["resource_metadata"] == METADATA_URL


def test_the_401_names_the_metadata_url_clients_fetch() -> None:
    status, params, _ = refusal_of(authenticated(resource_server(), {}))
    assert (status, params) == (401, {"resource_metadata": METADATA_URL})
