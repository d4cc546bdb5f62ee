"""Against a real authorization server, node-oidc-provider (tests/auth/provider.py):
its client-credentials tokens, JWT access tokens bound to the resource
(RFC 8707, RFC 9068) found through its metadata and JWKS over HTTP, and
opaque tokens through its introspection endpoint; a token for another
resource, or one tampered with, is refused; the step-up challenge names the
scope a tool needs."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from mcp_schema.auth import (
    HttpFetcher,
    Introspector,
    JwtVerifier,
    Principal,
    RequiredScopes,
    ResourceServer,
    Secret,
)
from tests.auth.provider import provider, token
from tests.auth.tokens import bearer, refusal_of, run

RESOURCE = "http://127.0.0.1:9/mcp"
OPAQUE = "http://127.0.0.1:9/opaque"
ELSEWHERE = "http://127.0.0.1:9/elsewhere"
ALICE, ALICE_SECRET = "alice", "alice-secret-0123456789abcdef"
SERVER, SERVER_SECRET = "mcp-server", "server-secret-0123456789abcdef"
CLIENTS = [
    {"client_id": ALICE, "client_secret": ALICE_SECRET, "scope": "tools:read tools:write"},
    {"client_id": SERVER, "client_secret": SERVER_SECRET},  # introspects, asks no token
]
RESOURCES = {
    RESOURCE: {"format": "jwt", "scope": "tools:read tools:write"},
    ELSEWHERE: {"format": "jwt", "scope": "tools:read"},
    OPAQUE: {"format": "opaque", "scope": "tools:read"},
}


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider(CLIENTS, RESOURCES) as url:
        yield url


class Counted(HttpFetcher):
    """The real fetcher, counting what it fetches."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def fetch(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        self.asked.append(url)
        return await super().fetch(url, form=form, headers=headers)


def check(server: ResourceServer, *tokens: str) -> list[object]:
    async def main() -> list[object]:
        try:
            return [await server.authenticate(bearer(t)) for t in tokens]
        finally:
            await server.aclose()

    answers: list[object] = run(main())
    return answers


def test_its_jwt_access_tokens_are_taken_through_discovery_and_jwks(issuer: str) -> None:
    fetcher = Counted()
    verifier = JwtVerifier(issuer, RESOURCE, at_jwt=True, fetcher=fetcher)
    server = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=[issuer])
    first, second = (token(issuer, ALICE, ALICE_SECRET, RESOURCE, "tools:read") for _ in range(2))
    answers = check(server, first, second)
    assert all(isinstance(a, Principal) for a in answers)
    principal = answers[0]
    assert isinstance(principal, Principal)
    assert (principal.issuer, principal.subject, principal.client_id) == (issuer, ALICE, ALICE)
    assert principal.scopes == {"tools:read"}
    assert principal.expires_at is not None
    assert fetcher.asked == [f"{issuer}/.well-known/oauth-authorization-server", f"{issuer}/jwks"]


def test_a_token_for_another_resource_or_tampered_with_is_refused(issuer: str) -> None:
    server = ResourceServer(resource=RESOURCE, issuer=issuer)
    other = token(issuer, ALICE, ALICE_SECRET, ELSEWHERE, "tools:read")
    good = token(issuer, ALICE, ALICE_SECRET, RESOURCE, "tools:read")
    head, body, signature = good.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=="))
    claims["scope"] = "tools:read tools:write"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    unknown = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"at+jwt","kid":"nope"}').rstrip(b"=")
    hostile = [other, f"{head}.{forged}.{signature}", f"{unknown.decode()}.{body}.{signature}"]
    for answer in check(server, *hostile):
        status, params, _ = refusal_of(answer)
        assert (status, params["error"]) == (401, "invalid_token")


def test_the_step_up_challenge_names_the_scope_a_tool_needs(issuer: str) -> None:
    required = RequiredScopes(always=["tools:read"], tools={"write": ["tools:write"]})
    server = ResourceServer(resource=RESOURCE, issuer=issuer, required=required)
    (reader,) = check(server, token(issuer, ALICE, ALICE_SECRET, RESOURCE, "tools:read"))
    assert isinstance(reader, Principal)
    status, params, _ = refusal_of(server.step_up(reader, "tool", "write"))
    assert (status, params["scope"]) == (403, "tools:read tools:write")
    (writer,) = check(
        server, token(issuer, ALICE, ALICE_SECRET, RESOURCE, "tools:read tools:write")
    )
    assert isinstance(writer, Principal) and server.step_up(writer, "tool", "write") is None


def test_its_opaque_tokens_are_taken_through_introspection(
    issuer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_AUTH_CLIENT_SECRET", SERVER_SECRET)
    (tmp_path / "secret").write_text(SERVER_SECRET + "\n")
    for secret in (
        Secret.from_env("MCP_AUTH_CLIENT_SECRET"),
        Secret.from_file(tmp_path / "secret"),
    ):
        verifier = Introspector(issuer, OPAQUE, client_id=SERVER, client_secret=secret)
        server = ResourceServer(resource=OPAQUE, verifier=verifier, authorization_servers=[issuer])
        opaque = token(issuer, ALICE, ALICE_SECRET, OPAQUE, "tools:read")
        jwt_for_another = token(issuer, ALICE, ALICE_SECRET, RESOURCE, "tools:read")
        taken, made_up, another = check(server, opaque, "made-up-token", jwt_for_another)
        assert isinstance(taken, Principal)
        assert (taken.subject, taken.client_id, taken.scopes) == (
            None,
            ALICE,
            frozenset({"tools:read"}),
        )
        assert refusal_of(made_up)[:2] == (401, refusal_of(made_up)[1])
        assert refusal_of(made_up)[1]["error"] == "invalid_token"
        assert refusal_of(another)[1]["error"] == "invalid_token"  # its aud is another resource's


def test_a_wrong_client_secret_is_503_never_a_principal(issuer: str) -> None:
    verifier = Introspector(issuer, OPAQUE, client_id=SERVER, client_secret=Secret("wrong"))
    server = ResourceServer(resource=OPAQUE, verifier=verifier, authorization_servers=[issuer])
    (answer,) = check(server, token(issuer, ALICE, ALICE_SECRET, OPAQUE, "tools:read"))
    assert refusal_of(answer)[0] == 503
