"""`ResourceServer.authenticate`: a token's principal, or the refusal; the
cache of verified tokens (bounded, never past ``exp``, keyed by digest);
503 when the authorization server cannot be reached; and a token never in
any ``repr``, error, refusal or attribute of what verified it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_schema.auth import (
    InvalidToken,
    JwtVerifier,
    Principal,
    ResourceServer,
    TokenVerifier,
    VerifierUnavailable,
)
from mcp_schema.auth.principal import MAX_NAME
from mcp_schema.tasks.record import MAX_PRINCIPAL
from tests.auth.tokens import (
    ISSUER,
    JWKS_URL,
    RESOURCE,
    FakeFetcher,
    authenticated,
    authorization_server,
    bearer,
    claims,
    refusal_of,
    resource_server,
    run,
    sign,
)


class Counting:
    """A `TokenVerifier` taking any token, as ``principal`` or ``refusal``; counts its calls."""

    def __init__(
        self, principal: Principal | None = None, refusal: Exception | None = None
    ) -> None:
        self.principal, self.refusal, self.calls, self.cache_seconds = principal, refusal, 0, 60.0

    async def verify(self, token: str) -> Principal:
        self.calls += 1
        if self.refusal is not None:
            raise self.refusal
        assert self.principal is not None
        return self.principal


def alice(expires_at: float | None = 2_000.0, **changed: Any) -> Principal:
    fields: dict[str, Any] = {
        "issuer": ISSUER,
        "subject": "alice",
        "client_id": "app",
        "scopes": frozenset({"tools:read"}),
        "expires_at": expires_at,
        **changed,
    }
    return Principal(**fields)


def served_by(
    verifier: TokenVerifier, clock: list[float] | None = None, **options: Any
) -> ResourceServer:
    now = clock or [1_000.0]
    return ResourceServer(
        resource=RESOURCE,
        verifier=verifier,
        authorization_servers=[ISSUER],
        clock=lambda: now[0],
        **options,
    )


def test_a_token_is_verified_once_while_cached() -> None:
    verifier = Counting(alice())
    server = served_by(verifier)
    for _ in range(5):
        assert authenticated(server, bearer("t1")) == alice()
    assert verifier.calls == 1
    authenticated(server, bearer("t2"))
    assert verifier.calls == 2


def test_a_cached_token_is_checked_again_at_its_expiry_and_after_cache_seconds() -> None:
    verifier, clock = Counting(alice(expires_at=1_030.0)), [1_000.0]
    server = served_by(verifier, clock)
    authenticated(server, bearer("t"))
    clock[0] = 1_029.9
    authenticated(server, bearer("t"))
    assert verifier.calls == 1
    clock[0] = 1_030.0  # exp: never taken from the cache again
    authenticated(server, bearer("t"))
    assert verifier.calls == 2
    verifier.principal = alice(expires_at=None)
    clock[0] = 2_000.0
    authenticated(server, bearer("u"))
    clock[0] = 2_060.0  # cache_seconds of the verifier
    authenticated(server, bearer("u"))
    assert verifier.calls == 4


def test_the_cache_is_bounded_and_can_be_off() -> None:
    verifier = Counting(alice())
    server = served_by(verifier, cache_size=3)
    for n in range(10):
        authenticated(server, bearer(f"t{n}"))
    assert len(server.tokens) == 3
    authenticated(server, bearer("t0"))  # let go of: verified again
    assert verifier.calls == 11
    unkept = served_by(Counting(alice()), cache_size=0)
    authenticated(unkept, bearer("t"))
    assert len(unkept.tokens) == 0


def test_a_refused_token_is_not_cached() -> None:
    verifier = Counting(refusal=InvalidToken("the token has expired"))
    server = served_by(verifier)
    for _ in range(3):
        status, params, _ = refusal_of(authenticated(server, bearer("t")))
        assert (status, params["error_description"]) == (401, "the token has expired")
    assert verifier.calls == 3


def test_an_unreachable_authorization_server_is_503_not_401() -> None:
    server = resource_server(FakeFetcher({}))  # every fetch fails
    answer = authenticated(server, bearer(sign()))
    status, params, body = refusal_of(answer)
    assert (status, params) == (503, {})
    assert answer.header("retry-after") == "5"  # type: ignore[union-attr]
    assert body["error"]["code"] == -32603
    # And it is not asked again for each request: once per refresh interval.
    fetcher = FakeFetcher({})
    server = resource_server(fetcher)
    for _ in range(20):
        authenticated(server, bearer(sign()))
    assert len(fetcher.asked) == 2  # the two discovery URLs of an issuer at the root


def test_requests_arriving_together_share_one_discovery_and_one_key_fetch() -> None:
    fetcher = authorization_server()
    fetcher.delay = 0.01
    server = resource_server(fetcher)

    async def main() -> list[object]:
        return list(await asyncio.gather(*(server.authenticate(bearer(sign())) for _ in range(50))))

    assert all(isinstance(answer, Principal) for answer in run(main()))
    assert len(fetcher.asked) == 3  # two discovery URLs, one JWKS


def test_metadata_naming_another_issuer_is_never_used() -> None:
    fetcher = authorization_server(issuer="https://evil.example.com")
    fetcher.answers[f"{ISSUER}/.well-known/openid-configuration"] = fetcher.answers.pop(
        "https://evil.example.com/.well-known/openid-configuration"
    )
    assert refusal_of(authenticated(resource_server(fetcher), bearer(sign())))[0] == 503
    assert JWKS_URL not in fetcher.asked


def test_rfc_8414_metadata_is_asked_for_before_openid_discovery() -> None:
    fetcher = authorization_server()
    assert isinstance(authenticated(resource_server(fetcher), bearer(sign())), Principal)
    assert fetcher.asked == [
        f"{ISSUER}/.well-known/oauth-authorization-server",
        f"{ISSUER}/.well-known/openid-configuration",
        JWKS_URL,
    ]


def test_an_issuer_with_a_path_is_discovered_in_the_specifications_order() -> None:
    issuer = "https://auth.example.com/tenant1"
    fetcher = FakeFetcher({})
    verifier = JwtVerifier(issuer, RESOURCE, fetcher=fetcher)
    run(
        ResourceServer(
            resource=RESOURCE, verifier=verifier, authorization_servers=[issuer]
        ).authenticate(bearer(sign()))
    )
    assert fetcher.asked == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]


def test_a_jwks_uri_that_is_not_https_is_never_fetched() -> None:
    fetcher = authorization_server()
    metadata = {"issuer": ISSUER, "jwks_uri": "http://auth.example.com/jwks"}
    fetcher.answers[f"{ISSUER}/.well-known/openid-configuration"] = json.dumps(metadata).encode()
    assert refusal_of(authenticated(resource_server(fetcher), bearer(sign())))[0] == 503
    assert not any(url.endswith("/jwks") for url in fetcher.asked)


def test_the_principal_is_the_issuer_and_subject_or_client() -> None:
    user = authenticated(resource_server(), bearer(sign()))
    machine = authenticated(resource_server(), bearer(sign(claims(sub=None))))
    assert isinstance(user, Principal) and isinstance(machine, Principal)
    assert user.name == json.dumps([ISSUER, "sub", "alice"], separators=(",", ":"))
    assert machine.name == json.dumps([ISSUER, "client_id", "app"], separators=(",", ":"))
    # A client named like a user is not that user; the longest name fits a task store.
    assert alice(subject=None, client_id="alice").name != alice().name
    longest = alice(subject='"' * MAX_NAME, issuer="https://" + "a" * 392)
    assert len(longest.name) <= MAX_PRINCIPAL


def test_the_same_user_through_two_clients_is_one_principal() -> None:
    one = authenticated(resource_server(), bearer(sign(claims(client_id="app-1"))))
    two = authenticated(resource_server(), bearer(sign(claims(client_id="app-2"))))
    assert isinstance(one, Principal) and isinstance(two, Principal)
    assert one.name == two.name


def test_a_token_is_never_kept_shown_or_told() -> None:
    token = sign()
    server = resource_server()
    principal = authenticated(server, bearer(token))
    assert isinstance(principal, Principal)
    held = [server, principal, server.verifier, server.tokens, server.metadata]
    shown = " ".join(
        [*map(repr, held), *map(str, held), repr(vars(server)), repr(server.tokens._kept)]
    )
    assert token not in shown and token.split(".")[2] not in shown
    refused = authenticated(server, bearer(token[:-4] + "AAAA"))
    assert token[:-4] not in repr(refused) and token.split(".")[1] not in repr(refused)


def test_either_an_issuer_or_a_verifier() -> None:
    with pytest.raises(ValueError):
        ResourceServer(resource=RESOURCE)
    with pytest.raises(ValueError):
        ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=Counting())
    with pytest.raises(ValueError, match="authorization_servers"):
        ResourceServer(resource=RESOURCE, verifier=Counting())
    server = ResourceServer(resource=RESOURCE, issuer=ISSUER)
    assert isinstance(server.verifier, JwtVerifier) and server.metadata.document[
        "authorization_servers"
    ] == [ISSUER]
    with pytest.raises(ValueError):
        JwtVerifier(ISSUER, RESOURCE, algorithms=["HS256"])
    with pytest.raises(ValueError):
        JwtVerifier(ISSUER, RESOURCE, algorithms=["none"])
    with pytest.raises(ValueError):
        JwtVerifier("http://auth.example.com", RESOURCE)


def test_unavailable_is_its_own_failure() -> None:
    server = served_by(
        Counting(refusal=VerifierUnavailable("the introspection endpoint did not answer"))
    )
    assert refusal_of(authenticated(server, bearer("t")))[0] == 503
