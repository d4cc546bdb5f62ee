"""RFC 7662 introspection of opaque tokens: taken only when ``active``, for
this resource (``aud``), from the issuer, an access token, in its lifetime,
with scope tokens; the resource server authenticates with a secret from
the environment or a file, which no ``repr`` shows; no more checks at once
than ``max_checks``; kept no longer than the token lives."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest

from mcp_schema.auth import Introspector, Principal, ResourceServer, Secret
from tests.auth.tokens import (
    ISSUER,
    RESOURCE,
    FakeFetcher,
    authenticated,
    bearer,
    refusal_of,
    run,
)

ENDPOINT = "https://auth.example.com/introspect"
SECRET = "s3cret:with+odd/chars"


def active(**changed: Any) -> dict[str, Any]:
    now = int(time.time())
    answer = {
        "active": True,
        "client_id": "app",
        "iss": ISSUER,
        "aud": RESOURCE,
        "scope": "tools:read tools:write",
        "exp": now + 300,
        "iat": now,
        "token_type": "Bearer",
    }
    answer.update(changed)
    return {k: v for k, v in answer.items() if v is not None}


def server_answering(
    answer: Mapping[str, Any], **options: Any
) -> tuple[ResourceServer, FakeFetcher]:
    fetcher = FakeFetcher({ENDPOINT: json.dumps(answer).encode()})
    verifier = Introspector(
        ISSUER,
        RESOURCE,
        client_id="mcp-server",
        client_secret=Secret(SECRET),
        endpoint=ENDPOINT,
        fetcher=fetcher,
        **options,
    )
    return ResourceServer(
        resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER]
    ), fetcher


def test_an_active_token_for_this_resource_is_taken() -> None:
    server, fetcher = server_answering(active())
    principal = authenticated(server, bearer("opaque-token"))
    assert isinstance(principal, Principal)
    assert (principal.subject, principal.client_id) == (None, "app")
    assert principal.scopes == {"tools:read", "tools:write"}
    assert fetcher.forms == [{"token": "opaque-token", "token_type_hint": "access_token"}]
    scheme, _, credentials = fetcher.headers[0]["authorization"].partition(" ")
    assert scheme == "Basic"
    # RFC 6749 2.3.1: both parts form-encoded before Basic.
    assert base64.b64decode(credentials).decode() == "mcp-server:s3cret%3Awith%2Bodd%2Fchars"


@pytest.mark.parametrize(
    "answer",
    [
        {"active": False},
        active(active="true"),
        active(aud="https://other.example.com/mcp"),
        active(aud=None),
        active(aud=[RESOURCE + "x"]),
        active(iss="https://evil.example.com"),
        active(token_type="refresh_token"),
        active(exp=int(time.time()) - 3600),
        active(nbf=int(time.time()) + 3600),
        active(exp="soon"),
        active(scope=["a b"]),
        active(cnf={"x5t#S256": "x"}),
        active(client_id=None, sub=None),
    ],
)
def test_a_token_the_answer_does_not_vouch_for_in_full_is_refused(answer: dict[str, Any]) -> None:
    server, _ = server_answering(answer)
    status, params, _ = refusal_of(authenticated(server, bearer("t")))
    assert (status, params["error"]) == (401, "invalid_token")


def test_an_answer_that_is_no_json_object_is_503() -> None:
    for body in (b"<html>", b"[]", b""):
        fetcher = FakeFetcher({ENDPOINT: body})
        verifier = Introspector(
            ISSUER,
            RESOURCE,
            client_id="c",
            client_secret=Secret("s"),
            endpoint=ENDPOINT,
            fetcher=fetcher,
        )
        server = ResourceServer(
            resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER]
        )
        assert refusal_of(authenticated(server, bearer("t")))[0] == 503


def test_a_400_refuses_the_token_and_another_status_is_503() -> None:
    for status, expected in ((400, 401), (401, 503), (500, 503)):
        server, fetcher = server_answering({})
        fetcher.answers[ENDPOINT] = status
        assert refusal_of(authenticated(server, bearer("t")))[0] == expected


def test_an_answer_is_kept_no_longer_than_the_token_lives() -> None:
    server, fetcher = server_answering(active(exp=int(time.time()) + 2), cache_seconds=60.0)
    assert isinstance(authenticated(server, bearer("t")), Principal)
    assert isinstance(authenticated(server, bearer("t")), Principal)
    assert len(fetcher.asked) == 1
    entry = next(iter(server.tokens._kept.values()))
    assert entry[1] <= time.time() + 2


def test_no_more_introspections_at_once_than_max_checks() -> None:
    server, fetcher = server_answering(active(), max_checks=2)
    fetcher.delay = 0.05

    async def main() -> list[int]:
        answers = await asyncio.gather(*(server.authenticate(bearer(f"t{n}")) for n in range(5)))
        return [200 if isinstance(a, Principal) else a.status for a in answers]

    assert sorted(run(main())) == [200, 200, 503, 503, 503]
    assert len(fetcher.asked) == 2


def test_the_endpoint_is_found_through_the_issuers_metadata() -> None:
    metadata = {"issuer": ISSUER, "introspection_endpoint": ENDPOINT}
    fetcher = FakeFetcher(
        {
            f"{ISSUER}/.well-known/oauth-authorization-server": json.dumps(metadata).encode(),
            ENDPOINT: json.dumps(active()).encode(),
        }
    )
    verifier = Introspector(
        ISSUER, RESOURCE, client_id="c", client_secret=Secret("s"), fetcher=fetcher
    )
    server = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER])
    for n in range(3):
        assert isinstance(authenticated(server, bearer(f"t{n}")), Principal)
    assert fetcher.asked.count(f"{ISSUER}/.well-known/oauth-authorization-server") == 1


def test_the_secret_comes_from_the_environment_or_a_file_and_is_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_AUTH_CLIENT_SECRET", SECRET)
    assert Secret.from_env("MCP_AUTH_CLIENT_SECRET").reveal() == SECRET
    (tmp_path / "secret").write_text(SECRET + "\n")
    from_file = Secret.from_file(tmp_path / "secret")
    assert from_file.reveal() == SECRET
    with pytest.raises(ValueError, match="MCP_AUTH_UNSET"):
        Secret.from_env("MCP_AUTH_UNSET")
    server, _ = server_answering(active())
    verifier = server.verifier
    shown = " ".join(
        [repr(from_file), str(from_file), repr(verifier), repr(server), repr(vars(verifier))]
    )
    basic = base64.b64encode(f"mcp-server:{quote_plus(SECRET)}".encode()).decode()
    assert SECRET not in shown and basic not in shown
    with pytest.raises(TypeError):
        Introspector(ISSUER, RESOURCE, client_id="c", client_secret=SECRET, endpoint=ENDPOINT)  # type: ignore[arg-type]
